//! The event loop: one window per view, frames in, user input out.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use softbuffer::{Context, Surface};
use winit::application::ApplicationHandler;
use winit::dpi::{LogicalSize, PhysicalPosition};
use winit::event::{ElementState, MouseButton, WindowEvent};
use winit::event_loop::{
    ActiveEventLoop, ControlFlow, EventLoop, EventLoopProxy, OwnedDisplayHandle,
};
use winit::keyboard::ModifiersState;
use winit::window::{Window, WindowId};

use crate::input::{classify_key, push_coalesced, wheel_factor, Debounce, KeyAction};
use crate::present::{present, window_to_frame, Frame};
use crate::{FromUi, ToUi, ViewWindowSpec, WindowError, WindowOptions};

const HELP: &str =
    "keys: q/Esc quit · h/? help · wheel zoom · drag pan · other keys go to the program";

/// How long the help line stays in the titles: long enough to read, short
/// enough that the status line comes back by itself.
const HELP_SECONDS: u64 = 6;

/// What the forwarding thread has collected since the event loop last
/// looked. Keeping only the newest frame per view bounds memory when the
/// renderer is faster than the screen.
#[derive(Default)]
struct Inbox {
    frames: HashMap<u32, Frame>,
    status: Option<String>,
    finished: bool,
}

#[derive(Default)]
struct Mailbox {
    inbox: Mutex<Inbox>,
    /// Set while a wake-up is on its way, so that a burst of messages
    /// costs one event-loop wake-up rather than one per message.
    wake_pending: AtomicBool,
    /// Set once the event loop has ended, so that the forwarding thread
    /// lets go of the receiver and the program's next send fails.
    closed: AtomicBool,
}

/// The user event that tells the event loop to look at the mailbox.
#[derive(Debug, Clone, Copy)]
struct Wake;

fn forward(rx: Receiver<ToUi>, proxy: EventLoopProxy<Wake>, mailbox: Arc<Mailbox>) {
    let mut warned_bad_frame = false;
    loop {
        let msg = rx.recv();
        let gone = msg.is_err();
        {
            let mut inbox = mailbox.inbox.lock().unwrap_or_else(PoisonError::into_inner);
            match msg {
                Ok(ToUi::Frame {
                    view,
                    width,
                    height,
                    rgba,
                }) => {
                    let len = rgba.len();
                    match Frame::new(width, height, rgba) {
                        Some(f) => {
                            inbox.frames.insert(view, f);
                        }
                        None if !warned_bad_frame => {
                            warned_bad_frame = true;
                            eprintln!(
                                "voml-window: ignoring a frame of view {view}: \
                                 {len} bytes for {width}x{height} pixels"
                            );
                        }
                        None => {}
                    }
                }
                Ok(ToUi::Status(s)) => inbox.status = Some(s),
                Ok(ToUi::Finished) | Err(_) => inbox.finished = true,
            }
        }
        if !mailbox.wake_pending.swap(true, Ordering::SeqCst) && proxy.send_event(Wake).is_err() {
            return;
        }
        if gone || mailbox.closed.load(Ordering::SeqCst) {
            return;
        }
    }
}

struct ViewWindow {
    spec: ViewWindowSpec,
    window: Rc<Window>,
    surface: Surface<OwnedDisplayHandle, Rc<Window>>,
    frame: Option<Frame>,
    debounce: Debounce,
    cursor: Option<(f64, f64)>,
    /// Where the pointer was at the last drag step, while a button is down.
    drag: Option<(f64, f64)>,
    title: String,
}

impl ViewWindow {
    fn size(&self) -> (u32, u32) {
        let s = self.window.inner_size();
        (s.width, s.height)
    }

    fn to_frame(&self, x: f64, y: f64) -> (f64, f64) {
        let frame = self.frame.as_ref().map(|f| (f.width, f.height));
        window_to_frame(x, y, self.size(), frame)
    }

    fn redraw(&mut self, background: [u8; 3]) -> Result<(), String> {
        let (w, h) = self.size();
        let (Some(nw), Some(nh)) = (NonZeroU32::new(w), NonZeroU32::new(h)) else {
            return Ok(());
        };
        self.surface.resize(nw, nh).map_err(|e| e.to_string())?;
        let mut buffer = self.surface.buffer_mut().map_err(|e| e.to_string())?;
        present(self.frame.as_ref(), &mut buffer, w, h, background);
        self.window.pre_present_notify();
        buffer.present().map_err(|e| e.to_string())
    }
}

struct App {
    specs: Vec<ViewWindowSpec>,
    views: HashMap<WindowId, ViewWindow>,
    from_ui: Sender<FromUi>,
    options: WindowOptions,
    mailbox: Arc<Mailbox>,
    status: Option<String>,
    finished: bool,
    help_until: Option<Instant>,
    modifiers: ModifiersState,
    queue: Vec<FromUi>,
    error: Option<WindowError>,
}

impl App {
    fn fail(&mut self, event_loop: &ActiveEventLoop, error: WindowError) {
        self.error.get_or_insert(error);
        event_loop.exit();
    }

