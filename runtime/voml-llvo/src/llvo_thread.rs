//! An LLVO working on a thread of its own: the thread that runs the visual object hands over
//! the lines a streaming plot draws for every record (adapting the view, the line's pixel
//! column, lowering and drawing them are the LLVO's thread's work), in batches, in order, and
//! goes on. Everything else reaches the LLVO itself ([`LlvoThread::llvo`]) once everything
//! handed over is drawn, so that every call sees the views as if each line had been drawn
//! when it was asked for.
//!
//! Only lines that can neither fail nor be reported are handed over: solid lines of a style
//! drawn as given ([`Style::draws_as_given`]), with ends of an ordinary size
//! ([`ORDINARY`]), in a view and by an owner that keep nothing of them
//! ([`Llvo::draws_lines_unkept`], asked again after anything else reached the LLVO). Every
//! other primitive is drawn at once, with its errors and warnings where they belong. A
//! failure of the back end while it draws what was handed over (which the LLVO's checks leave
//! to a back end's own refusals) is reported by the next [`LlvoThread::draw`] drawn at once or
//! by [`LlvoThread::take_failure`]. The pixels are those of the LLVO given the same calls.

use std::cell::{Cell, RefCell};
use std::ops::{Deref, DerefMut};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::backend::Backend;
use crate::error::LlvoError;
use crate::geom::Point;
use crate::llvo::{Llvo, ORDINARY};
use crate::primitive::{Primitive, Style};
use crate::{OwnerId, ViewId};

/// Lines handed over at a time: few enough that the LLVO's thread starts early, enough that
/// handing over costs little per line.
const BATCH: usize = 1024;
/// Batches handed over that may wait for the LLVO's thread before the handing thread waits
/// too (so that memory stays bounded when drawing is the slower).
const BATCHES_WAITING: usize = 4;

/// See the module documentation.
pub struct LlvoThread<B: Backend + 'static> {
    shared: Arc<Mutex<Shared<B>>>,
    /// What is not handed over yet.
    batch: RefCell<Vec<Job>>,
    /// Whether a batch was handed over since the LLVO's thread last caught up.
    behind: Cell<bool>,
    /// Whether anything reached the LLVO since warnings were last taken.
    reached: Cell<bool>,
    /// The views and owners whose lines are handed over, found since anything else last
    /// reached the LLVO.
    unkept: RefCell<Vec<(ViewId, OwnerId)>>,
    /// Lines handed over, and times the caller waited for the LLVO's thread.
    handed_over: Cell<u64>,
    waits: Cell<u64>,
    to_thread: Option<SyncSender<Msg>>,
    /// Whether the LLVO's thread was found gone (it panicked): from then on everything is
    /// drawn at once, on the caller's thread.
    gone: Cell<bool>,
    /// Batches the LLVO's thread emptied, to fill again.
    spare: Receiver<Vec<Job>>,
    thread: Option<JoinHandle<()>>,
}

/// The LLVO, and the first failure in drawing what was handed over, not reported yet.
struct Shared<B: Backend> {
    llvo: Llvo<B>,
    failed: Option<LlvoError>,
}

/// What is handed over.
enum Job {
    Line(Line),
    /// [`Llvo::begin_frame`].
    BeginFrame(OwnerId),
    /// [`LlvoThread::then`].
    Call(Box<dyn FnOnce() + Send>),
}

/// A line handed over.
struct Line {
    view: ViewId,
    owner: OwnerId,
    from: Point,
    to: Point,
    style: Style,
}

enum Msg {
    Batch(Vec<Job>),
    /// Answered once everything handed over before it is drawn.
    Fence(SyncSender<()>),
}

/// The LLVO, reached once everything handed over is drawn (see [`LlvoThread::llvo`]).
pub struct Reached<'a, B: Backend> {
    guard: MutexGuard<'a, Shared<B>>,
}

impl<B: Backend> Deref for Reached<'_, B> {
    type Target = Llvo<B>;
    fn deref(&self) -> &Llvo<B> {
        &self.guard.llvo
    }
}

/// The LLVO to read, once everything handed over is drawn (see [`LlvoThread::read`]).
pub struct Read<'a, B: Backend> {
    guard: MutexGuard<'a, Shared<B>>,
}

