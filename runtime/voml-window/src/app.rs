//! The event loop: one window per view, drawn by carrying out the LLVO core's commands on
//! this thread's own raster surfaces; what the user does goes back as back-end events.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use softbuffer::{Context, Surface};
use voml_llvo::{Backend, BackendEvent, Command, LazyRaster, Status, ViewId};
use winit::application::ApplicationHandler;
use winit::dpi::{LogicalSize, PhysicalPosition, PhysicalSize};
use winit::event::{ElementState, MouseButton, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoopProxy, OwnedDisplayHandle};
use winit::keyboard::ModifiersState;
use winit::window::{Window, WindowId};

use crate::backend::{ToUi, Wake};
use crate::input::{
    button_number, classify_key, is_click, push_coalesced, route, wheel_factor, Debounce, KeyAction,
};
use crate::overlay::{status_strip, STRIP_HEIGHT};
use crate::present::{present, window_to_frame, Frame};
use crate::{WindowError, WindowOptions};

const HELP: &str =
    "q/Esc quit · h/? help · wheel zoom · drag pan · clicks and other keys go to the program";

/// How long the help line stays in the titles: long enough to read, short
/// enough that the status line comes back by itself.
const HELP_SECONDS: u64 = 6;

/// How long the window thread carries out commands before it looks at the
/// user's input again.
const COMMAND_BUDGET: Duration = Duration::from_millis(30);

struct ViewWindow {
    view: ViewId,
    base_title: String,
    window: Rc<Window>,
    surface: Surface<OwnedDisplayHandle, Rc<Window>>,
    /// The picture shown, taken from the raster surface when it was last presented.
    frame: Option<Frame>,
    /// Drawn since the picture shown was taken.
    stale: bool,
    debounce: Debounce,
    cursor: Option<(f64, f64)>,
    /// Where the pointer was at the last drag step, while a button is down.
    drag: Option<(f64, f64)>,
    /// Where a button went down, while it is down: released nearby, it is a click.
    press: Option<(MouseButton, (f64, f64))>,
    title: String,
}

impl ViewWindow {
    /// The size of the picture: the window less the status strip.
    fn size(&self) -> (u32, u32) {
        let s = self.window.inner_size();
        picture_size(s)
    }

    fn to_frame(&self, x: f64, y: f64) -> (f64, f64) {
        let frame = self.frame.as_ref().map(|f| (f.width, f.height));
        window_to_frame(x, y, self.size(), frame)
    }

    fn redraw(
        &mut self,
        raster: &mut LazyRaster,
        background: [u8; 3],
        strip: Option<&str>,
    ) -> Result<(), String> {
        if self.stale {
            self.stale = false;
            if let Ok(p) = raster.snapshot(self.view) {
                self.frame = Frame::new(p.width, p.height, p.data);
            }
        }
        let full = self.window.inner_size();
        let (w, h) = (full.width, full.height);
        let (Some(nw), Some(nh)) = (NonZeroU32::new(w), NonZeroU32::new(h)) else {
            return Ok(());
        };
        self.surface.resize(nw, nh).map_err(|e| e.to_string())?;
        let mut buffer = self.surface.buffer_mut().map_err(|e| e.to_string())?;
        let (_, ph) = picture_size(full);
        let (picture, band) = buffer.split_at_mut(w as usize * ph as usize);
        present(self.frame.as_ref(), picture, w, ph, background);
        status_strip(band, w, h - ph, strip.unwrap_or(""));
        self.window.pre_present_notify();
        buffer.present().map_err(|e| e.to_string())
    }
}

/// The part of a window the picture has: all but the status strip at the bottom.
fn picture_size(window: PhysicalSize<u32>) -> (u32, u32) {
    (
        window.width,
        window
            .height
            .saturating_sub(STRIP_HEIGHT)
            .max(1)
            .min(window.height),
    )
}

/// Where the next window opens: side by side, then in rows. Without a
/// window manager (a bare X server, a capture under Xvfb) every window would
/// otherwise sit at the origin, hiding all but one; with one, this is only a
/// hint.
struct Placement {
    x: f64,
    y: f64,
    row_height: f64,
}