    fn quit(&mut self, event_loop: &ActiveEventLoop) {
        self.flush();
        // The program may already have stopped listening; quitting must
        // still close the windows.
        let _ = self.from_ui.send(FromUi::Quit);
        event_loop.exit();
    }

    fn flush(&mut self) {
        for msg in self.queue.drain(..) {
            let _ = self.from_ui.send(msg);
        }
    }

    fn open_windows(&mut self, event_loop: &ActiveEventLoop) -> Result<(), WindowError> {
        let context = Context::new(event_loop.owned_display_handle()).map_err(|e| {
            WindowError::EventLoop(format!("cannot use the display for drawing: {e}"))
        })?;
        let monitor = event_loop
            .primary_monitor()
            .or_else(|| event_loop.available_monitors().next());
        let (screen_width, scale) = monitor
            .map(|m| (f64::from(m.size().width), m.scale_factor()))
            .unwrap_or((f64::INFINITY, 1.0));
        // Side by side, then in rows: without a window manager (a bare X
        // server, a capture under Xvfb) every window would otherwise sit at
        // the origin, hiding all but one; with one, this is only a hint.
        let gap = (8.0 * scale).round();
        let (mut x, mut y, mut row_height) = (gap, gap, 0.0f64);
        let now = Instant::now();
        for spec in std::mem::take(&mut self.specs) {
            let pw = (f64::from(spec.width) * scale).round();
            let ph = (f64::from(spec.height) * scale).round();
            if x > gap && x + pw > screen_width {
                x = gap;
                y += row_height + gap;
                row_height = 0.0;
            }
            let attributes = Window::default_attributes()
                .with_title(spec.title.clone())
                .with_inner_size(LogicalSize::new(spec.width.max(1), spec.height.max(1)))
                .with_position(PhysicalPosition::new(x, y));
            x += pw + gap;
            row_height = row_height.max(ph);
            let window = event_loop
                .create_window(attributes)
                .map(Rc::new)
                .map_err(|e| WindowError::Window {
                    view: spec.id,
                    message: e.to_string(),
                })?;
            let surface =
                Surface::new(&context, window.clone()).map_err(|e| WindowError::Present {
                    view: spec.id,
                    message: e.to_string(),
                })?;
            let mut debounce =
                Debounce::new(self.options.resize_debounce, (spec.width, spec.height));
            // A high-DPI screen (or a window manager that tiles) gives the
            // window another size than the view's; the program learns it
            // like any resize.
            let size = window.inner_size();
            debounce.resized((size.width, size.height), now);
            window.request_redraw();
            self.views.insert(
                window.id(),
                ViewWindow {
                    title: spec.title.clone(),
                    spec,
                    window,
                    surface,
                    frame: None,
                    debounce,
                    cursor: None,
                    drag: None,
                },
            );
        }
        Ok(())
    }

    fn title_for(&self, base: &str) -> String {
        if self.help_until.is_some() {
            return format!("{base} — {HELP}");
        }
        let mut t = base.to_string();
        if let Some(s) = self.status.as_deref().filter(|s| !s.is_empty()) {
            t.push_str(" — ");
            t.push_str(s);
        }
        if self.finished && !self.options.exit_when_finished {
            t.push_str(" — finished, q quits");
        }
        t
    }

    fn update_titles(&mut self) {
        let titles: Vec<(WindowId, String)> = self
            .views
            .iter()
            .map(|(id, v)| (*id, self.title_for(&v.spec.title)))
            .collect();
        for (id, title) in titles {
            if let Some(v) = self.views.get_mut(&id) {
                // Setting a title is a round trip to the window system; a
                // status that did not change should not cost one.
                if v.title != title {
                    v.window.set_title(&title);
                    v.title = title;
                }
            }
        }
    }

    fn show_help(&mut self) {
        eprintln!("voml-window {HELP}");
        self.help_until = Some(Instant::now() + std::time::Duration::from_secs(HELP_SECONDS));
        self.update_titles();
    }

