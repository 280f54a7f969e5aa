//! A back end that draws through another back end on a thread of its own: the LLVO's thread
//! hands over the commands that only draw (what a streaming plot sends for every record: its
//! lines and its scrolls) in batches, in order, and goes on; the drawing thread works out
//! their bounds and queues or paints them. Everything else (making and resizing surfaces,
//! undrawing, snapshots, buffers) first waits until the drawing thread has drawn everything
//! handed over, then is done as the wrapped back end does it. The pixels are those of the
//! wrapped back end given the same commands.
//!
//! A command that fails on the drawing thread (which the LLVO's checks before handing a
//! command over leave to a back end's own refusals) is reported by the next call that waits
//! for it, or by [`Threaded::finish`]; the commands after it are still drawn.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::backend::{Backend, BackendEvent, DrawCmd, Mark, PxRemap, RgbaPixels, Status};
use crate::color::Color;
use crate::error::LlvoError;
use crate::geom::PxRect;
use crate::{ImageId, ViewId};

/// Commands handed over at a time: few enough that the drawing thread starts early, enough
/// that handing over costs little per command.
const BATCH: usize = 2048;
/// Batches handed over that may wait for the drawing thread before the LLVO's thread waits
/// too (so that memory stays bounded when drawing is the slower).
const BATCHES_WAITING: usize = 4;

/// See the module documentation.
pub struct Threaded<B: Backend + Send + 'static> {
    shared: Arc<Mutex<Shared<B>>>,
    /// Commands not handed over yet.
    batch: Vec<Job>,
    /// Whether a batch was handed over since the drawing thread last caught up.
    behind: bool,
    to_drawing: Option<SyncSender<Msg>>,
    /// Batches the drawing thread emptied, to fill again.
    spare: Receiver<Vec<Job>>,
    drawing: Option<JoinHandle<()>>,
}

/// The wrapped back end, and the first failure of a command handed over not reported yet.
struct Shared<B> {
    backend: B,
    failed: Option<LlvoError>,
}

/// A command handed over.
enum Job {
    Draw(ViewId, DrawCmd),
    Bounded(ViewId, DrawCmd, PxRect),
    Unbounded(ViewId, DrawCmd),
}

enum Msg {
    Batch(Vec<Job>),
    /// Answered once everything handed over before it is drawn.
    Fence(SyncSender<()>),
}

impl<B: Backend + Send + 'static> Threaded<B> {
    /// `backend`, drawing on a thread of its own.
    pub fn new(backend: B) -> Threaded<B> {
        let shared = Arc::new(Mutex::new(Shared {
            backend,
            failed: None,
        }));
        let (to_drawing, from_core) = sync_channel(BATCHES_WAITING);
        let (give_back, spare) = sync_channel(BATCHES_WAITING + 2);
        let drawing = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("voml-drawing".into())
                .spawn(move || draw_all(&shared, &from_core, &give_back))
                .ok()
        };
        // Without a thread (none could be made), everything is drawn as it comes.
        let to_drawing = drawing.as_ref().map(|_| to_drawing);
        Threaded {
            shared,
            batch: Vec::with_capacity(BATCH),
            behind: false,
            to_drawing,
            spare,
            drawing,
        }
    }

    /// Hands `job` over (drawn at once when there is no drawing thread).
    fn hand_over(&mut self, job: Job) -> Result<(), LlvoError> {
        if self.to_drawing.is_none() {
            let mut shared = lock(&self.shared);
            return job.draw(&mut shared.backend);
        }
        self.batch.push(job);
        if self.batch.len() >= BATCH {
            self.send_batch();
        }
        Ok(())
    }

    fn send_batch(&mut self) {
        let next = self
            .spare
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let jobs = std::mem::replace(&mut self.batch, next);
        if let Some(to) = &self.to_drawing {
            // (A drawing thread that is gone panicked: the next wait reports it.)
            let _ = to.send(Msg::Batch(jobs));
            self.behind = true;
        }
    }

    /// Waits until everything handed over is drawn, and gives the wrapped back end with the
    /// first failure of what was handed over, if any.
    fn caught_up(&mut self) -> (MutexGuard<'_, Shared<B>>, Result<(), LlvoError>) {
        if !self.batch.is_empty() {
            self.send_batch();
        }
        let mut gone = false;
        if self.behind {
            self.behind = false;
            let (done, wait) = sync_channel(1);
            gone = self
                .to_drawing
                .as_ref()
                .is_none_or(|to| to.send(Msg::Fence(done)).is_err())
                || wait.recv().is_err();
        }
        let mut shared = lock(&self.shared);
        let failed = match shared.failed.take() {
            Some(e) => Err(e),
            None if gone => Err(LlvoError::Backend(
                "the drawing thread stopped; what it was given last may be missing".into(),
            )),
            None => Ok(()),
        };
        (shared, failed)
    }

    /// Waits until everything handed over is drawn: the first failure among it, if any.
    pub fn finish(&mut self) -> Result<(), LlvoError> {
        self.caught_up().1
    }

    /// `f` on the wrapped back end once everything handed over is drawn; a failure of what
    /// was handed over comes first.
    fn then<T>(&mut self, f: impl FnOnce(&mut B) -> Result<T, LlvoError>) -> Result<T, LlvoError> {
        let (mut shared, failed) = self.caught_up();
        failed?;
        f(&mut shared.backend)
    }

    /// `f` on the wrapped back end once everything handed over is drawn, for a call that
    /// reports no failure (a failure of what was handed over waits for the next that does).
    fn then_quietly<T>(&mut self, f: impl FnOnce(&mut B) -> T) -> T {
        let (mut shared, failed) = self.caught_up();
        if let Err(e) = failed {
            shared.failed = Some(e);
        }
        f(&mut shared.backend)
    }
}