pub(crate) struct App {
    /// The windows' surfaces, rasterised when they are shown.
    raster: LazyRaster,
    views: HashMap<WindowId, ViewWindow>,
    windows: HashMap<ViewId, WindowId>,
    context: Option<Context<OwnedDisplayHandle>>,
    placement: Placement,
    /// Where each view's window was first placed.
    placed: HashMap<ViewId, (f64, f64)>,
    /// Commands that came before the event loop could open windows.
    early: Vec<ToUi>,
    resumed: bool,
    rx: Receiver<ToUi>,
    /// One channel for each engine ([`crate::run_many`]).
    events: Vec<Sender<BackendEvent>>,
    proxy: EventLoopProxy<Wake>,
    wake_pending: Arc<AtomicBool>,
    options: WindowOptions,
    status: Option<Status>,
    /// The text of the status strip at the bottom of each window.
    strip: Option<String>,
    help_until: Option<Instant>,
    modifiers: ModifiersState,
    queue: Vec<BackendEvent>,
    /// The engine has gone (its run ended): nothing will answer the user any more.
    engine_gone: bool,
    pub(crate) error: Option<WindowError>,
}

impl App {
    pub(crate) fn new(
        rx: Receiver<ToUi>,
        events: Vec<Sender<BackendEvent>>,
        proxy: EventLoopProxy<Wake>,
        wake_pending: Arc<AtomicBool>,
        options: WindowOptions,
    ) -> App {
        App {
            raster: LazyRaster::new(),
            views: HashMap::new(),
            windows: HashMap::new(),
            context: None,
            placement: Placement {
                x: 0.0,
                y: 0.0,
                row_height: 0.0,
            },
            placed: HashMap::new(),
            early: Vec::new(),
            resumed: false,
            rx,
            events,
            proxy,
            wake_pending,
            options,
            status: None,
            strip: None,
            help_until: None,
            modifiers: ModifiersState::empty(),
            queue: Vec::new(),
            engine_gone: false,
            error: None,
        }
    }

    fn fail(&mut self, event_loop: &ActiveEventLoop, error: WindowError) {
        self.error.get_or_insert(error);
        event_loop.exit();
    }

    fn quit(&mut self, event_loop: &ActiveEventLoop) {
        self.flush_events();
        // The engine may already have stopped listening; quitting must still close the
        // windows.
        for events in &self.events {
            let _ = events.send(BackendEvent::Quit);
        }
        event_loop.exit();
    }

    fn flush_events(&mut self) {
        for e in self.queue.drain(..) {
            for (k, e) in route(e, self.events.len()) {
                let _ = self.events[k].send(e);
            }
        }
    }

    fn open_window(
        &mut self,
        event_loop: &ActiveEventLoop,
        view: ViewId,
        title: &str,
        width: u32,
        height: u32,
    ) -> Result<(), WindowError> {
        if self.context.is_none() {
            let context = Context::new(event_loop.owned_display_handle()).map_err(|e| {
                WindowError::EventLoop(format!("cannot use the display for drawing: {e}"))
            })?;
            self.context = Some(context);
        }
        let monitor = event_loop
            .primary_monitor()
            .or_else(|| event_loop.available_monitors().next());
        let (screen_width, scale) = monitor
            .map(|m| (f64::from(m.size().width), m.scale_factor()))
            .unwrap_or((f64::INFINITY, 1.0));
        let gap = (8.0 * scale).round();
        let p = &mut self.placement;
        if p.x == 0.0 {
            (p.x, p.y) = (gap, gap);
        }
        let pw = (f64::from(width) * scale).round();
        let ph = (f64::from(height) * scale).round();
        if p.x > gap && p.x + pw > screen_width {
            p.x = gap;
            p.y += p.row_height + gap;
            p.row_height = 0.0;
        }
        // A view opened again (a reloaded visual object) comes back where it was.
        let again = self.placed.get(&view).copied();
        let (x, y) = again.unwrap_or((p.x, p.y));
        if again.is_none() {
            self.placed.insert(view, (p.x, p.y));
            p.x += pw + gap;
            p.row_height = p.row_height.max(ph);
        }
        let attributes = Window::default_attributes()
            .with_title(title)
            .with_inner_size(LogicalSize::new(width.max(1), height.max(1) + STRIP_HEIGHT))
            .with_position(PhysicalPosition::new(x, y));
        let window = event_loop
            .create_window(attributes)
            .map(Rc::new)
            .map_err(|e| WindowError::Window {
                view: view.0,
                message: e.to_string(),
            })?;
        let context = self.context.as_ref().expect("made above");
        let surface = Surface::new(context, window.clone()).map_err(|e| WindowError::Present {
            view: view.0,
            message: e.to_string(),
        })?;
        let mut debounce = Debounce::new(self.options.resize_debounce, (width, height));
        // A high-DPI screen (or a window manager that tiles) gives the window another size
        // than the view's; the engine learns it like any resize.
        debounce.resized(picture_size(window.inner_size()), Instant::now());
        window.request_redraw();
        self.windows.insert(view, window.id());
        self.views.insert(
            window.id(),
            ViewWindow {
                view,
                base_title: title.to_string(),
                title: title.to_string(),
                window,
                surface,
                frame: None,
                stale: true,
                debounce,
                cursor: None,
                drag: None,
                press: None,
            },
        );
        Ok(())
    }

