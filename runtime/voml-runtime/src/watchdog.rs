//! Stops runaway VO code: a thread that interrupts the engine when the code for one event
//! runs past its time budget, or when the heap the VO's code holds passes its ceiling.
//!
//! Arming costs one atomic store per event and no clock read: the engine only numbers its
//! events; the watchdog thread, which wakes every tenth of the budget, notices an event number
//! that stays armed for the whole budget. So code is interrupted between one budget and one
//! budget plus a fifth after it started.
//!
//! The budget is the engine thread's CPU time where the system can tell it (Linux), else wall
//! time: on a machine busy with other work, code that waits for a core is not a runaway.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
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
    /// The running event's number shifted left by one, with the low bit set while armed.
    state: Arc<AtomicU64>,
    /// The last event number given out (only the engine's thread arms).
    generation: Cell<u64>,
    /// How many budgets the armed code may take (1 for an event; more to compile a program).
    allowance: Arc<AtomicU32>,
    budget: Duration,
    /// 0: not fired; 1: time; 2: memory.
    fired: Arc<AtomicU8>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    pub fn new(
        controller: ThreadStateController,
        budget: Duration,
        meter: Meter,
        memory_limit: usize,
    ) -> Watchdog {
        let state = Arc::new(AtomicU64::new(0));
        let allowance = Arc::new(AtomicU32::new(1));
        let fired = Arc::new(AtomicU8::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let period = (budget / 10).clamp(Duration::from_millis(1), Duration::from_millis(20));
        // Made on the engine's thread (a runtime never leaves the thread it was made on).
        let clock = Clock::of_this_thread();
        let thread = {
            let (state, fired, stop) = (state.clone(), fired.clone(), stop.clone());
            let allowance = allowance.clone();
            std::thread::Builder::new()
                .name("voml-watchdog".into())
                .spawn(move || {
                    // The armed state last seen, and when (on the clock) it was first seen.
                    let mut seen: Option<(u64, Duration)> = None;
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::park_timeout(period);
                        let s = state.load(Ordering::Acquire);
                        if s & 1 == 0 {
                            seen = None;
                            continue;
                        }
                        let reason = if meter.bytes() > memory_limit as isize {
                            2
                        } else {
                            match seen {
                                Some((was, since)) if was == s => {
                                    // Armed at least this long: never early, at most two
                                    // periods late.
                                    let allowed = budget * allowance.load(Ordering::Relaxed);
                                    if clock.now().saturating_sub(since) < allowed {
                                        continue;
                                    }
                                    1
                                }
                                _ => {
                                    seen = Some((s, clock.now()));
                                    continue;
                                }
                            }
                        };
                        // Disarm first: if the engine has moved on to another event meanwhile,
                        // that event is not interrupted.
                        if state
                            .compare_exchange(s, s & !1, Ordering::AcqRel, Ordering::Relaxed)
                            .is_ok()
                        {
                            fired.store(reason, Ordering::Release);
                            controller.interrupt();
                        }
                        seen = None;
                    }
                })
                .ok()
        };
        Watchdog {
            state,
            generation: Cell::new(0),
            allowance,
            budget,
            fired,
            stop,
            thread,
        }
    }

    /// Starts the budget for one event.
    pub fn arm(&self) {
        self.arm_for(self.budget);
    }

    /// Starts a budget of at least `time` (in whole budgets): compiling a large program takes
    /// longer than any event should.
    pub fn arm_for(&self, time: Duration) {
        let budgets = time.as_secs_f64() / self.budget.as_secs_f64().max(1e-9);
        self.allowance.store(
            budgets.ceil().clamp(1.0, f64::from(u32::MAX)) as u32,
            Ordering::Relaxed,
        );
        let g = self.generation.get().wrapping_add(1);
        self.generation.set(g);
        self.state.store((g << 1) | 1, Ordering::Release);
    }

    pub fn disarm(&self) {
        self.state
            .store(self.generation.get() << 1, Ordering::Release);
    }

    /// Whether the watchdog interrupted the engine since [`Watchdog::take_fired`] last
    /// answered (what native code polls in its loops).
    pub fn has_fired(&self) -> bool {
        self.fired.load(Ordering::Acquire) != 0
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

/// The time an event's code is charged: the CPU time of the thread that made the clock, or
/// the wall clock where that cannot be read.
#[derive(Clone, Copy)]
enum Clock {
    #[cfg(target_os = "linux")]
    ThreadCpu(libc::clockid_t),
    Wall(Instant),
}

impl Clock {
    fn of_this_thread() -> Clock {
        #[cfg(target_os = "linux")]
        {
            let mut id: libc::clockid_t = 0;
            // SAFETY: pthread_self() is the calling thread, alive while it runs; the call
            // only writes the clock id.
            if unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut id) } == 0 {
                let clock = Clock::ThreadCpu(id);
                if clock.read().is_some() {
                    return clock;
                }
            }
        }
        Clock::Wall(Instant::now())
    }

    fn read(&self) -> Option<Duration> {
        match *self {
            #[cfg(target_os = "linux")]
            Clock::ThreadCpu(id) => {
                let mut t = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                // SAFETY: `t` is a valid timespec; a clock whose thread has ended gives an
                // error, not undefined behaviour.
                (unsafe { libc::clock_gettime(id, &mut t) } == 0).then(|| {
                    Duration::new(
                        t.tv_sec.max(0) as u64,
                        t.tv_nsec.clamp(0, 999_999_999) as u32,
                    )
                })
            }
            Clock::Wall(start) => Some(start.elapsed()),
        }
    }

    /// The time now (the last readable time if the thread has ended).
    fn now(&self) -> Duration {
        self.read().unwrap_or(Duration::MAX)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn watchdog(budget: Duration) -> (steel::steel_vm::engine::Engine, Watchdog) {
        let engine = steel::steel_vm::engine::Engine::new_raw_no_kernel();
        let dog = Watchdog::new(
            engine.get_thread_state_controller(),
            budget,
            Meter::new(),
            1 << 40,
        );
        (engine, dog)
    }

    /// Code that runs past its budget is interrupted; on Linux the budget is the thread's CPU
    /// time, so an event whose thread waits (for a core, on a busy machine) is not.
    #[test]
    fn the_budget_is_spent_running() {
        let (_engine, dog) = watchdog(Duration::from_millis(40));
        dog.arm();
        let start = Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(300) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        dog.disarm();
        assert_eq!(
            dog.take_fired(),
            Some(Reason::Time),
            "a busy event was not stopped"
        );
        if cfg!(target_os = "linux") {
            dog.arm();
            std::thread::sleep(Duration::from_millis(300));
            dog.disarm();
            assert_eq!(dog.take_fired(), None, "a waiting event was stopped");
        }
    }
}
