//! What the user does, turned into back-end events: key names, wheel zoom
//! factors, coalesced drags and debounced resizes.
//!
//! Nothing here touches a window, so the policy can be tested headless.

use std::time::{Duration, Instant};

use winit::event::{MouseButton, MouseScrollDelta};
use winit::keyboard::{Key, ModifiersState, NamedKey};

use voml_llvo::{BackendEvent, ViewId};

/// How far (window pixels) the pointer may move between press and release for a click;
/// further, it was a drag.
const CLICK_SLOP: f64 = 4.0;

/// A press at `from` and a release at `to` make a click, not a drag.
pub(crate) fn is_click(from: (f64, f64), to: (f64, f64)) -> bool {
    (to.0 - from.0).hypot(to.1 - from.1) <= CLICK_SLOP
}

/// The button's number in the click callback: 1 left, 2 middle, 3 right, then the others.
pub(crate) fn button_number(button: MouseButton) -> u8 {
    match button {
        MouseButton::Left => 1,
        MouseButton::Middle => 2,
        MouseButton::Right => 3,
        MouseButton::Back => 4,
        MouseButton::Forward => 5,
        MouseButton::Other(n) => u8::try_from(n).unwrap_or(u8::MAX).saturating_add(6),
    }
}

/// Which of `engines` engines ([`crate::run_many`]) hear of an event, each with the event in
/// its own numbering: an event in a window goes to the engine that opened it; a quit goes to
/// all, and so does a key (the replay keys drive every engine), with no view for the others.
pub(crate) fn route(event: BackendEvent, engines: usize) -> Vec<(usize, BackendEvent)> {
    let owner = |view: ViewId| -> (usize, ViewId) {
        let k = (view.0 / crate::ENGINE_STRIDE) as usize;
        (k, ViewId(view.0 % crate::ENGINE_STRIDE))
    };
    let mut event = event;
    let view = match &mut event {
        BackendEvent::Quit => return (0..engines).map(|k| (k, BackendEvent::Quit)).collect(),
        // Windows send no command lines; were one to come, it would be every engine's, as
        // the replay keys are.
        BackendEvent::Command { .. } => return (0..engines).map(|k| (k, event.clone())).collect(),
        BackendEvent::Key { view, key } => {
            let mine = view.map(owner);
            return (0..engines)
                .map(|k| {
                    let view = mine.filter(|(o, _)| *o == k).map(|(_, v)| v);
                    (
                        k,
                        BackendEvent::Key {
                            view,
                            key: key.clone(),
                        },
                    )
                })
                .collect();
        }
        BackendEvent::Resized { view, .. }
        | BackendEvent::Closed { view }
        | BackendEvent::Zoom { view, .. }
        | BackendEvent::Pan { view, .. }
        | BackendEvent::Click { view, .. } => view,
    };
    let (k, local) = owner(*view);
    *view = local;
    if k < engines {
        vec![(k, event)]
    } else {
        Vec::new()
    }
}

/// Zoom per wheel notch: small enough to aim, large enough that a few
/// notches cross an order of magnitude.
pub(crate) const ZOOM_STEP: f64 = 1.2;

/// Touchpads report pixels rather than notches; this many pixels count as
/// one notch, about what a notch scrolls in a text view.
const PIXELS_PER_NOTCH: f64 = 40.0;

/// The zoom factor of one wheel event: above 1 when the wheel turns away
/// from the user (scrolling "up"), which conventionally zooms in.
pub(crate) fn wheel_factor(delta: MouseScrollDelta) -> f64 {
    let notches = match delta {
        MouseScrollDelta::LineDelta(_, y) => f64::from(y),
        MouseScrollDelta::PixelDelta(p) => p.y / PIXELS_PER_NOTCH,
    };
    ZOOM_STEP.powf(notches)
}

/// What a key press means to the presenter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeyAction {
    Quit,
    Help,
    Forward(String),
    Ignore,
}

