//! Benchmark: the latency of live output with the device's default buffer. Run with
//! `cargo run --release -p voml-sound --features live --example live_latency -- [--tone]
//! [--device NAME] [--buffer FRAMES]`.
//!
//! Opens the default output device (or `--device`, e.g. ALSA's `null`; the environment
//! variable `VOML_AUDIO_DEVICE` does the same), prints its buffer size, sample rate and the
//! latency figure [`LiveOutput::latency_s`] gives (the target is at most 20 ms), then plays for
//! a second (a 440 Hz tone with `--tone`, silence otherwise) and prints what the device's clock
//! measured. Without a device it prints the one-line warning and exits successfully, as a run
//! would go on without sound.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use voml_sound::{LiveOptions, LiveOutput, SoundEvent, Voice};

const TARGET_MS: f64 = 20.0;

fn main() -> ExitCode {
    let mut options = LiveOptions::from_env();
    let mut tone = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--tone" => tone = true,
            "--device" => options.device = args.next(),
            "--buffer" => match args.next().and_then(|n| n.parse().ok()) {
                Some(frames) => options.buffer_frames = Some(frames),
                None => return usage("--buffer needs a number of frames"),
            },
            other => return usage(&format!("unknown argument `{other}`")),
        }
    }

    let opened = Instant::now();
    let mut live = match LiveOutput::start(options) {
        Ok(live) => live,
        // `LiveError::NoDevice` on a machine without sound; any error is one line.
        Err(e) => {
            eprintln!("warning: {e}");
            return ExitCode::SUCCESS;
        }
    };
    let open_ms = opened.elapsed().as_secs_f64() * 1e3;
    let rate = f64::from(live.sample_rate());
    let latency_ms = live.latency_s() * 1e3;
    println!(
        "device: {} ({} channels, {:?}), opened in {open_ms:.1} ms",
        live.device_name(),
        live.channels(),
        live.sample_format()
    );
    println!("sample rate: {} Hz", live.sample_rate());
    println!(
        "buffer: {} frames per callback ({:.2} ms)",
        live.buffer_frames(),
        f64::from(live.buffer_frames()) / rate * 1e3
    );
    println!(
        "latency: {latency_ms:.2} ms ({} buffers + synth lead) — target <= {TARGET_MS} ms: {}",
        voml_sound::DEVICE_PERIODS,
        if latency_ms <= TARGET_MS {
            "met"
        } else {
            "NOT met"
        }
    );

    let start_s = live.now_s();
    if tone {
        let event = SoundEvent::Tone {
            freq_hz: 440.0,
            duration_s: 1.0,
            volume: 0.8,
            pan: 0.0,
            voice: Voice::Sine,
        };
        if let Err(full) = live.send(start_s + live.latency_s(), event) {
            eprintln!("warning: {full}");
        }
    }
    let wall = Instant::now();
    std::thread::sleep(Duration::from_millis(if tone { 1_100 } else { 1_000 }));
    let played_s = live.now_s() - start_s;
    let wall_s = wall.elapsed().as_secs_f64();
    match live.measured_latency_s() {
        Some(m) => println!("measured by the device clock: {:.2} ms", m * 1e3),
        None => println!("measured by the device clock: no callback yet"),
    }
    println!(
        "output clock: {played_s:.3} s rendered in {wall_s:.3} s ({} callbacks, {} stream errors, {} underruns)",
        live.callbacks(),
        live.stream_errors(),
        live.underruns()
    );
    live.stop();
    ExitCode::SUCCESS
}

fn usage(problem: &str) -> ExitCode {
    eprintln!("{problem}\nusage: live_latency [--tone] [--device NAME] [--buffer FRAMES]");
    ExitCode::FAILURE
}
