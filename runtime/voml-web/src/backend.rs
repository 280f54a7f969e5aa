//! The engine's side of the page: a [`Backend`] that serialises every command for the
//! [`Hub`], which keeps the history and broadcasts it to the pages, and hands the same
//! commands to a raster thread, whose [`LazyRaster`] keeps the current picture (for
//! snapshots, and for compacting the history that late joiners get). Drawing pixels costs
//! more than serialising a command: on its own thread it runs beside the visual object
//! instead of after it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use voml_llvo::{
    Backend, BackendEvent, Color, Command, DrawCmd, ImageId, LazyRaster, LlvoError, PxRect,
    PxRemap, RgbaPixels, Status, ViewId,
};

use crate::hub::Hub;

/// Serialised commands gathered before they are published to the pages.
const BATCH_BYTES: usize = 64 * 1024;
/// Commands gathered before they go to the raster thread.
const RASTER_BATCH: usize = 256;
/// Batches on their way to the raster thread; beyond them the engine waits for it (memory
/// stays bounded when the visual object draws faster than pixels are painted).
const RASTER_QUEUE: usize = 64;

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

/// What the engine's side asks of the raster thread, in order.
enum Job {
    /// Carry these out.
    Commands(Vec<Command>),
    /// The view's pixels, once everything before is carried out.
    Snapshot {
        view: ViewId,
        reply: SyncSender<Result<RgbaPixels, LlvoError>>,
    },
    /// Replace the history through batch `through` (everything before this job) by what
    /// draws the current picture.
    Compact {
        through: u64,
        surfaces: BTreeMap<ViewId, Surface>,
        images: BTreeMap<ImageId, Arc<str>>,
    },
    /// Say when everything before is done.
    Barrier(SyncSender<()>),
}

/// The web back end: what the LLVO core asks is streamed, as [`Command`] JSON lines, to every
/// connected page, and carried out on a raster of its own on another thread.
pub struct WebBackend {
    stream: Stream,
    hub: Arc<Mutex<Hub>>,
    last_status: Option<Status>,
    /// Commands not yet sent to the raster thread.
    batch: Vec<Command>,
    raster: Option<SyncSender<Job>>,
    thread: Option<JoinHandle<()>>,
    /// A compaction is on its way: no other is asked for meanwhile.
    compacting: Arc<AtomicBool>,
}

impl WebBackend {
    /// A back end publishing to `hub`.
    pub fn new(hub: Arc<Mutex<Hub>>) -> WebBackend {
        let (tx, rx) = mpsc::sync_channel(RASTER_QUEUE);
        let compacting = Arc::new(AtomicBool::new(false));
        let theirs = (hub.clone(), compacting.clone());
        let thread = std::thread::Builder::new()
            .name("voml-web-raster".into())
            .spawn(move || raster(rx, &theirs.0, &theirs.1))
            .ok();
        WebBackend {
            stream: Stream::default(),
            hub,
            last_status: None,
            batch: Vec::with_capacity(RASTER_BATCH),
            // Without its thread the back end still streams; snapshots say why they fail.
            raster: thread.is_some().then_some(tx),
            thread,
            compacting,
        }
    }

    fn hub(&self) -> MutexGuard<'_, Hub> {
        self.hub.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes one command: serialised for the pages (a batch sent once it has gathered), and
    /// queued for the raster. The history is not compacted here: this runs while the visual
    /// object's code draws.
    fn push(&mut self, command: Command) {
        self.stream.take(&command);
        if self.stream.pending.len() >= BATCH_BYTES {
            self.send();
        }
        self.batch.push(command);
        if self.batch.len() >= RASTER_BATCH {
            self.send_to_raster();
        }
    }

