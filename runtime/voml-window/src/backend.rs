//! The engine's side of the windows: a [`Backend`] that sends the LLVO core's commands to the
//! window thread, which draws them into its own surfaces, and hands back what the user did.
//!
//! Commands travel in batches through a bounded channel: when the windows cannot keep up,
//! the engine waits rather than piling up pictures nobody will see.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError};
use std::sync::Arc;
use std::time::Duration;

use voml_llvo::{
    Backend, BackendEvent, Color, Command, LlvoError, PxRect, PxRemap, RgbaPixels, Status, ViewId,
};
use winit::event_loop::EventLoopProxy;

/// Commands gathered before they are sent to the windows.
const BATCH: usize = 2048;
/// Batches on their way before the engine waits.
pub(crate) const IN_FLIGHT: usize = 64;
/// How long a snapshot may take the window thread before it counts as failed.
const SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(20);

/// A message to the window thread.
pub(crate) enum ToUi {
    /// Commands to carry out in order.
    Commands(Vec<Command>),
    /// The pixels of a view, as the windows have drawn them so far.
    Snapshot {
        view: ViewId,
        reply: SyncSender<Result<RgbaPixels, LlvoError>>,
    },
}

/// The user event that tells the event loop to look at its channel.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wake;

/// The native windows, as a back end of the low-level layer. [`crate::run`] gives one to the
/// engine's thread; each surface the core creates opens a window.
pub struct WindowBackend {
    tx: SyncSender<ToUi>,
    events: Receiver<BackendEvent>,
    proxy: EventLoopProxy<Wake>,
    wake_pending: Arc<AtomicBool>,
    batch: Vec<Command>,
    /// The windows are gone: drawing goes nowhere, and the user has quit.
    closed: bool,
    /// Added to this engine's view, image and owner numbers, which the window thread shares
    /// with other engines' ([`crate::run_many`]).
    offset: u32,
    /// Whether this engine's status is the one the windows show (the first engine's).
    shows_status: bool,
}

impl WindowBackend {
    pub(crate) fn new(
        tx: SyncSender<ToUi>,
        events: Receiver<BackendEvent>,
        proxy: EventLoopProxy<Wake>,
        wake_pending: Arc<AtomicBool>,
    ) -> WindowBackend {
        WindowBackend {
            tx,
            events,
            proxy,
            wake_pending,
            batch: Vec::with_capacity(BATCH),
            closed: false,
            offset: 0,
            shows_status: true,
        }
    }

    /// The `k`th of several engines drawing through one window thread.
    pub(crate) fn nth(mut self, k: u32) -> WindowBackend {
        self.offset = k * crate::ENGINE_STRIDE;
        self.shows_status = k == 0;
        self
    }

    /// Queues `command` for the window thread (which refuses nothing: a command for a view
    /// it does not have changes nothing there).
    fn take_command(&mut self, command: Command) -> Result<(), LlvoError> {
        self.push(command);
        Ok(())
    }

    fn push(&mut self, mut command: Command) {
        if self.closed {
            return;
        }
        if self.offset > 0 {
            command.shift_ids(self.offset);
        }
        self.batch.push(command);
        if self.batch.len() >= BATCH {
            self.send_batch();
        }
    }

    fn send_batch(&mut self) {
        if self.batch.is_empty() || self.closed {
            return;
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        self.send(ToUi::Commands(batch));
    }

    fn send(&mut self, message: ToUi) {
        if self.tx.send(message).is_err() {
            self.closed = true;
            return;
        }
        // One wake-up for a burst of messages.
        if !self.wake_pending.swap(true, Ordering::SeqCst) && self.proxy.send_event(Wake).is_err() {
            self.closed = true;
        }
    }
}

impl Drop for WindowBackend {
    fn drop(&mut self) {
        self.send_batch();
        // Close the channel, then wake the window thread so that it sees the engine gone
        // (it shows the last pictures and ends the event loop).
        let (closed, _) = mpsc::sync_channel(0);
        drop(std::mem::replace(&mut self.tx, closed));
        let _ = self.proxy.send_event(Wake);
    }
}

impl Backend for WindowBackend {
    voml_llvo::calls_as_commands!();

    fn remap_area(
        &mut self,
        view: ViewId,
        area: PxRect,
        map: PxRemap,
        fill: Color,
    ) -> Result<bool, LlvoError> {
        // The windows draw with the raster back end, which resamples.
        self.push(Command::RemapArea {
            view,
            area,
            map,
            fill,
        });
        Ok(true)
    }

    fn present(&mut self, view: ViewId) -> Result<(), LlvoError> {
        self.push(Command::Present { view });
        self.send_batch();
        Ok(())
    }

    fn snapshot(&mut self, view: ViewId) -> Result<RgbaPixels, LlvoError> {
        self.send_batch();
        if self.closed {
            return Err(LlvoError::Unsupported(
                "take a snapshot after the windows closed",
            ));
        }
        let (reply, answer) = mpsc::sync_channel(1);
        let view = ViewId(view.0.wrapping_add(self.offset));
        self.send(ToUi::Snapshot { view, reply });
        answer
            .recv_timeout(SNAPSHOT_TIMEOUT)
            .map_err(|_| LlvoError::Backend("the window did not give its pixels in time".into()))?
    }

    fn poll_events(&mut self) -> Vec<BackendEvent> {
        let mut events = Vec::new();
        loop {
            match self.events.try_recv() {
                Ok(e) => events.push(e),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    self.closed = true;
                    break;
                }
            }
        }
        // Windows that are gone without a word (an error) end the run as a quit would.
        if self.closed && !events.contains(&BackendEvent::Quit) {
            events.push(BackendEvent::Quit);
        }
        events
    }

    fn status(&mut self, status: &Status) {
        if !self.shows_status {
            return;
        }
        self.push(Command::Status {
            status: status.clone(),
        });
        self.send_batch();
    }

    fn interactive(&self) -> bool {
        true
    }
}