impl<B: Backend> Deref for Read<'_, B> {
    type Target = Llvo<B>;
    fn deref(&self) -> &Llvo<B> {
        &self.guard.llvo
    }
}

impl<B: Backend> DerefMut for Reached<'_, B> {
    fn deref_mut(&mut self) -> &mut Llvo<B> {
        &mut self.guard.llvo
    }
}

impl<B: Backend + 'static> LlvoThread<B> {
    /// `llvo`, working on a thread of its own (or on the caller's, when no thread can be
    /// made).
    pub fn new(llvo: Llvo<B>) -> LlvoThread<B> {
        let shared = Arc::new(Mutex::new(Shared { llvo, failed: None }));
        let (to_thread, from_caller) = sync_channel(BATCHES_WAITING);
        let (give_back, spare) = sync_channel(BATCHES_WAITING + 2);
        let thread = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("voml-llvo".into())
                .spawn(move || draw_all(&shared, &from_caller, &give_back))
                .ok()
        };
        LlvoThread {
            shared,
            batch: RefCell::new(Vec::with_capacity(BATCH)),
            behind: Cell::new(false),
            reached: Cell::new(false),
            unkept: RefCell::new(Vec::new()),
            handed_over: Cell::new(0),
            waits: Cell::new(0),
            to_thread: thread.as_ref().map(|_| to_thread),
            gone: Cell::new(false),
            spare,
            thread,
        }
    }

    /// The LLVO, once everything handed over is drawn: whatever is asked of it now sees
    /// every line drawn before.
    pub fn llvo(&self) -> Reached<'_, B> {
        self.unkept.borrow_mut().clear();
        self.reach()
    }

    /// The LLVO to read, once everything handed over is drawn: as [`LlvoThread::llvo`], for
    /// what changes nothing (the views and owners whose lines are handed over stay known).
    pub fn read(&self) -> Read<'_, B> {
        self.catch_up();
        Read {
            guard: lock(&self.shared),
        }
    }

    fn reach(&self) -> Reached<'_, B> {
        self.catch_up();
        self.reached.set(true);
        Reached {
            guard: lock(&self.shared),
        }
    }

    /// Whether lines can be handed over: there is a thread to draw them.
    fn draws_away(&self) -> bool {
        self.to_thread.is_some() && !self.gone.get()
    }

    /// Waits until everything handed over is drawn.
    pub fn catch_up(&self) {
        if !self.batch.borrow().is_empty() {
            self.send_batch();
        }
        if !self.behind.replace(false) {
            return;
        }
        self.waits.set(self.waits.get() + 1);
        let (done, wait) = sync_channel(1);
        let answered = self
            .to_thread
            .as_ref()
            .is_some_and(|to| to.send(Msg::Fence(done)).is_ok())
            && wait.recv().is_ok();
        if !answered {
            self.gone.set(true);
            self.unkept.borrow_mut().clear();
            lock(&self.shared).failed.get_or_insert_with(|| {
                LlvoError::Backend(
                    "the drawing layer's thread stopped; what it was given last may be missing"
                        .into(),
                )
            });
        }
    }

    fn send_batch(&self) {
        let next = self
            .spare
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let jobs = std::mem::replace(&mut *self.batch.borrow_mut(), next);
        if let Some(to) = &self.to_thread {
            // (A thread that is gone panicked: the next wait reports it.)
            let _ = to.send(Msg::Batch(jobs));
            self.behind.set(true);
        }
    }

    fn hand_over(&self, job: Job) {
        let mut batch = self.batch.borrow_mut();
        batch.push(job);
        let full = batch.len() >= BATCH;
        drop(batch);
        if full {
            self.send_batch();
        }
    }

    /// [`Llvo::begin_frame`]: handed over for an owner whose lines are.
    pub fn begin_frame(&self, owner: OwnerId) -> Result<(), LlvoError> {
        if self.unkept.borrow().iter().any(|&(_, o)| o == owner) {
            self.hand_over(Job::BeginFrame(owner));
            return Ok(());
        }
        self.llvo().begin_frame(owner)
    }

    /// [`Llvo::draw`]: a line that can be is handed over; anything else is drawn at once,
    /// after what was handed over, and a failure in drawing that comes first.
    pub fn draw(
        &self,
        view: ViewId,
        owner: OwnerId,
        prim: &Primitive,
        style: &Style,
    ) -> Result<(), LlvoError> {
        if let Primitive::Line { from, to } = prim {
            if ordinary(from)
                && ordinary(to)
                && style.draws_as_given()
                && self.unkept.borrow().contains(&(view, owner))
            {
                self.handed_over.set(self.handed_over.get() + 1);
                self.hand_over(Job::Line(Line {
                    view,
                    owner,
                    from: *from,
                    to: *to,
                    style: style.clone(),
                }));
                return Ok(());
            }
        }
        let mut reached = self.reach();
        if let Some(e) = reached.guard.failed.take() {
            return Err(e);
        }
        let drawn = reached.draw(view, owner, prim, style);
        if drawn.is_ok()
            && self.draws_away()
            && matches!(prim, Primitive::Line { .. })
            && reached.draws_lines_unkept(view, owner)
        {
            self.unkept.borrow_mut().push((view, owner));
        }
        drawn
    }

    /// Calls `f` once everything handed over before is drawn, on the LLVO's thread (at once
    /// when nothing waits to be drawn): for what follows the drawing from the side, as a
    /// recording of the back end's commands marks its moments.
    pub fn then(&self, f: impl FnOnce() + Send + 'static) {
        if !self.draws_away() || (!self.behind.get() && self.batch.borrow().is_empty()) {
            f();
        } else {
            self.hand_over(Job::Call(Box::new(f)));
        }
    }

    /// Lines handed over so far.
    pub fn handed_over(&self) -> u64 {
        self.handed_over.get()
    }

    /// Times the caller waited for the LLVO's thread to draw what was handed over (to reach
    /// the LLVO, or for a failure).
    pub fn waits(&self) -> u64 {
        self.waits.get()
    }

    /// [`Llvo::take_warnings`], without waiting for what was handed over (which warns of
    /// nothing).
    pub fn take_warnings(&self) -> Vec<LlvoError> {
        if !self.reached.replace(false) {
            return Vec::new();
        }
        lock(&self.shared).llvo.take_warnings()
    }

    /// The first failure in drawing what was handed over, once it is all drawn.
    pub fn take_failure(&self) -> Option<LlvoError> {
        self.catch_up();
        lock(&self.shared).failed.take()
    }

    /// Hands over what is left and waits for the LLVO's thread to end.
    fn stop(&mut self) {
        if !self.batch.borrow().is_empty() {
            self.send_batch();
        }
        self.to_thread = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Whether a point is of an ordinary size (see [`ORDINARY`]).
fn ordinary(p: &Point) -> bool {
    p.x.abs() <= ORDINARY && p.y.abs() <= ORDINARY
}

/// The LLVO's thread: draws every batch in order, keeping the first failure, and answers
/// every fence.
fn draw_all<B: Backend>(
    shared: &Mutex<Shared<B>>,
    from_caller: &Receiver<Msg>,
    give_back: &SyncSender<Vec<Job>>,
) {
    while let Ok(msg) = from_caller.recv() {
        match msg {
            Msg::Batch(mut jobs) => {
                let mut guard = lock(shared);
                let Shared { llvo, failed } = &mut *guard;
                for job in jobs.drain(..) {
                    let done = match job {
                        Job::Line(l) => {
                            let prim = Primitive::Line {
                                from: l.from,
                                to: l.to,
                            };
                            llvo.draw(l.view, l.owner, &prim, &l.style)
                        }
                        Job::BeginFrame(owner) => llvo.begin_frame(owner),
                        Job::Call(f) => {
                            f();
                            Ok(())
                        }
                    };
                    if let Err(e) = done {
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

/// The shared state, also after a panic on the LLVO's thread (the failure is reported by the
/// wait that finds the thread gone).
fn lock<B: Backend>(shared: &Mutex<Shared<B>>) -> MutexGuard<'_, Shared<B>> {
    shared
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl<B: Backend + 'static> Drop for LlvoThread<B> {
    fn drop(&mut self) {
        self.stop();
    }
}
