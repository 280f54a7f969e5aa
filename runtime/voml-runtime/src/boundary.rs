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

#[cfg(test)]
mod tests {
    use super::*;
    use steel::rvals::SteelVal;

    fn boom(_: &[SteelVal]) -> Result<SteelVal, SteelErr> {
        panic!("boom inside");
    }

    /// A panic inside a built-in the engine calls comes back as a failure with its message,
    /// and the engine still runs code afterwards.
    #[test]
    fn a_panic_inside_the_engine_is_a_failure_and_the_engine_goes_on() {
        let mut sandbox = crate::test_sandbox();
        let engine = &mut sandbox.engine;
        engine.register_value("boom", SteelVal::FuncV(boom));
        engine
            .compile_and_run_raw_program("(define (go x) (+ 1 (boom x))) (define (ok x) (* 2 x))")
            .unwrap();
        let meter = Meter::new();
        let go = engine.extract_value("go").unwrap();
        let failure = call(&meter, || {
            engine.call_function_with_args_from_mut_slice(go.clone(), &mut [SteelVal::IntV(1)])
        });
        match failure {
            Err(Failure::Panic(text)) => assert_eq!(text, "boom inside"),
            Err(Failure::Scheme(e)) => panic!("a Scheme error: {e}"),
            Ok(v) => panic!("a value: {v}"),
        }
        let ok = engine.extract_value("ok").unwrap();
        let value = call(&meter, || {
            engine.call_function_with_args_from_mut_slice(ok.clone(), &mut [SteelVal::IntV(21)])
        });
        assert!(matches!(value, Ok(SteelVal::IntV(42))));
        // Outside a call, a panic is not caught here (the flag is down again).
        assert!(!INSIDE.with(Cell::get));
    }
}