/// Decides what a pressed key does. `q`/Escape and `h`/`?` are taken by the
/// presenter so that every program gets the same way out and the same help;
/// all other keys go to the program under their W3C name (`"a"`, `"A"`,
/// `"ArrowLeft"`, `"Enter"`, `"F5"`), prefixed with `Ctrl+`, `Alt+` or
/// `Super+` when those are held (and `Shift+` for named keys, where the
/// name alone would not show it).
pub(crate) fn classify_key(key: &Key, mods: ModifiersState) -> KeyAction {
    let plain = !(mods.control_key() || mods.alt_key() || mods.super_key());
    let name = match key {
        Key::Named(NamedKey::Escape) => return KeyAction::Quit,
        Key::Character(c) if plain && c.as_str() == "q" => return KeyAction::Quit,
        Key::Character(c) if plain && (c.as_str() == "h" || c.as_str() == "?") => {
            return KeyAction::Help
        }
        Key::Character(c) => c.to_string(),
        Key::Named(
            NamedKey::Shift
            | NamedKey::Control
            | NamedKey::Alt
            | NamedKey::Super
            | NamedKey::Meta
            | NamedKey::Hyper
            | NamedKey::AltGraph
            | NamedKey::CapsLock
            | NamedKey::NumLock,
        ) => return KeyAction::Ignore,
        Key::Named(n) => {
            let s = format!("{n:?}");
            if mods.shift_key() {
                format!("Shift+{s}")
            } else {
                s
            }
        }
        Key::Unidentified(_) | Key::Dead(_) => return KeyAction::Ignore,
    };
    let mut out = String::new();
    for (held, prefix) in [
        (mods.control_key(), "Ctrl+"),
        (mods.alt_key(), "Alt+"),
        (mods.super_key(), "Super+"),
    ] {
        if held {
            out.push_str(prefix);
        }
    }
    out.push_str(&name);
    KeyAction::Forward(out)
}

/// Queues a message, merging it into the previous one when both are drags
/// or both are zooms of the same view. Pointer devices report far more
/// often than a renderer can redraw; merging keeps the program from
/// falling behind while preserving the order of different gestures.
pub(crate) fn push_coalesced(queue: &mut Vec<BackendEvent>, msg: BackendEvent) {
    match (queue.last_mut(), &msg) {
        (
            Some(BackendEvent::Pan { view, dx, dy }),
            BackendEvent::Pan {
                view: v,
                dx: ndx,
                dy: ndy,
            },
        ) if view == v => {
            *dx += ndx;
            *dy += ndy;
        }
        (
            Some(BackendEvent::Zoom { view, factor, x, y }),
            BackendEvent::Zoom {
                view: v,
                factor: nf,
                x: nx,
                y: ny,
            },
        ) if view == v => {
            *factor *= nf;
            *x = *nx;
            *y = *ny;
        }
        _ => queue.push(msg),
    }
}

/// Reports a window size only once the user has stopped dragging its
/// border for a moment: re-laying a view out for every intermediate size
/// would keep the renderer busy with pictures nobody sees.
#[derive(Debug)]
pub(crate) struct Debounce {
    delay: Duration,
    reported: (u32, u32),
    pending: Option<((u32, u32), Instant)>,
}

impl Debounce {
    /// `reported` is the size the program already renders at.
    pub fn new(delay: Duration, reported: (u32, u32)) -> Debounce {
        Debounce {
            delay,
            reported,
            pending: None,
        }
    }

    pub fn resized(&mut self, size: (u32, u32), now: Instant) {
        self.pending = Some((size, now + self.delay));
    }

    pub fn deadline(&self) -> Option<Instant> {
        self.pending.map(|(_, t)| t)
    }