    fn send_to_raster(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(RASTER_BATCH));
        self.job(Job::Commands(batch));
    }

    fn job(&mut self, job: Job) {
        let gone = self.raster.as_ref().is_some_and(|tx| tx.send(job).is_err());
        if gone {
            self.raster = None;
        }
    }

    fn send(&mut self) {
        let batch = std::mem::take(&mut self.stream.pending);
        if !batch.is_empty() {
            self.hub().publish(batch);
        }
    }

    /// Sends what is pending to the pages and the history; has the history compacted when
    /// it has outgrown its limit. The driver calls it (through `present`) between records.
    pub fn publish(&mut self) {
        self.send();
        self.send_to_raster();
        if !self.stream.buffering.is_empty() || self.compacting.load(Ordering::SeqCst) {
            return;
        }
        let through = {
            let hub = self.hub();
            if !hub.over_limit() {
                return;
            }
            hub.last_batch()
        };
        self.compacting.store(true, Ordering::SeqCst);
        let job = Job::Compact {
            through,
            surfaces: self.stream.surfaces.clone(),
            images: self.stream.images.clone(),
        };
        self.job(job);
        if self.raster.is_none() {
            self.compacting.store(false, Ordering::SeqCst);
        }
    }

    /// Waits until the raster thread has carried out everything asked of it (a compaction
    /// included).
    pub fn wait_for_raster(&mut self) {
        self.send_to_raster();
        let (reply, done) = mpsc::sync_channel(1);
        self.job(Job::Barrier(reply));
        let _ = done.recv();
    }
}

/// The raster thread: carries the commands out on its raster, in order; answers snapshots;
/// compacts the history.
fn raster(jobs: Receiver<Job>, hub: &Mutex<Hub>, compacting: &AtomicBool) {
    let mut raster = LazyRaster::new();
    for job in jobs {
        match job {
            Job::Commands(commands) => {
                for command in &commands {
                    // The core makes no call a raster refuses; one that were refused would
                    // change nothing.
                    let _ = command.apply(&mut raster);
                }
            }
            Job::Snapshot { view, reply } => {
                let _ = reply.send(raster.snapshot(view));
            }
            Job::Compact {
                through,
                surfaces,
                images,
            } => {
                let lines = compaction(&mut raster, &surfaces, &images);
                hub.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .replace_history_through(through, lines);
                compacting.store(false, Ordering::SeqCst);
            }
            Job::Barrier(reply) => {
                let _ = reply.send(());
            }
        }
    }
}

