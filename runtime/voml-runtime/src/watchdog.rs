//! Stops runaway VO code: a thread that interrupts the engine when the code for one event
//! runs past its time budget, or when the heap the VO's code holds passes its ceiling.
//! Arming costs one clock read and one atomic store per event.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use steel::steel_vm::ThreadStateController;

use crate::memory::Meter;

/// Why the watchdog interrupted the engine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reason {
    /// The time budget ran out.
    Time,
    /// The VO's heap passed its ceiling.
    Memory,
}

pub struct Watchdog {
    /// Microseconds since `epoch` after which the running code is interrupted; 0 = disarmed.
    deadline: Arc<AtomicU64>,
    /// 0: not fired; 1: time; 2: memory.
    fired: Arc<AtomicU8>,
    stop: Arc<AtomicBool>,
    epoch: Instant,
    budget: Duration,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    pub fn new(
        controller: ThreadStateController,
        budget: Duration,
        meter: Meter,
        memory_limit: usize,
    ) -> Watchdog {
        let deadline = Arc::new(AtomicU64::new(0));
        let fired = Arc::new(AtomicU8::new(0));
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
                        if d == 0 {
                            continue;
                        }
                        let now = epoch.elapsed().as_micros() as u64;
                        let reason = if meter.bytes() > memory_limit as isize {
                            2
                        } else if now > d {
                            1
                        } else {
                            continue;
                        };
                        if deadline
                            .compare_exchange(d, 0, Ordering::AcqRel, Ordering::Relaxed)
                            .is_ok()
                        {
                            fired.store(reason, Ordering::Release);
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

    /// Whether (and why) the watchdog interrupted the engine since the last call.
    pub fn take_fired(&self) -> Option<Reason> {
        match self.fired.swap(0, Ordering::AcqRel) {
            1 => Some(Reason::Time),
            2 => Some(Reason::Memory),
            _ => None,
        }
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