impl Job {
    fn draw<B: Backend>(self, backend: &mut B) -> Result<(), LlvoError> {
        match self {
            Job::Draw(view, cmd) => backend.draw(view, &cmd),
            Job::Bounded(view, cmd, bounds) => backend.draw_bounded(view, cmd, bounds),
            Job::Unbounded(view, cmd) => backend.draw_unbounded(view, cmd),
        }
    }
}

/// The drawing thread: draws every batch in order, keeping the first failure, and answers
/// every fence.
fn draw_all<B: Backend>(
    shared: &Mutex<Shared<B>>,
    from_core: &Receiver<Msg>,
    give_back: &SyncSender<Vec<Job>>,
) {
    while let Ok(msg) = from_core.recv() {
        match msg {
            Msg::Batch(mut jobs) => {
                let mut guard = lock(shared);
                let Shared { backend, failed } = &mut *guard;
                for job in jobs.drain(..) {
                    if let Err(e) = job.draw(backend) {
                        failed.get_or_insert(e);
                    }
                }
                drop(guard);
                let _ = give_back.try_send(jobs);
            }
            Msg::Fence(done) => {
                let _ = done.send(());
            }
        }
    }
}

/// The shared state, also after a panic on the drawing thread (the failure is reported by
/// the wait that finds the thread gone).
fn lock<B>(shared: &Mutex<Shared<B>>) -> MutexGuard<'_, Shared<B>> {
    shared
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl<B: Backend + Send + 'static> Drop for Threaded<B> {
    fn drop(&mut self) {
        if !self.batch.is_empty() {
            self.send_batch();
        }
        self.to_drawing = None;
        if let Some(drawing) = self.drawing.take() {
            let _ = drawing.join();
        }
    }
}

impl<B: Backend + Send + 'static> Backend for Threaded<B> {
    fn create_surface(
        &mut self,
        view: ViewId,
        title: &str,
        width: u32,
        height: u32,
        background: Color,
    ) -> Result<(), LlvoError> {
        self.then(|b| b.create_surface(view, title, width, height, background))
    }

    fn resize_surface(
        &mut self,
        view: ViewId,
        width: u32,
        height: u32,
        background: Color,
    ) -> Result<(), LlvoError> {
        self.then(|b| b.resize_surface(view, width, height, background))
    }

    fn destroy_surface(&mut self, view: ViewId) {
        self.then_quietly(|b| b.destroy_surface(view));
    }

    fn add_image(&mut self, image: ImageId, pixels: &RgbaPixels) -> Result<(), LlvoError> {
        self.then(|b| b.add_image(image, pixels))
    }

    fn draw(&mut self, view: ViewId, cmd: &DrawCmd) -> Result<(), LlvoError> {
        self.hand_over(Job::Draw(view, cmd.clone()))
    }

    fn draw_bounded(
        &mut self,
        view: ViewId,
        cmd: DrawCmd,
        bounds: PxRect,
    ) -> Result<(), LlvoError> {
        self.hand_over(Job::Bounded(view, cmd, bounds))
    }

    fn bounds_later(&self) -> bool {
        self.to_drawing.is_some()
    }

    fn draw_unbounded(&mut self, view: ViewId, cmd: DrawCmd) -> Result<(), LlvoError> {
        self.hand_over(Job::Unbounded(view, cmd))
    }

    fn draw_owned(&mut self, view: ViewId, mark: Mark, cmd: &DrawCmd) -> Result<(), LlvoError> {
        self.then(|b| b.draw_owned(view, mark, cmd))
    }

    fn undraw(&mut self, mark: Mark, erase: &[(ViewId, DrawCmd)]) -> Result<(), LlvoError> {
        self.then(|b| b.undraw(mark, erase))
    }

    fn remap_area(
        &mut self,
        view: ViewId,
        area: PxRect,
        map: PxRemap,
        fill: Color,
    ) -> Result<bool, LlvoError> {
        self.then(|b| b.remap_area(view, area, map, fill))
    }

    fn begin_buffer(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.then(|b| b.begin_buffer(view))
    }

    fn flush(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.then(|b| b.flush(view))
    }

    fn present(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.then(|b| b.present(view))
    }

    fn snapshot(&mut self, view: ViewId) -> Result<RgbaPixels, LlvoError> {
        self.then(|b| b.snapshot(view))
    }

    fn depth(&self) -> u32 {
        lock(&self.shared).backend.depth()
    }

    fn position(&self, view: ViewId) -> (i32, i32) {
        lock(&self.shared).backend.position(view)
    }

    fn poll_events(&mut self) -> Vec<BackendEvent> {
        lock(&self.shared).backend.poll_events()
    }

    fn status(&mut self, status: &Status) {
        lock(&self.shared).backend.status(status);
    }

    fn answer(&mut self, to: u64, outcome: Result<(), &str>) {
        lock(&self.shared).backend.answer(to, outcome);
    }

    fn interactive(&self) -> bool {
        lock(&self.shared).backend.interactive()
    }
}
