//! Every pitched voice sounds at the frequency it was asked for, and the noise voice's colour
//! follows its pitch.

mod common;

use common::*;
use voml_sound::{midi_to_hz, SoundEvent, Voice};

fn tone(voice: Voice, freq_hz: f64) -> Vec<(f64, SoundEvent)> {
    vec![(
        0.0,
        SoundEvent::Tone {
            freq_hz,
            duration_s: 1.5,
            volume: 0.8,
            pan: 0.0,
            voice,
        },
    )]
}

#[test]
fn fundamental_of_every_pitched_voice_within_one_percent() {
    for voice in Voice::ALL.into_iter().filter(|v| v.is_pitched()) {
        for freq in [110.0, 261.63, 440.0, 1000.0, 2500.0] {
            let out = render(&tone(voice, freq), 1.3);
            // Skip the attack; a second of the note resolves peaks to well under 1 %.
            let x = span(&out.mono(), 0.2, 1.2).to_vec();
            let est = peak_frequency(&x, RATE, 30.0, 12_000.0);
            let err = (est / freq - 1.0).abs();
            assert!(
                err < 0.01,
                "{voice} at {freq} Hz sounded at {est:.2} Hz ({:.3} %)",
                100.0 * err
            );
        }
    }
}

#[test]
fn midi_pitch_sounds_in_tune() {
    let a4 = midi_to_hz(69.0);
    let out = render(&tone(Voice::Sine, a4), 1.0);
    let est = peak_frequency(span(&out.left, 0.1, 0.9), RATE, 100.0, 2000.0);
    assert!((est - 440.0).abs() < 0.5, "{est}");
}

#[test]
fn noise_is_coloured_by_its_pitch() {
    // Many short bursts, so the spectrum is an average rather than one random draw.
    let bursts = |freq_hz: f64| -> Vec<(f64, SoundEvent)> {
        (0..40)
            .map(|i| {
                (
                    i as f64 * 0.05,
                    SoundEvent::Tone {
                        freq_hz,
                        duration_s: 0.02,
                        volume: 1.0,
                        pan: 0.0,
                        voice: Voice::Noise,
                    },
                )
            })
            .collect()
    };
    let low = spectral_centroid(&render(&bursts(200.0), 2.0).mono(), RATE);
    let mid = spectral_centroid(&render(&bursts(1000.0), 2.0).mono(), RATE);
    let high = spectral_centroid(&render(&bursts(4000.0), 2.0).mono(), RATE);
    assert!(low < mid && mid < high, "{low:.0} {mid:.0} {high:.0}");
}

#[test]
fn high_notes_do_not_alias() {
    // A 3.5 kHz string (Trace2au's top frequency) keeps only harmonics below 20 kHz: nothing
    // may fold back below the fundamental.
    let out = render(&tone(Voice::String, 3500.0), 1.0);
    let x = span(&out.mono(), 0.2, 0.9).to_vec();
    let (mags, bin) = spectrum(&x, RATE);
    let top = mags.iter().cloned().fold(0.0, f64::max);
    let below = mags[(100.0 / bin) as usize..(3000.0 / bin) as usize]
        .iter()
        .cloned()
        .fold(0.0, f64::max);
    assert!(
        below < top * 1e-3,
        "aliasing at {:.1} dB",
        20.0 * (below / top).log10()
    );
}
