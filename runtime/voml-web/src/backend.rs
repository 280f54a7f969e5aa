//! The engine's side of the page: a [`Backend`] that draws into its own [`LazyRaster`] (so
//! that snapshots and late joiners have the current picture) and hands a serialised copy of
//! every command to the [`Hub`], which keeps the history and broadcasts it to the pages.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use voml_llvo::{
    Backend, BackendEvent, Color, Command, DrawCmd, ImageId, LazyRaster, LlvoError, Mark, PxRect,
    PxRemap, RgbaPixels, Status, ViewId,
};

use crate::hub::Hub;

/// Serialised commands gathered before they are published to the pages.
const BATCH_BYTES: usize = 64 * 1024;

/// The image ids a compaction uses for the views' pictures: from the top of the range,
/// far from the visual object's own (counted from 0).
fn picture_image(view: ViewId) -> ImageId {
    ImageId(u32::MAX - view.0)
}

/// A view as the page created it.
#[derive(Clone)]
struct Surface {
    title: String,
    width: u32,
    height: u32,
    background: Color,
}

/// The web back end: what the LLVO core asks is carried out on a raster here and streamed,
/// as [`Command`] JSON lines, to every connected page.
pub struct WebBackend {
    raster: LazyRaster,
    hub: Arc<Mutex<Hub>>,
    /// JSON lines not yet published.
    pending: String,
    surfaces: BTreeMap<ViewId, Surface>,
    /// Views between `begin_buffer` and `flush`: the history is not compacted then, since
    /// the raster's picture would be the one before the buffer.
    buffering: Vec<ViewId>,
    /// The visual object's images, as `add-image` lines: a compacted history keeps them,
    /// since later commands may draw them.
    images: BTreeMap<ImageId, Arc<str>>,
    last_status: Option<Status>,
}

impl WebBackend {
    /// A back end publishing to `hub`.
    pub fn new(hub: Arc<Mutex<Hub>>) -> WebBackend {
        WebBackend {
            raster: LazyRaster::new(),
            hub,
            pending: String::new(),
            surfaces: BTreeMap::new(),
            buffering: Vec::new(),
            images: BTreeMap::new(),
            last_status: None,
        }
    }

    fn hub(&self) -> MutexGuard<'_, Hub> {
        self.hub.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn record(&mut self, command: &Command) {
        let Ok(line) = serde_json::to_string(command) else {
            return;
        };
        if let Command::AddImage { image, .. } = command {
            self.images.insert(*image, Arc::from(line.as_str()));
        }
        self.pending.push_str(&line);
        self.pending.push('\n');
        if self.pending.len() >= BATCH_BYTES {
            self.publish();
        }
    }

    /// Sends what is pending to the pages and the history; compacts the history when it has
    /// outgrown its limit.
    pub fn publish(&mut self) {
        if !self.pending.is_empty() {
            let batch = std::mem::take(&mut self.pending);
            self.hub().publish(batch);
        }
        if self.buffering.is_empty() && self.hub().over_limit() {
            self.compact();
        }
    }

    /// Replaces the history by what draws the current picture: each view created, the
    /// visual object's images added, and each view's pixels as one image.
    fn compact(&mut self) {
        let mut lines = String::new();
        let push = |command: &Command, lines: &mut String| {
            if let Ok(line) = serde_json::to_string(command) {
                lines.push_str(&line);
                lines.push('\n');
            }
        };
        for (view, s) in &self.surfaces {
            push(
                &Command::CreateSurface {
                    view: *view,
                    title: s.title.clone(),
                    width: s.width,
                    height: s.height,
                    background: s.background,
                },
                &mut lines,
            );
        }
        for line in self.images.values() {
            lines.push_str(line);
            lines.push('\n');
        }
        let views: Vec<ViewId> = self.surfaces.keys().copied().collect();
        for view in views {
            let Ok(pixels) = self.raster.snapshot(view) else {
                continue;
            };
            let (w, h) = (pixels.width, pixels.height);
            let image = picture_image(view);
            push(&Command::AddImage { image, pixels }, &mut lines);
            push(
                &Command::Draw {
                    view,
                    cmd: DrawCmd::Image {
                        image,
                        src: [0.0, 0.0, w as f32, h as f32],
                        dst: [0.0, 0.0, w as f32, h as f32],
                        alpha: 1.0,
                        clip: PxRect::new(0, 0, w, h),
                    },
                },
                &mut lines,
            );
        }
        self.hub().replace_history(lines);
    }
}