    /// The size to report now, if the quiet time has passed and the size
    /// really changed. A minimised window (zero area) is never reported:
    /// no renderer can draw into it.
    pub fn due(&mut self, now: Instant) -> Option<(u32, u32)> {
        let (size, at) = self.pending?;
        if now < at {
            return None;
        }
        self.pending = None;
        if size == self.reported || size.0 == 0 || size.1 == 0 {
            return None;
        }
        self.reported = size;
        Some(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use winit::dpi::PhysicalPosition;

    #[test]
    fn wheel_up_zooms_in() {
        assert!(wheel_factor(MouseScrollDelta::LineDelta(0.0, 1.0)) > 1.0);
        assert!(wheel_factor(MouseScrollDelta::LineDelta(0.0, -1.0)) < 1.0);
        let touch = wheel_factor(MouseScrollDelta::PixelDelta(PhysicalPosition::new(
            0.0, 40.0,
        )));
        assert!((touch - ZOOM_STEP).abs() < 1e-9);
    }

    #[test]
    fn events_go_to_the_engine_whose_window_it_is() {
        let second = ViewId(crate::ENGINE_STRIDE + 2);
        let routed = route(BackendEvent::Closed { view: second }, 3);
        assert_eq!(routed, [(1, BackendEvent::Closed { view: ViewId(2) })]);
        assert_eq!(route(BackendEvent::Quit, 2).len(), 2);
        let key = |view| BackendEvent::Key {
            view,
            key: "a".into(),
        };
        assert_eq!(
            route(key(Some(second)), 2),
            [(0, key(None)), (1, key(Some(ViewId(2))))]
        );
    }

    #[test]
    fn a_small_move_is_a_click_and_a_longer_one_a_drag() {
        assert!(is_click((10.0, 10.0), (10.0, 10.0)));
        assert!(is_click((10.0, 10.0), (13.0, 12.0)));
        assert!(!is_click((10.0, 10.0), (15.0, 10.0)));
        assert_eq!(button_number(MouseButton::Left), 1);
        assert_eq!(button_number(MouseButton::Middle), 2);
        assert_eq!(button_number(MouseButton::Right), 3);
        assert_eq!(button_number(MouseButton::Other(1000)), u8::MAX);
    }

    #[test]
    fn keys() {
        let none = ModifiersState::empty();
        let ch = |s: &str| Key::Character(s.into());
        assert_eq!(classify_key(&ch("q"), none), KeyAction::Quit);
        assert_eq!(
            classify_key(&Key::Named(NamedKey::Escape), none),
            KeyAction::Quit
        );
        assert_eq!(classify_key(&ch("?"), none), KeyAction::Help);
        assert_eq!(classify_key(&ch("h"), none), KeyAction::Help);
        assert_eq!(classify_key(&ch("a"), none), KeyAction::Forward("a".into()));
        assert_eq!(
            classify_key(&ch("q"), ModifiersState::CONTROL),
            KeyAction::Forward("Ctrl+q".into())
        );
        assert_eq!(
            classify_key(&Key::Named(NamedKey::ArrowLeft), ModifiersState::SHIFT),
            KeyAction::Forward("Shift+ArrowLeft".into())
        );
        assert_eq!(
            classify_key(&Key::Named(NamedKey::Shift), ModifiersState::SHIFT),
            KeyAction::Ignore
        );
    }

    #[test]
    fn drags_and_zooms_merge_but_keep_their_order() {
        let mut q = Vec::new();
        let pan = |dx, dy| BackendEvent::Pan {
            view: ViewId(1),
            dx,
            dy,
        };
        let zoom = |factor, x| BackendEvent::Zoom {
            view: ViewId(1),
            factor,
            x,
            y: 0.0,
        };
        push_coalesced(&mut q, pan(1.0, 2.0));
        push_coalesced(&mut q, pan(3.0, -1.0));
        push_coalesced(&mut q, zoom(2.0, 5.0));
        push_coalesced(&mut q, zoom(1.5, 6.0));
        push_coalesced(&mut q, pan(1.0, 1.0));
        push_coalesced(
            &mut q,
            BackendEvent::Pan {
                view: ViewId(2),
                dx: 1.0,
                dy: 1.0,
            },
        );
        assert_eq!(
            q,
            vec![
                pan(4.0, 1.0),
                zoom(3.0, 6.0),
                pan(1.0, 1.0),
                BackendEvent::Pan {
                    view: ViewId(2),
                    dx: 1.0,
                    dy: 1.0
                }
            ]
        );
    }

    #[test]
    fn resizes_are_reported_once_things_settle() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut d = Debounce::new(ms(100), (400, 300));
        d.resized((410, 300), t0);
        d.resized((420, 300), t0 + ms(50));
        assert_eq!(d.due(t0 + ms(120)), None, "still settling");
        assert_eq!(d.deadline(), Some(t0 + ms(150)));
        assert_eq!(d.due(t0 + ms(150)), Some((420, 300)));
        assert_eq!(d.deadline(), None);
        // Back and forth to the same size, or minimised: nothing to report.
        d.resized((420, 300), t0 + ms(200));
        assert_eq!(d.due(t0 + ms(400)), None);
        d.resized((0, 0), t0 + ms(500));
        assert_eq!(d.due(t0 + ms(700)), None);
    }
}
