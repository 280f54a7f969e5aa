//! The last line of defence between VOML and the Scheme engine: a panic inside a steel
//! built-in is caught where VOML calls into the engine and becomes a fault of the component
//! that was running, instead of ending the process with a backtrace.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use steel::SteelErr;

use crate::memory::Meter;

/// How a call into the engine failed.
pub(crate) enum Failure {
    /// A Scheme error (including an interrupt by the watchdog).
    Scheme(SteelErr),
    /// The engine panicked; the text is the panic's message.
    Panic(String),
}

thread_local! {
    /// Set while this thread is inside the engine: its panics are reported as faults, so
    /// the default hook's message and backtrace would only repeat them.
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !INSIDE.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// Runs `f` (a call into the engine) with its allocations charged to `meter`, turning a
/// panic into [`Failure::Panic`].
pub(crate) fn call<T>(
    meter: &Meter,
    f: impl FnOnce() -> Result<T, SteelErr>,
) -> Result<T, Failure> {
    install_hook();
    let _charged = meter.enter();
    let was = INSIDE.with(|i| i.replace(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    INSIDE.with(|i| i.set(was));
    match result {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Failure::Scheme(e)),
        Err(payload) => {
            let text = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".into());
            Err(Failure::Panic(text))
        }
    }
}