    fn window_of(&mut self, view: ViewId) -> Option<&mut ViewWindow> {
        let id = self.windows.get(&view)?;
        self.views.get_mut(id)
    }

    /// Carries out one message from the engine.
    fn handle(&mut self, event_loop: &ActiveEventLoop, message: ToUi) -> Result<(), WindowError> {
        match message {
            ToUi::Snapshot { view, reply } => {
                let _ = reply.send(self.raster.snapshot(view));
                Ok(())
            }
            ToUi::Commands(commands) => {
                for command in commands {
                    self.command(event_loop, command)?;
                }
                Ok(())
            }
        }
    }

    fn command(
        &mut self,
        event_loop: &ActiveEventLoop,
        command: Command,
    ) -> Result<(), WindowError> {
        match &command {
            Command::CreateSurface {
                view,
                title,
                width,
                height,
                ..
            } => {
                let _ = command.apply(&mut self.raster);
                self.open_window(event_loop, *view, title, *width, *height)?;
            }
            Command::ResizeSurface {
                view,
                width,
                height,
                ..
            } => {
                let _ = command.apply(&mut self.raster);
                // The visual object asked for a size (or followed the user's): the window
                // takes it unless it has it already.
                if let Some(v) = self.window_of(*view) {
                    if v.size() != (*width, *height) {
                        let _ = v
                            .window
                            .request_inner_size(PhysicalSize::new(*width, *height + STRIP_HEIGHT));
                    }
                    v.stale = true;
                }
            }
            Command::DestroySurface { view } => {
                self.raster.destroy_surface(*view);
                if let Some(id) = self.windows.remove(view) {
                    self.views.remove(&id);
                }
            }
            Command::Present { view } | Command::Flush { view } => {
                let _ = command.apply(&mut self.raster);
                if let Some(v) = self.window_of(*view) {
                    v.stale = true;
                    v.window.request_redraw();
                }
            }
            Command::Status { status } => {
                self.status = Some(status.clone());
                self.update_titles();
            }
            // A failed command draws nothing; the core already reported what it could.
            _ => {
                let _ = command.apply(&mut self.raster);
            }
        }
        Ok(())
    }

    /// Carries out what the engine sent, for at most [`COMMAND_BUDGET`] so that the windows
    /// stay responsive; the rest waits for the next turn of the event loop.
    fn take_mail(&mut self, event_loop: &ActiveEventLoop) {
        // Cleared before reading, so that anything arriving meanwhile sends a new wake-up.
        self.wake_pending.store(false, Ordering::SeqCst);
        for message in std::mem::take(&mut self.early) {
            if let Err(e) = self.handle(event_loop, message) {
                return self.fail(event_loop, e);
            }
        }
        let until = Instant::now() + COMMAND_BUDGET;
        loop {
            match self.rx.try_recv() {
                Ok(message) => {
                    if let Err(e) = self.handle(event_loop, message) {
                        return self.fail(event_loop, e);
                    }
                    if Instant::now() >= until {
                        // More may be waiting: come back after the user's events.
                        if !self.wake_pending.swap(true, Ordering::SeqCst) {
                            let _ = self.proxy.send_event(Wake);
                        }
                        return;
                    }
                }
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => {
                    self.engine_gone = true;
                    return;
                }
            }
        }
    }

    /// The status for the title and the strip: the help while it is shown, else where the
    /// replay stands.
    fn status_line(&self) -> Option<String> {
        if self.help_until.is_some() {
            let keys = self.status.as_ref().map_or("", |s| s.keys.as_str());
            return Some(if keys.is_empty() {
                HELP.to_string()
            } else {
                format!("{keys} · {HELP}")
            });
        }
        let s = self.status.as_ref().filter(|s| !s.text.is_empty())?;
        Some(if s.finished {
            format!("{}, q quits", s.text)
        } else {
            s.text.clone()
        })
    }

    fn title_for(&self, base: &str) -> String {
        match self.status_line() {
            Some(line) => format!("{base} — {line}"),
            None => base.to_string(),
        }
    }

    fn update_titles(&mut self) {
        let strip = self.status_line();
        if strip != self.strip {
            self.strip = strip;
            for v in self.views.values() {
                v.window.request_redraw();
            }
        }
        let titles: Vec<(WindowId, String)> = self
            .views
            .iter()
            .map(|(id, v)| (*id, self.title_for(&v.base_title)))
            .collect();
        for (id, title) in titles {
            if let Some(v) = self.views.get_mut(&id) {
                // Setting a title is a round trip to the window system; a status that did
                // not change should not cost one.
                if v.title != title {
                    v.window.set_title(&title);
                    v.title = title;
                }
            }
        }
    }

