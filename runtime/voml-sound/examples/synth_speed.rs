//! Benchmark: how many seconds of 48 kHz stereo audio one core renders per second of CPU with
//! 64 notes sounding at once. Run with
//! `cargo run --release -p voml-sound --example synth_speed [seconds] [scenario filter]`.
//!
//! Time is the thread's own CPU time where Linux reports it, so other work on the machine does
//! not distort the figure; elsewhere it is wall-clock time.

use std::time::Instant;

use voml_sound::{processor_frequency, SoundEvent, Synth, Voice};

const RATE: u32 = 48_000;
const VOICES: usize = 64;
/// Frames per call, as an audio callback would ask for.
const CALLBACK: usize = 512;

fn main() {
    let seconds: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(60.0);
    let filter = std::env::args().nth(2).unwrap_or_default();
    let wanted = |name: &str| name.contains(&filter);

    for voice in Voice::ALL {
        let name = format!("{voice} held");
        if wanted(&name) {
            report(&name, seconds, |s| held(s, &[voice]));
        }
    }
    if wanted("mixed held") {
        report("mixed held", seconds, |s| {
            held(s, &[Voice::Sine, Voice::String, Voice::Vibes])
        });
    }
    if wanted("all voices retriggered") {
        report("all voices retriggered", seconds, |s| {
            retriggered(s, seconds)
        });
    }
}

/// 64 notes held for the whole run, on channels of the given voices, spread over the stereo
/// field and Trace2au's frequency range.
fn held(synth: &mut Synth, voices: &[Voice]) {
    for (c, &voice) in voices.iter().enumerate() {
        synth.schedule(
            0.0,
            SoundEvent::Channel {
                channel: c as u8,
                voice,
                pan: -1.0 + 2.0 * c as f64 / voices.len().max(2) as f64,
                volume: 1.0,
                mute: false,
            },
        );
    }
    for p in 0..VOICES {
        synth.schedule(
            0.0,
            SoundEvent::NoteOn {
                channel: (p % voices.len()) as u8,
                pitch_hz: processor_frequency(p, VOICES, 100.0, 3500.0),
                volume: 1.0,
            },
        );
    }
}

/// Every voice, 64 processors each striking a note every quarter second: polyphony stays
/// saturated and voices are stolen continually.
fn retriggered(synth: &mut Synth, seconds: f64) {
    let steps = (seconds * 4.0) as usize;
    synth.reserve_events(steps * VOICES);
    for step in 0..steps {
        for p in 0..VOICES {
            let voice = Voice::ALL[(p + step) % Voice::ALL.len()];
            synth.schedule(
                step as f64 * 0.25 + p as f64 * 0.002,
                SoundEvent::Tone {
                    freq_hz: processor_frequency(p, VOICES, 100.0, 3500.0),
                    duration_s: 0.2,
                    volume: 1.0,
                    pan: -1.0 + 2.0 * p as f64 / VOICES as f64,
                    voice,
                },
            );
        }
    }
}

fn report(name: &str, seconds: f64, setup: impl FnOnce(&mut Synth)) {
    let mut synth = Synth::new(RATE);
    setup(&mut synth);
    let mut buf = vec![0.0f32; 2 * CALLBACK];
    let frames = (seconds * f64::from(RATE)) as usize;
    let mut peak = 0.0f32;
    let mut max_voices = 0;
    let clock = Clock::start();
    let mut done = 0;
    while done < frames {
        synth.render(&mut buf);
        peak = buf.iter().fold(peak, |m, x| m.max(x.abs()));
        max_voices = max_voices.max(synth.active_voices());
        done += CALLBACK;
    }
    let cpu = clock.seconds();
    let audio = done as f64 / f64::from(RATE);
    println!(
        "{name:>24}: {:7.1}x real time ({audio:.0} s of audio in {cpu:.3} s, up to {max_voices} voices, peak {peak:.3})",
        audio / cpu
    );
}

/// CPU time of this thread, or wall time where that is not available.
struct Clock {
    wall: Instant,
    cpu_ns: Option<u64>,
}

impl Clock {
    fn start() -> Self {
        Clock {
            wall: Instant::now(),
            cpu_ns: thread_cpu_ns(),
        }
    }

    fn seconds(&self) -> f64 {
        match (self.cpu_ns, thread_cpu_ns()) {
            (Some(a), Some(b)) => (b - a) as f64 * 1e-9,
            _ => self.wall.elapsed().as_secs_f64(),
        }
    }
}

/// First field of the scheduler statistics: nanoseconds this thread has run on a CPU.
fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
