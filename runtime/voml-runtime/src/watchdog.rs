//! Stops runaway VO code: a thread that interrupts the engine when the code for one event
//! runs past its time budget. Arming costs one clock read and one atomic store per event.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use steel::steel_vm::ThreadStateController;

pub struct Watchdog {
    /// Microseconds since `epoch` after which the running code is interrupted; 0 = disarmed.
    deadline: Arc<AtomicU64>,
    fired: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    epoch: Instant,
    budget: Duration,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    pub fn new(controller: ThreadStateController, budget: Duration) -> Watchdog {
        let deadline = Arc::new(AtomicU64::new(0));
        let fired = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let epoch = Instant::now();
        let period = (budget / 10).clamp(Duration::from_millis(1), Duration::from_millis(20));
        let thread = {
            let (deadline, fired, stop) = (deadline.clone(), fired.clone(), stop.clone());
            std::thread::Builder::new()
                .name("voml-watchdog".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::park_timeout(period);
                        let d = deadline.load(Ordering::Acquire);
                        let now = epoch.elapsed().as_micros() as u64;
                        if d != 0
                            && now > d
                            && deadline
                                .compare_exchange(d, 0, Ordering::AcqRel, Ordering::Relaxed)
                                .is_ok()
                        {
                            fired.store(true, Ordering::Release);
                            controller.interrupt();
                        }
                    }
                })
                .ok()
        };
        Watchdog {
            deadline,
            fired,
            stop,
            epoch,
            budget,
            thread,
        }
    }

    /// Starts the budget for one event.
    pub fn arm(&self) {
        let d = Instant::now() + self.budget;
        let micros = d.duration_since(self.epoch).as_micros() as u64;
        self.deadline.store(micros.max(1), Ordering::Release);
    }

    pub fn disarm(&self) {
        self.deadline.store(0, Ordering::Release);
    }

    /// Whether the watchdog interrupted the engine since the last call.
    pub fn take_fired(&self) -> bool {
        self.fired.swap(false, Ordering::AcqRel)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}