    fn show_help(&mut self) {
        self.help_until = Some(Instant::now() + Duration::from_secs(HELP_SECONDS));
        if let Some(line) = self.status_line() {
            eprintln!("keys: {line}");
        }
        self.update_titles();
    }
}

impl ApplicationHandler<Wake> for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        self.resumed = true;
        self.take_mail(event_loop);
    }

    fn user_event(&mut self, event_loop: &ActiveEventLoop, _: Wake) {
        if self.resumed {
            self.take_mail(event_loop);
        } else {
            // Windows can be opened only once the event loop has resumed.
            self.wake_pending.store(false, Ordering::SeqCst);
            while let Ok(message) = self.rx.try_recv() {
                self.early.push(message);
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, id: WindowId, event: WindowEvent) {
        if let WindowEvent::ModifiersChanged(m) = &event {
            self.modifiers = m.state();
            return;
        }
        let background = self.options.background;
        let Some(v) = self.views.get_mut(&id) else {
            return;
        };
        let view = v.view;
        match event {
            WindowEvent::CloseRequested => {
                self.views.remove(&id);
                self.windows.remove(&view);
                self.queue.push(BackendEvent::Closed { view });
                if self.views.is_empty() {
                    self.quit(event_loop);
                }
            }
            WindowEvent::Resized(size) => {
                v.debounce.resized(picture_size(size), Instant::now());
                v.window.request_redraw();
            }
            WindowEvent::RedrawRequested => {
                if let Err(message) = v.redraw(&mut self.raster, background, self.strip.as_deref())
                {
                    self.fail(
                        event_loop,
                        WindowError::Present {
                            view: view.0,
                            message,
                        },
                    );
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
                        BackendEvent::Pan {
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
                match (state, v.cursor) {
                    (ElementState::Pressed, Some(at)) => v.press = Some((button, at)),
                    (ElementState::Released, Some(at)) => {
                        if let Some((pressed, from)) = v.press.take() {
                            if pressed == button && is_click(from, at) {
                                let (x, y) = v.to_frame(at.0, at.1);
                                self.queue.push(BackendEvent::Click {
                                    view,
                                    x,
                                    y,
                                    button: button_number(button),
                                });
                            }
                        }
                    }
                    _ => v.press = None,
                }
            }
            WindowEvent::Focused(false) => {
                v.drag = None;
                v.press = None;
            }
            WindowEvent::MouseWheel { delta, .. } => {
                let (w, h) = v.size();
                let (cx, cy) = v.cursor.unwrap_or((f64::from(w) / 2.0, f64::from(h) / 2.0));
                let (x, y) = v.to_frame(cx, cy);
                let factor = wheel_factor(delta);
                push_coalesced(&mut self.queue, BackendEvent::Zoom { view, factor, x, y });
            }
            WindowEvent::KeyboardInput {
                event,
                is_synthetic: false,
                ..
            } if event.state == ElementState::Pressed => {
                match classify_key(&event.logical_key, self.modifiers) {
                    KeyAction::Quit => self.quit(event_loop),
                    KeyAction::Help => self.show_help(),
                    KeyAction::Forward(key) => self.queue.push(BackendEvent::Key {
                        view: Some(view),
                        key,
                    }),
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
                self.queue.push(BackendEvent::Resized {
                    view: v.view,
                    width,
                    height,
                });
            }
        }
        self.flush_events();
        if self.help_until.is_some_and(|t| t <= now) {
            self.help_until = None;
            self.update_titles();
        }
        // The engine's run has ended: its last pictures are on screen, and nothing would
        // answer zooms any more.
        if self.engine_gone {
            let background = self.options.background;
            for v in self.views.values_mut().filter(|v| v.stale) {
                let _ = v.redraw(&mut self.raster, background, self.strip.as_deref());
            }
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

pub(crate) fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "it panicked".into())
}

/// The window system's event loop. Some window-system back ends panic instead of returning
/// an error (off the main thread, a missing system library); the caller gets an error it
/// can report.
pub(crate) fn event_loop() -> Result<winit::event_loop::EventLoop<Wake>, WindowError> {
    std::panic::catch_unwind(|| winit::event_loop::EventLoop::<Wake>::with_user_event().build())
        .map_err(|p| WindowError::EventLoop(panic_text(p)))?
        .map_err(|e| WindowError::EventLoop(e.to_string()))
}