/// What draws the current picture: each view created, the visual object's images added, and
/// each view's pixels as one image.
fn compaction(
    raster: &mut LazyRaster,
    surfaces: &BTreeMap<ViewId, Surface>,
    images: &BTreeMap<ImageId, Arc<str>>,
) -> String {
    let mut lines = String::new();
    let push = |command: &Command, lines: &mut String| {
        if let Ok(line) = serde_json::to_string(command) {
            lines.push_str(&line);
            lines.push('\n');
        }
    };
    for (view, s) in surfaces {
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
        let Ok(pixels) = raster.snapshot(view) else {
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
    lines
}

impl Backend for WebBackend {
    voml_llvo::calls_as_commands!();

    /// A raster resamples: the answer is yes for every view there is.
    fn remap_area(
        &mut self,
        view: ViewId,
        area: PxRect,
        map: PxRemap,
        fill: Color,
    ) -> Result<bool, LlvoError> {
        self.known(view)?;
        self.push(Command::RemapArea {
            view,
            area,
            map,
            fill,
        });
        Ok(true)
    }

    /// Sends what was drawn to the pages (a page shows it at its next frame: the present is
    /// not streamed, nor carried out on the raster, which paints when a picture is needed).
    fn present(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.known(view)?;
        self.publish();
        Ok(())
    }

    fn snapshot(&mut self, view: ViewId) -> Result<RgbaPixels, LlvoError> {
        self.known(view)?;
        self.send_to_raster();
        let (reply, answer) = mpsc::sync_channel(1);
        self.job(Job::Snapshot { view, reply });
        answer
            .recv()
            .map_err(|_| LlvoError::Backend("the web back end's raster has stopped".into()))?
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

    /// The answer goes to the page that asked, alone, after what was drawn before it: a page
    /// that has the answer has what the run drew until then (a zoom or a pan the page sent
    /// before its command, say).
    fn answer(&mut self, to: u64, outcome: Result<(), &str>) {
        self.publish();
        self.hub().answer(to, outcome);
    }

    fn interactive(&self) -> bool {
        true
    }
}

impl WebBackend {
    /// Streams `command`; one that draws in, resizes or flushes a view the pages were not
    /// told of is refused as a raster refuses it.
    fn take_command(&mut self, command: Command) -> Result<(), LlvoError> {
        match &command {
            Command::ResizeSurface { view, .. }
            | Command::Draw { view, .. }
            | Command::DrawOwned { view, .. }
            | Command::BeginBuffer { view }
            | Command::Flush { view } => self.known(*view)?,
            _ => {}
        }
        self.push(command);
        Ok(())
    }

    /// A view the pages were told of, or the error a raster gives for any other.
    fn known(&self, view: ViewId) -> Result<(), LlvoError> {
        if self.stream.surfaces.contains_key(&view) {
            Ok(())
        } else {
            Err(LlvoError::UnknownView(view))
        }
    }
}

impl Drop for WebBackend {
    fn drop(&mut self) {
        self.send();
        self.send_to_raster();
        // The raster thread ends when its queue closes.
        self.raster = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
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
                        ]
                        .into(),
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
            web.wait_for_raster();
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

    /// What was drawn before a command was answered reaches the page that asked before the
    /// answer does, though nothing was presented between them.
    #[test]
    fn an_answer_comes_after_what_was_drawn_before_it() {
        let hub = Arc::new(Mutex::new(Hub::new(usize::MAX)));
        let mut web = WebBackend::new(hub.clone());
        web.create_surface(ViewId(0), "v", 64, 32, Color::WHITE)
            .unwrap();
        web.present(ViewId(0)).unwrap();
        let (page, (_, inbox)) = hub.lock().unwrap().join_page();
        hub.lock()
            .unwrap()
            .push_command(page, 5, "step".into())
            .unwrap();
        let Some(BackendEvent::Command { from, .. }) = web.poll_events().pop() else {
            panic!("the command is not among the events");
        };
        let clear = DrawCmd::Clear {
            rect: PxRect::new(0, 0, 8, 8),
            color: Color::rgb(200, 10, 10),
        };
        web.draw(ViewId(0), &clear).unwrap();
        web.answer(from, Ok(()));
        let mut lines = Vec::new();
        while let Ok(batch) = inbox.try_recv() {
            lines.extend(batch.lines().map(str::to_string));
        }
        let drawn = lines.iter().position(|l| l.contains("\"op\":\"draw\""));
        let answer = lines.iter().position(|l| l.contains("\"op\":\"answer\""));
        assert!(
            matches!((drawn, answer), (Some(d), Some(a)) if d < a),
            "{lines:?}"
        );
    }

    #[test]
    fn no_compaction_while_a_view_is_buffered() {
        let hub = Arc::new(Mutex::new(Hub::new(1)));
        let mut web = WebBackend::new(hub.clone());
        web.create_surface(ViewId(0), "v", 64, 32, Color::WHITE)
            .unwrap();
        web.begin_buffer(ViewId(0)).unwrap();
        draw_some(&mut web, 5);
        web.wait_for_raster();
        assert_eq!(hub.lock().unwrap().compactions(), 0);
        web.flush(ViewId(0)).unwrap();
        web.present(ViewId(0)).unwrap();
        web.wait_for_raster();
        assert_eq!(hub.lock().unwrap().compactions(), 1);
        let expected = web.snapshot(ViewId(0)).unwrap();
        assert_eq!(joined(&hub).snapshot(ViewId(0)).unwrap(), expected);
    }
}
