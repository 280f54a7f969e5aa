//! Live output on a real device: the default one, which may be missing (then `start` must say
//! so in one line, without panicking or hanging), and ALSA's `null` device where it exists,
//! which consumes audio as fast as it is made.

#![cfg(feature = "live")]

use std::sync::mpsc;
use std::time::{Duration, Instant};

use voml_sound::{LiveError, LiveOptions, LiveOutput, SoundEvent, Voice};

/// Run `f` on another thread; fail the test if it takes longer than `limit`.
fn within<T: Send + 'static>(
    limit: Duration,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|e| panic!("{what} did not finish within {limit:?}: {e}"))
}

fn tone() -> SoundEvent {
    SoundEvent::Tone {
        freq_hz: 440.0,
        duration_s: 0.2,
        volume: 0.5,
        pan: 0.0,
        voice: Voice::Sine,
    }
}

/// Whether this Linux machine has no sound card at all.
fn no_sound_card() -> bool {
    cfg!(target_os = "linux")
        && std::fs::read_to_string("/proc/asound/cards")
            .map_or(true, |cards| cards.contains("no soundcards"))
        && std::env::var_os("PULSE_SERVER").is_none()
}

#[test]
fn default_device_plays_or_is_reported_missing_in_one_line() {
    let result = within(Duration::from_secs(30), "LiveOutput::start", || {
        LiveOutput::start(LiveOptions::default()).map(|mut live| {
            assert!(live.sample_rate() >= 1000);
            assert!(live.latency_s() > 0.0);
            let at = live.now_s() + live.latency_s();
            live.send(at, tone())
                .expect("an empty queue takes an event");
            std::thread::sleep(Duration::from_millis(100));
            live.stop();
        })
    });
    match result {
        Ok(()) => eprintln!("the default device played"),
        Err(e) => {
            let message = e.to_string();
            eprintln!("{message}");
            assert_eq!(message.lines().count(), 1, "{message:?}");
            assert!(message.contains("--audio FILE.wav"), "{message}");
            if no_sound_card() {
                assert_eq!(e, LiveError::NoDevice);
                assert_eq!(
                    message,
                    "no audio output device; sound is not played (use --audio FILE.wav to render it)"
                );
            }
        }
    }
}

#[test]
fn an_unknown_device_is_reported() {
    let options = LiveOptions {
        device: Some("no-such-device-anywhere".into()),
        ..LiveOptions::default()
    };
    let result = within(Duration::from_secs(30), "LiveOutput::start", || {
        LiveOutput::start(options).map(|_| ())
    });
    match result {
        Err(LiveError::UnknownDevice(name)) => assert_eq!(name, "no-such-device-anywhere"),
        Err(LiveError::NoDevice) => {}
        other => panic!("expected an unknown device, got {other:?}"),
    }
}

/// Open ALSA's `null` device, or say why not (it exists wherever alsa-lib's standard
/// configuration is installed).
fn open_null(buffer_frames: Option<u32>) -> Option<LiveOutput> {
    let options = LiveOptions {
        device: Some("null".into()),
        buffer_frames,
        ..LiveOptions::default()
    };
    match within(Duration::from_secs(30), "opening the null device", || {
        LiveOutput::start(options)
    }) {
        Ok(live) => Some(live),
        Err(e)
            if cfg!(target_os = "linux")
                && std::path::Path::new("/usr/share/alsa/alsa.conf").exists() =>
        {
            panic!("ALSA's null device should open: {e}")
        }
        Err(e) => {
            eprintln!("skipped: no ALSA null device ({e})");
            None
        }
    }
}

#[test]
fn null_device_consumes_frames_and_the_clock_advances() {
    let Some(mut live) = open_null(None) else {
        return;
    };
    assert_eq!(live.channels(), 2);
    assert!(live.buffer_frames() > 0);
    let rate = f64::from(live.sample_rate());
    let expected = f64::from(2 * live.buffer_frames() + 160) / rate;
    assert!(
        (live.latency_s() - expected).abs() < 0.01,
        "latency {} s for a {}-frame buffer",
        live.latency_s(),
        live.buffer_frames()
    );
    let t0 = live.now_s();
    live.send(t0 + live.latency_s(), tone()).unwrap();
    let started = Instant::now();
    let mut last = t0;
    // The null device takes audio as fast as it is rendered: half a second of output is quick.
    while live.now_s() < t0 + 0.5 {
        let now = live.now_s();
        assert!(now >= last, "the output clock never goes back");
        last = now;
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the clock stalled at {now} s after {} callbacks",
            live.callbacks()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(live.callbacks() > 0);
    // The clock is whole frames divided by the rate: multiplying back is exact up to
    // floating-point rounding.
    let frames = live.now_s() * rate;
    assert!(
        (frames - frames.round()).abs() < 1e-6,
        "the clock counts whole frames: {frames}"
    );
    assert!(live
        .measured_latency_s()
        .is_some_and(|m| m > 0.0 && m < 1.0));
    assert_eq!(live.stream_errors(), 0);
    within(Duration::from_secs(10), "stop", move || live.stop());
}

#[test]
fn null_device_takes_a_requested_buffer_size() {
    let Some(live) = open_null(Some(256)) else {
        return;
    };
    assert_eq!(live.buffer_frames(), 256);
    let expected = f64::from(2 * 256 + 160) / f64::from(live.sample_rate());
    assert!((live.latency_s() - expected).abs() < 1e-9);
    within(Duration::from_secs(10), "stop", move || live.stop());
}
