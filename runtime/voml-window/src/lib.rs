//! Native windows for VOML views: a presenter and input source that talks
//! to the rest of the runtime only through channels.
//!
//! The visual-object engine is not `Send` and must keep its own thread,
//! while window systems want their event loop on the main thread. So this
//! crate never sees the engine: the engine's thread renders each view into
//! RGBA pixels and sends them as [`ToUi::Frame`]; [`run`] (on the main
//! thread) shows the newest frame of each view in its own window and sends
//! back what the user does as [`FromUi`] messages.
//!
//! ```no_run
//! use std::sync::mpsc;
//! use voml_window::{run, FromUi, ToUi, ViewWindowSpec, WindowOptions};
//!
//! let (to_ui, ui_rx) = mpsc::channel();
//! let (ui_tx, from_ui) = mpsc::channel();
//! std::thread::spawn(move || {
//!     // The engine lives here: render, send frames, react to input.
//!     to_ui.send(ToUi::Frame { view: 1, width: 2, height: 1, rgba: vec![255; 8] }).ok();
//!     while let Ok(msg) = from_ui.recv() {
//!         if msg == FromUi::Quit {
//!             break;
//!         }
//!     }
//! });
//! let specs = vec![ViewWindowSpec { id: 1, title: "bars".into(), width: 400, height: 300 }];
//! run(specs, ui_rx, ui_tx, WindowOptions::default()).expect("windows");
//! ```
//!
//! Window systems: X11 on Linux and the BSDs (a Wayland desktop serves
//! these windows through XWayland), native Wayland with the `wayland`
//! feature, and the native ones on Windows and macOS.

#![warn(missing_docs)]

mod app;
mod display;
mod input;
mod present;

use std::fmt;
use std::sync::mpsc::{Receiver, Sender};
use std::time::Duration;

/// One window to open, for one view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewWindowSpec {
    /// The view's id, as used in [`ToUi::Frame`] and [`FromUi`] messages.
    pub id: u32,
    /// The window's title: the view's title, so that a user with several
    /// windows (and the window manager's task list) can tell them apart by
    /// the name the VOML program gave them; the status line is appended.
    pub title: String,
    /// The view's width in pixels. The window opens at this many logical
    /// pixels; on a high-DPI screen its physical size is larger, and that
    /// size is reported with [`FromUi::Resized`] right away.
    pub width: u32,
    /// The view's height in pixels (see `width`).
    pub height: u32,
}

/// A message from the program to the windows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToUi {
    /// The latest picture of a view. Only the newest frame of each view is
    /// kept, so a fast renderer never builds up a backlog.
    Frame {
        /// The view.
        view: u32,
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
        /// `width * height * 4` bytes of straight-alpha RGBA, rows top to
        /// bottom (what the LLVO layer's `RgbaPixels` holds). Frames of any
        /// other length are ignored.
        rgba: Vec<u8>,
    },
    /// A status line shown in every window's title, e.g.
    /// `"12,345 records — 40 k/s"`.
    Status(String),
    /// The program has nothing more to show. The windows stay open until
    /// the user quits, unless [`WindowOptions::exit_when_finished`].
    /// Dropping the sender counts as finishing.
    Finished,
}

/// A message from the windows to the program. Coordinates and distances
/// are in the pixels of the frame on screen, so they mean the same thing
/// to the renderer whatever the window's current size.
#[derive(Debug, Clone, PartialEq)]
pub enum FromUi {
    /// The user resized the view's window, and has stopped for a moment:
    /// the program should render the view at this size (physical pixels).
    Resized {
        /// The view.
        view: u32,
        /// New width in pixels.
        width: u32,
        /// New height in pixels.
        height: u32,
    },
    /// The mouse wheel turned over the view: `factor > 1` zooms in around
    /// the point (`x`, `y`), `factor < 1` zooms out. Quick turns arrive
    /// merged into one factor.
    Zoom {
        /// The view.
        view: u32,
        /// How much to magnify; one wheel notch is 1.2 or 1/1.2.
        factor: f64,
        /// The pixel that should stay in place, from the left.
        x: f64,
        /// The pixel that should stay in place, from the top.
        y: f64,
    },
    /// The user dragged the view (left or middle button) by this many
    /// pixels: positive `dx` is rightwards, positive `dy` downwards.
    Pan {
        /// The view.
        view: u32,
        /// Horizontal distance.
        dx: f64,
        /// Vertical distance.
        dy: f64,
    },
    /// A key press that the windows do not use themselves: its character
    /// (`"a"`, `"+"`) or W3C key name (`"ArrowLeft"`, `"Enter"`, `"F5"`),
    /// prefixed with `Ctrl+`, `Alt+`, `Super+` (or `Shift+` for named
    /// keys) when held.
    Key(String),
    /// The user closed the view's window; the other windows stay.
    Closed {
        /// The view.
        view: u32,
    },
    /// The user quit (`q`, Escape, or closing the last window). It is the
    /// last message; [`run`] returns right after sending it.
    Quit,
}