    fn take_mail(&mut self) {
        // Cleared before reading, so that anything arriving meanwhile sends
        // a new wake-up instead of waiting in the inbox.
        self.mailbox.wake_pending.store(false, Ordering::SeqCst);
        let inbox = std::mem::take(
            &mut *self
                .mailbox
                .inbox
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for (view, frame) in inbox.frames {
            if let Some(v) = self.views.values_mut().find(|v| v.spec.id == view) {
                v.frame = Some(frame);
                v.window.request_redraw();
            }
        }
        if inbox.status.is_some() {
            self.status = inbox.status;
        }
        self.finished |= inbox.finished;
        self.update_titles();
    }
}

impl ApplicationHandler<Wake> for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.specs.is_empty() {
            return;
        }
        if let Err(e) = self.open_windows(event_loop) {
            self.fail(event_loop, e);
            return;
        }
        // Frames may have arrived before there were windows to show them.
        self.take_mail();
    }

    fn user_event(&mut self, _event_loop: &ActiveEventLoop, _: Wake) {
        if !self.views.is_empty() {
            self.take_mail();
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, id: WindowId, event: WindowEvent) {
        if let WindowEvent::ModifiersChanged(m) = &event {
            self.modifiers = m.state();
            return;
        }
        let Some(v) = self.views.get_mut(&id) else {
            return;
        };
        let view = v.spec.id;
        match event {
            WindowEvent::CloseRequested => {
                self.views.remove(&id);
                self.queue.push(FromUi::Closed { view });
                if self.views.is_empty() {
                    self.quit(event_loop);
                }
            }
            WindowEvent::Resized(size) => {
                v.debounce
                    .resized((size.width, size.height), Instant::now());
                v.window.request_redraw();
            }
            WindowEvent::RedrawRequested => {
                if let Err(message) = v.redraw(self.options.background) {
                    self.fail(event_loop, WindowError::Present { view, message });
                }
            }
            WindowEvent::CursorMoved { position, .. } => {
                let now = (position.x, position.y);
                v.cursor = Some(now);
                if let Some(last) = v.drag {
                    v.drag = Some(now);
                    let (x0, y0) = v.to_frame(last.0, last.1);
                    let (x1, y1) = v.to_frame(now.0, now.1);
                    push_coalesced(
                        &mut self.queue,
                        FromUi::Pan {
                            view,
                            dx: x1 - x0,
                            dy: y1 - y0,
                        },
                    );
                }
            }
            WindowEvent::MouseInput { state, button, .. } => {
                if matches!(button, MouseButton::Left | MouseButton::Middle) {
                    v.drag = match state {
                        ElementState::Pressed => v.cursor,
                        ElementState::Released => None,
                    };
                }
            }
            WindowEvent::Focused(false) => v.drag = None,
            WindowEvent::MouseWheel { delta, .. } => {
                let (w, h) = v.size();
                let (cx, cy) = v.cursor.unwrap_or((f64::from(w) / 2.0, f64::from(h) / 2.0));
                let (x, y) = v.to_frame(cx, cy);
                let factor = wheel_factor(delta);
                push_coalesced(&mut self.queue, FromUi::Zoom { view, factor, x, y });
            }
            WindowEvent::KeyboardInput {
                event,
                is_synthetic: false,
                ..
            } if event.state == ElementState::Pressed => {
                match classify_key(&event.logical_key, self.modifiers) {
                    KeyAction::Quit => self.quit(event_loop),
                    KeyAction::Help => self.show_help(),
                    KeyAction::Forward(k) => self.queue.push(FromUi::Key(k)),
                    KeyAction::Ignore => {}
                }
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        let now = Instant::now();
        for v in self.views.values_mut() {
            if let Some((width, height)) = v.debounce.due(now) {
                self.queue.push(FromUi::Resized {
                    view: v.spec.id,
                    width,
                    height,
                });
            }
        }
        self.flush();
        if self.help_until.is_some_and(|t| t <= now) {
            self.help_until = None;
            self.update_titles();
        }
        if self.finished && self.options.exit_when_finished {
            event_loop.exit();
            return;
        }
        let next = self
            .views
            .values()
            .filter_map(|v| v.debounce.deadline())
            .chain(self.help_until)
            .min();
        event_loop.set_control_flow(match next {
            Some(t) => ControlFlow::WaitUntil(t),
            None => ControlFlow::Wait,
        });
    }
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "it panicked".into())
}

pub(crate) fn run(
    specs: Vec<ViewWindowSpec>,
    to_ui: Receiver<ToUi>,
    from_ui: Sender<FromUi>,
    options: WindowOptions,
) -> Result<(), WindowError> {
    // Some window-system back ends panic instead of returning an error
    // (off the main thread, a missing system library); the caller should
    // get an error it can report and fall back from.
    let event_loop = std::panic::catch_unwind(|| EventLoop::<Wake>::with_user_event().build())
        .map_err(|p| WindowError::EventLoop(panic_text(p)))?
        .map_err(|e| WindowError::EventLoop(e.to_string()))?;
    let mailbox = Arc::new(Mailbox::default());
    let proxy = event_loop.create_proxy();
    let forwarder_mailbox = mailbox.clone();
    std::thread::Builder::new()
        .name("voml-window-forward".into())
        .spawn(move || forward(to_ui, proxy, forwarder_mailbox))
        .map_err(|e| WindowError::EventLoop(format!("cannot start a thread: {e}")))?;
    let mut app = App {
        specs,
        views: HashMap::new(),
        from_ui,
        options,
        mailbox,
        status: None,
        finished: false,
        help_until: None,
        modifiers: ModifiersState::empty(),
        queue: Vec::new(),
        error: None,
    };
    let result = event_loop.run_app(&mut app);
    app.mailbox.closed.store(true, Ordering::SeqCst);
    if let Some(e) = app.error {
        return Err(e);
    }
    result.map_err(|e| WindowError::EventLoop(e.to_string()))
}