impl Backend for WebBackend {
    fn create_surface(
        &mut self,
        view: ViewId,
        title: &str,
        width: u32,
        height: u32,
        background: Color,
    ) -> Result<(), LlvoError> {
        self.raster
            .create_surface(view, title, width, height, background)?;
        self.surfaces.insert(
            view,
            Surface {
                title: title.to_string(),
                width,
                height,
                background,
            },
        );
        self.record(&Command::CreateSurface {
            view,
            title: title.to_string(),
            width,
            height,
            background,
        });
        Ok(())
    }

    fn resize_surface(
        &mut self,
        view: ViewId,
        width: u32,
        height: u32,
        background: Color,
    ) -> Result<(), LlvoError> {
        self.raster
            .resize_surface(view, width, height, background)?;
        if let Some(s) = self.surfaces.get_mut(&view) {
            s.width = width;
            s.height = height;
            s.background = background;
        }
        self.record(&Command::ResizeSurface {
            view,
            width,
            height,
            background,
        });
        Ok(())
    }

    fn destroy_surface(&mut self, view: ViewId) {
        self.raster.destroy_surface(view);
        self.surfaces.remove(&view);
        self.buffering.retain(|v| *v != view);
        self.record(&Command::DestroySurface { view });
    }

    fn add_image(&mut self, image: ImageId, pixels: &RgbaPixels) -> Result<(), LlvoError> {
        self.raster.add_image(image, pixels)?;
        self.record(&Command::AddImage {
            image,
            pixels: pixels.clone(),
        });
        Ok(())
    }

    fn draw(&mut self, view: ViewId, cmd: &DrawCmd) -> Result<(), LlvoError> {
        self.raster.draw(view, cmd)?;
        self.record(&Command::Draw {
            view,
            cmd: cmd.clone(),
        });
        Ok(())
    }

    fn draw_owned(&mut self, view: ViewId, mark: Mark, cmd: &DrawCmd) -> Result<(), LlvoError> {
        self.raster.draw_owned(view, mark, cmd)?;
        self.record(&Command::DrawOwned {
            view,
            mark,
            cmd: cmd.clone(),
        });
        Ok(())
    }

    fn undraw(&mut self, mark: Mark, erase: &[(ViewId, DrawCmd)]) -> Result<(), LlvoError> {
        self.raster.undraw(mark, erase)?;
        self.record(&Command::Undraw {
            mark,
            erase: erase.to_vec(),
        });
        Ok(())
    }

    fn remap_area(
        &mut self,
        view: ViewId,
        area: PxRect,
        map: PxRemap,
        fill: Color,
    ) -> Result<bool, LlvoError> {
        let done = self.raster.remap_area(view, area, map, fill)?;
        if done {
            self.record(&Command::RemapArea {
                view,
                area,
                map,
                fill,
            });
        }
        Ok(done)
    }

    fn begin_buffer(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.raster.begin_buffer(view)?;
        if !self.buffering.contains(&view) {
            self.buffering.push(view);
        }
        self.record(&Command::BeginBuffer { view });
        Ok(())
    }

    fn flush(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.raster.flush(view)?;
        self.buffering.retain(|v| *v != view);
        self.record(&Command::Flush { view });
        Ok(())
    }

    /// Sends what was drawn to the pages (a `present` is not itself streamed: a page shows
    /// what it has drawn at its next animation frame).
    fn present(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.raster.present(view)?;
        self.publish();
        Ok(())
    }

    fn snapshot(&mut self, view: ViewId) -> Result<RgbaPixels, LlvoError> {
        self.raster.snapshot(view)
    }

    fn poll_events(&mut self) -> Vec<BackendEvent> {
        self.hub().take_events()
    }

