//! The engine's side of the page: a [`Backend`] that draws into its own [`LazyRaster`] (so
//! that snapshots and late joiners have the current picture) through a [`Recorder`], whose
//! copy of every command is serialised for the [`Hub`], which keeps the history and
//! broadcasts it to the pages.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use voml_llvo::{
    Backend, BackendEvent, Color, Command, DrawCmd, ImageId, LazyRaster, LlvoError, Mark, PxRect,
    PxRemap, Recorder, RgbaPixels, Status, ViewId,
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

/// What the recorded commands say that publishing and compacting need.
#[derive(Default)]
struct Stream {
    /// JSON lines not yet published.
    pending: String,
    surfaces: BTreeMap<ViewId, Surface>,
    /// Views between `begin_buffer` and `flush`: the history is not compacted then, since
    /// the raster's picture would be the one before the buffer.
    buffering: Vec<ViewId>,
    /// The visual object's images, as `add-image` lines: a compacted history keeps them,
    /// since later commands may draw them.
    images: BTreeMap<ImageId, Arc<str>>,
}

impl Stream {
    /// Takes one command the recorder tells of. A `present` is not streamed (a page shows
    /// what it has drawn at its next animation frame); the status is sent apart.
    fn take(&mut self, command: &Command) {
        match command {
            Command::Present { .. } | Command::Status { .. } => return,
            Command::CreateSurface {
                view,
                title,
                width,
                height,
                background,
            } => {
                self.surfaces.insert(
                    *view,
                    Surface {
                        title: title.clone(),
                        width: *width,
                        height: *height,
                        background: *background,
                    },
                );
            }
            Command::ResizeSurface {
                view,
                width,
                height,
                background,
            } => {
                if let Some(s) = self.surfaces.get_mut(view) {
                    s.width = *width;
                    s.height = *height;
                    s.background = *background;
                }
            }
            Command::DestroySurface { view } => {
                self.surfaces.remove(view);
                self.buffering.retain(|v| v != view);
            }
            Command::BeginBuffer { view } if !self.buffering.contains(view) => {
                self.buffering.push(*view);
            }
            Command::Flush { view } => self.buffering.retain(|v| v != view),
            _ => {}
        }
        let Ok(line) = serde_json::to_string(command) else {
            return;
        };
        if let Command::AddImage { image, .. } = command {
            self.images.insert(*image, Arc::from(line.as_str()));
        }
        self.pending.push_str(&line);
        self.pending.push('\n');
    }
}

/// The web back end: what the LLVO core asks is carried out on a raster here and streamed,
/// as [`Command`] JSON lines, to every connected page.
pub struct WebBackend {
    recorder: Recorder<LazyRaster>,
    stream: Rc<RefCell<Stream>>,
    hub: Arc<Mutex<Hub>>,
    last_status: Option<Status>,
}

impl WebBackend {
    /// A back end publishing to `hub`.
    pub fn new(hub: Arc<Mutex<Hub>>) -> WebBackend {
        let stream = Rc::new(RefCell::new(Stream::default()));
        let taken = stream.clone();
        WebBackend {
            recorder: Recorder::new(LazyRaster::new(), move |command| {
                taken.borrow_mut().take(command)
            }),
            stream,
            hub,
            last_status: None,
        }
    }

    fn hub(&self) -> MutexGuard<'_, Hub> {
        self.hub.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends a batch once it has gathered; hands `result` on. The history is not compacted
    /// here: this runs while the visual object's code draws, and compacting (the pictures
    /// encoded again) would be charged to the code's time budget.
    fn then<T>(&mut self, result: T) -> T {
        if self.stream.borrow().pending.len() >= BATCH_BYTES {
            self.send();
        }
        result
    }

    fn send(&mut self) {
        let batch = std::mem::take(&mut self.stream.borrow_mut().pending);
        if !batch.is_empty() {
            self.hub().publish(batch);
        }
    }

    /// Sends what is pending to the pages and the history; compacts the history when it has
    /// outgrown its limit. The driver calls it (through `present`) between records.
    pub fn publish(&mut self) {
        self.send();
        if self.stream.borrow().buffering.is_empty() && self.hub().over_limit() {
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
        let (surfaces, images) = {
            let stream = self.stream.borrow();
            (stream.surfaces.clone(), stream.images.clone())
        };
        for (view, s) in &surfaces {
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
        for line in images.values() {
            lines.push_str(line);
            lines.push('\n');
        }
        for &view in surfaces.keys() {
            // (The raster's own snapshot: a snapshot is not a command.)
            let Ok(pixels) = self.recorder.snapshot(view) else {
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
        let r = self
            .recorder
            .create_surface(view, title, width, height, background);
        self.then(r)
    }

    fn resize_surface(
        &mut self,
        view: ViewId,
        width: u32,
        height: u32,
        background: Color,
    ) -> Result<(), LlvoError> {
        let r = self
            .recorder
            .resize_surface(view, width, height, background);
        self.then(r)
    }

    fn destroy_surface(&mut self, view: ViewId) {
        self.recorder.destroy_surface(view);
        self.then(())
    }

    fn add_image(&mut self, image: ImageId, pixels: &RgbaPixels) -> Result<(), LlvoError> {
        let r = self.recorder.add_image(image, pixels);
        self.then(r)
    }

    fn draw(&mut self, view: ViewId, cmd: &DrawCmd) -> Result<(), LlvoError> {
        let r = self.recorder.draw(view, cmd);
        self.then(r)
    }

    fn draw_owned(&mut self, view: ViewId, mark: Mark, cmd: &DrawCmd) -> Result<(), LlvoError> {
        let r = self.recorder.draw_owned(view, mark, cmd);
        self.then(r)
    }

    fn undraw(&mut self, mark: Mark, erase: &[(ViewId, DrawCmd)]) -> Result<(), LlvoError> {
        let r = self.recorder.undraw(mark, erase);
        self.then(r)
    }

    fn remap_area(
        &mut self,
        view: ViewId,
        area: PxRect,
        map: PxRemap,
        fill: Color,
    ) -> Result<bool, LlvoError> {
        let r = self.recorder.remap_area(view, area, map, fill);
        self.then(r)
    }

    fn begin_buffer(&mut self, view: ViewId) -> Result<(), LlvoError> {
        let r = self.recorder.begin_buffer(view);
        self.then(r)
    }

    fn flush(&mut self, view: ViewId) -> Result<(), LlvoError> {
        let r = self.recorder.flush(view);
        self.then(r)
    }

    /// Sends what was drawn to the pages.
    fn present(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.recorder.present(view)?;
        self.publish();
        Ok(())
    }

    fn snapshot(&mut self, view: ViewId) -> Result<RgbaPixels, LlvoError> {
        self.recorder.snapshot(view)
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

    /// The answer goes to the page that asked, alone.
    fn answer(&mut self, to: u64, outcome: Result<(), &str>) {
        self.hub().answer(to, outcome);
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