/// How [`run`] behaves.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowOptions {
    /// Close the windows and return as soon as [`ToUi::Finished`] arrives,
    /// instead of waiting for the user to quit.
    pub exit_when_finished: bool,
    /// How long a window's size must stay unchanged before it is reported.
    pub resize_debounce: Duration,
    /// The colour shown before a view's first frame, and behind its
    /// transparent pixels.
    pub background: [u8; 3],
}

impl Default for WindowOptions {
    fn default() -> Self {
        WindowOptions {
            exit_when_finished: false,
            resize_debounce: Duration::from_millis(120),
            background: [255, 255, 255],
        }
    }
}

/// Why the windows could not be shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowError {
    /// No window system can be reached from this process.
    NoDisplay {
        /// What was tried.
        reason: String,
    },
    /// [`run`] was given no view to show.
    NoViews,
    /// The window system's event loop could not start (it must run on the
    /// main thread, at most once per process) or failed.
    EventLoop(String),
    /// A view's window could not be created.
    Window {
        /// The view.
        view: u32,
        /// The window system's message.
        message: String,
    },
    /// Pixels could not be shown in a view's window.
    Present {
        /// The view.
        view: u32,
        /// The window system's message.
        message: String,
    },
}

impl fmt::Display for WindowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WindowError::NoDisplay { reason } => {
                write!(
                    f,
                    "no display: set DISPLAY or run with --headless ({reason})"
                )
            }
            WindowError::NoViews => write!(f, "no view to show in a window"),
            WindowError::EventLoop(m) => write!(f, "window event loop: {m}"),
            WindowError::Window { view, message } => {
                write!(f, "cannot open the window of view {view}: {message}")
            }
            WindowError::Present { view, message } => {
                write!(f, "cannot show view {view} in its window: {message}")
            }
        }
    }
}

impl std::error::Error for WindowError {}

/// Whether windows can be opened: on X11 systems, `DISPLAY` is set and a
/// connection to that X server really opens (with the `wayland` feature, a
/// reachable Wayland compositor also counts). Never panics and has no lasting
/// effect, so a program can call it to choose between windows and headless
/// output.
pub fn display_available() -> bool {
    display::probe().is_ok()
}

/// Opens one window per view and runs the window system's event loop until
/// the user quits (`q`, Escape, closing the last window: [`FromUi::Quit`] is
/// then sent), or until [`ToUi::Finished`] with
/// [`WindowOptions::exit_when_finished`].
///
/// Must be called on the main thread, once per process (a limit of the
/// window systems). Each window shows the newest frame of its view,
/// stretched (nearest neighbour) while its size differs from the window's;
/// `h` or `?` shows the keys in the titles and prints them on stderr.
///
/// A helper thread waits on `to_ui` and wakes the event loop when something
/// arrives, so an idle window uses no CPU. That thread ends when the sender
/// is dropped (or at its next message once `run` has returned).
pub fn run(
    specs: Vec<ViewWindowSpec>,
    to_ui: Receiver<ToUi>,
    from_ui: Sender<FromUi>,
    options: WindowOptions,
) -> Result<(), WindowError> {
    if specs.is_empty() {
        return Err(WindowError::NoViews);
    }
    display::probe().map_err(|reason| WindowError::NoDisplay { reason })?;
    app::run(specs, to_ui, from_ui, options)
}
