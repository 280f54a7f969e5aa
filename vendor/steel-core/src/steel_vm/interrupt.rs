use std::sync::{
    atomic::{AtomicBool, Ordering},
    Arc,
};

use crate::steel_vm::{engine::Engine, ThreadStateController};
use crate::time::Duration;

pub struct InterruptHandler {
    controller: ThreadStateController,
    running: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<()>,
    done: crossbeam_channel::Sender<()>,
    dropped: Arc<AtomicBool>,
}

impl Drop for InterruptHandler {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::Relaxed);
    }
}

impl InterruptHandler {
    pub fn new(engine: &mut Engine, timeout: Duration) -> Self {
        let controller = engine.get_thread_state_controller();
        let running = Arc::new(AtomicBool::new(false));

        let controller_clone = controller.clone();
        let running_clone = running.clone();
        let dropped = Arc::new(AtomicBool::new(false));

        let dropped_clone = dropped.clone();

        let (sender, receiver) = crossbeam_channel::bounded::<()>(16);

        let thread_handle = std::thread::spawn(move || {
            let controller = controller_clone;
            let running = running_clone;
            let dropped = dropped_clone;

            while !dropped.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::park();

                while running.load(std::sync::atomic::Ordering::Relaxed) {
                    // Either, sleep or receive event. Whichever comes first.
                    match receiver.recv_timeout(timeout) {
                        Ok(_) => {}
                        Err(_) => {
                            controller.interrupt();
                            while receiver.try_recv().is_ok() {
                                // Drain the messages
                                // for the next batch
                            }
                        }
                    }

                    break;
                }
            }
        });

        Self {
            controller,
            running,
            handle: thread_handle,
            done: sender,
            dropped,
        }
    }

    pub fn run_with_timeout<F, R>(&self, f: F) -> R
    where
        F: FnOnce() -> R,
    {
        let handler = self;
        handler
            .running
            .store(true, std::sync::atomic::Ordering::Relaxed);

        handler.handle.thread().unpark();

        let res = (f)();

        self.done.send(()).unwrap();

        handler.controller.resume();
        handler
            .running
            .store(false, std::sync::atomic::Ordering::Relaxed);

        res
    }
}

#[test]
fn check_engine_timeout_infinite_loop() {
    let mut engine = Engine::new();

    let interrupt_handler = InterruptHandler::new(&mut engine, Duration::from_millis(500));

    let res = interrupt_handler.run_with_timeout(|| {
        engine.run(
            r#"

(define (loop)
    (loop))
(loop)
            "#,
        )
    });

    assert!(res.is_err());
}

#[test]
fn check_engine_does_not_timeout() {
    let mut engine = Engine::new();

    let interrupt_handler = InterruptHandler::new(&mut engine, Duration::from_millis(500));

    let res = interrupt_handler.run_with_timeout(|| {
        engine.run(
            r#"
            (list 10 20 30 40)
            "#,
        )
    });

    assert!(res.is_ok());
}