    /// The status goes to the pages when it changes; the hub keeps the latest for pages
    /// that join later, outside the history.
    fn status(&mut self, status: &Status) {
        if self.last_status.as_ref() == Some(status) {
            return;
        }
        self.last_status = Some(status.clone());
        self.publish();
        if let Ok(line) = serde_json::to_string(&Command::Status {
            status: status.clone(),
        }) {
            self.hub().set_status(line);
        }
    }

    fn interactive(&self) -> bool {
        true
    }
}

impl Drop for WebBackend {
    fn drop(&mut self) {
        self.publish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use voml_llvo::{PaintMode, PathSeg, PxPath, RasterBackend};

    /// Carries out the lines a page would get on joining now.
    fn joined(hub: &Arc<Mutex<Hub>>) -> RasterBackend {
        let (first, _rx) = hub.lock().unwrap().join();
        let mut raster = RasterBackend::new();
        for batch in first {
            for line in batch.lines() {
                let command: Command = serde_json::from_str(line).unwrap();
                command.apply(&mut raster).unwrap();
            }
        }
        raster
    }

    fn draw_some(web: &mut WebBackend, n: u32) {
        let view = ViewId(0);
        for i in 0..n {
            let x = (i * 7 % 50) as f32;
            web.draw(
                view,
                &DrawCmd::Fill {
                    path: PxPath {
                        segs: vec![
                            PathSeg::MoveTo(x, 3.0),
                            PathSeg::LineTo(x + 9.5, 20.25),
                            PathSeg::LineTo(x + 2.0, 28.0),
                            PathSeg::Close,
                        ],
                    },
                    color: Color::rgba((i * 40 % 256) as u8, 90, 200, 180),
                    clip: PxRect::new(0, 0, 64, 32),
                    mode: PaintMode::Blend,
                },
            )
            .unwrap();
            web.present(view).unwrap();
        }
    }

    #[test]
    fn a_late_joiner_gets_the_current_picture_from_a_compacted_history() {
        for limit in [usize::MAX, 2048] {
            let hub = Arc::new(Mutex::new(Hub::new(limit)));
            let mut web = WebBackend::new(hub.clone());
            web.create_surface(ViewId(0), "v", 64, 32, Color::rgb(250, 250, 240))
                .unwrap();
            web.add_image(
                ImageId(0),
                &RgbaPixels {
                    width: 2,
                    height: 1,
                    data: vec![255, 0, 0, 255, 0, 0, 255, 128],
                },
            )
            .unwrap();
            draw_some(&mut web, 200);
            let compactions = hub.lock().unwrap().compactions();
            if limit == usize::MAX {
                assert_eq!(compactions, 0);
            } else {
                assert!(compactions > 0, "the history was never compacted");
                assert!(hub.lock().unwrap().history_bytes() <= 2 * limit.max(20_000));
            }
            let expected = web.snapshot(ViewId(0)).unwrap();
            let got = joined(&hub).snapshot(ViewId(0)).unwrap();
            assert_eq!(expected, got, "limit {limit}");
            // The visual object's own image is still there for what comes next.
            let text = hub.lock().unwrap().join().0.concat();
            assert!(text.contains("\"op\":\"add-image\",\"image\":0"), "{limit}");
        }
    }

    #[test]
    fn no_compaction_while_a_view_is_buffered() {
        let hub = Arc::new(Mutex::new(Hub::new(1)));
        let mut web = WebBackend::new(hub.clone());
        web.create_surface(ViewId(0), "v", 64, 32, Color::WHITE)
            .unwrap();
        web.begin_buffer(ViewId(0)).unwrap();
        draw_some(&mut web, 5);
        assert_eq!(hub.lock().unwrap().compactions(), 0);
        web.flush(ViewId(0)).unwrap();
        web.present(ViewId(0)).unwrap();
        assert_eq!(hub.lock().unwrap().compactions(), 1);
        let expected = web.snapshot(ViewId(0)).unwrap();
        assert_eq!(joined(&hub).snapshot(ViewId(0)).unwrap(), expected);
    }
}
