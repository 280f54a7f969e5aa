//! Offline rendering: a list of timed events to samples in memory or to a WAV file.

use std::path::Path;

use crate::event::SoundEvent;
use crate::synth::Synth;

/// Render `duration_s` seconds of `events` (each at a time in seconds of output) to interleaved
/// stereo samples.
///
/// # Panics
/// If `sample_rate` is below 1000.
pub fn render_to_vec(events: &[(f64, SoundEvent)], duration_s: f64, sample_rate: u32) -> Vec<f32> {
    let mut synth = Synth::new(sample_rate);
    synth.reserve_events(events.len());
    for &(at, event) in events {
        synth.schedule(at, event);
    }
    let frames = if duration_s.is_finite() && duration_s > 0.0 {
        (duration_s * f64::from(sample_rate)).round() as usize
    } else {
        0
    };
    let mut out = vec![0.0; 2 * frames];
    synth.render(&mut out);
    out
}

/// Render like [`render_to_vec`] and write a 16-bit PCM stereo WAV file.
pub fn render_wav(
    events: &[(f64, SoundEvent)],
    duration_s: f64,
    sample_rate: u32,
    path: impl AsRef<Path>,
) -> Result<(), hound::Error> {
    let samples = render_to_vec(events, duration_s, sample_rate);
    write_wav(&samples, sample_rate, path)
}

/// Write interleaved stereo samples in `-1..=1` as a 16-bit PCM WAV file. An odd number of
/// samples (an incomplete frame) is an error.
pub fn write_wav(
    samples: &[f32],
    sample_rate: u32,
    path: impl AsRef<Path>,
) -> Result<(), hound::Error> {
    let spec = hound::WavSpec {
        channels: 2,
        sample_rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut writer = hound::WavWriter::create(path, spec)?;
    for &s in samples {
        // Round rather than truncate, so silence stays exactly 0 and no bias is added.
        writer.write_sample((s.clamp(-1.0, 1.0) * 32767.0).round() as i16)?;
    }
    writer.finalize()
}
