//! Each voice has the character it is named for: inharmonic bell partials, a marimba's fast
//! fading fourth harmonic, vibraphone tremolo, a bowed string's slow attack, percussive clicks.

mod common;

use common::*;
use voml_sound::{SoundEvent, Voice};

fn strike(voice: Voice, freq_hz: f64, duration_s: f64) -> Stereo {
    render(
        &[(
            0.0,
            SoundEvent::Tone {
                freq_hz,
                duration_s,
                volume: 0.8,
                pan: 0.0,
                voice,
            },
        )],
        duration_s + 0.5,
    )
}

/// Magnitude at `freq_hz`: the largest bin within 2 % of it.
fn magnitude_at(mags: &[f64], bin: f64, freq_hz: f64) -> f64 {
    let lo = (freq_hz * 0.98 / bin) as usize;
    let hi = (freq_hz * 1.02 / bin) as usize;
    mags[lo..=hi].iter().cloned().fold(0.0, f64::max)
}

#[test]
fn bell_has_inharmonic_partials() {
    let out = strike(Voice::Bell, 400.0, 1.0);
    let x = span(&out.left, 0.02, 0.5).to_vec();
    let (mags, bin) = spectrum(&x, RATE);
    let prime = magnitude_at(&mags, bin, 400.0);
    // Hum, tierce (a minor third up: not a harmonic) and the upper clang partials.
    for ratio in [0.5, 1.2, 1.5, 2.65] {
        let m = magnitude_at(&mags, bin, 400.0 * ratio);
        assert!(m > 0.05 * prime, "partial {ratio}: {:.3}", m / prime);
    }
    // Between partials there is nothing.
    assert!(magnitude_at(&mags, bin, 400.0 * 1.35) < 0.01 * prime);
    // And it rings: still audible after a second.
    assert!(rms(span(&out.left, 1.0, 1.1)) > 0.01 * rms(span(&out.left, 0.0, 0.1)));
}

#[test]
fn marimba_fourth_harmonic_fades_faster_than_the_fundamental() {
    let out = strike(Voice::Marimba, 300.0, 0.1);
    let ratio = |from: f64, to: f64| {
        let x = span(&out.left, from, to).to_vec();
        let (mags, bin) = spectrum(&x, RATE);
        magnitude_at(&mags, bin, 1200.0) / magnitude_at(&mags, bin, 300.0)
    };
    let early = ratio(0.0, 0.05);
    let late = ratio(0.3, 0.5);
    assert!(early > 0.2, "early fourth harmonic {early}");
    assert!(late < 0.05 * early, "late {late} vs early {early}");
    // A short woody decay: down by more than 20 dB within half a second.
    assert!(rms(span(&out.left, 0.5, 0.55)) < 0.1 * rms(span(&out.left, 0.0, 0.05)));
}

#[test]
fn held_vibes_shimmer_with_tremolo() {
    let out = render(
        &[
            (
                0.0,
                SoundEvent::Channel {
                    channel: 0,
                    voice: Voice::Vibes,
                    pan: 0.0,
                    volume: 1.0,
                    mute: false,
                },
            ),
            (
                0.0,
                SoundEvent::NoteOn {
                    channel: 0,
                    pitch_hz: 500.0,
                    volume: 1.0,
                },
            ),
        ],
        6.0,
    );
    // Level in 10 ms windows over the settled sustain, then the spectrum of that level.
    let level: Vec<f32> = levels(span(&out.left, 4.0, 6.0), 480)
        .into_iter()
        .map(|v| v as f32)
        .collect();
    let mean = level.iter().sum::<f32>() / level.len() as f32;
    let centred: Vec<f32> = level.iter().map(|v| v - mean).collect();
    let f = peak_frequency(&centred, 100, 1.0, 20.0);
    assert!((f - 5.5).abs() < 0.3, "tremolo at {f} Hz");
    let max = level.iter().cloned().fold(0.0, f32::max);
    let min = level.iter().cloned().fold(f32::INFINITY, f32::min);
    assert!(max > 1.2 * min, "tremolo depth {}", max / min);
}

#[test]
fn string_bows_in_slowly_and_sustains() {
    let out = strike(Voice::String, 440.0, 1.5);
    let start = rms(span(&out.left, 0.0, 0.02));
    let settled = rms(span(&out.left, 0.3, 0.4));
    let late = rms(span(&out.left, 1.3, 1.4));
    assert!(start < 0.3 * settled, "attack {start} vs {settled}");
    assert!(
        (late / settled - 1.0).abs() < 0.1,
        "sustain {late} vs {settled}"
    );
    // Bowed, not pure: clear upper harmonics.
    let x = span(&out.left, 0.5, 1.0).to_vec();
    let (mags, bin) = spectrum(&x, RATE);
    assert!(magnitude_at(&mags, bin, 880.0) > 0.2 * magnitude_at(&mags, bin, 440.0));
}

#[test]
fn noise_is_a_short_click() {
    let out = strike(Voice::Noise, 2000.0, 0.5);
    let burst = rms(span(&out.left, 0.0, 0.01));
    assert!(burst > 0.01);
    // A click, not a tone: gone within 50 ms even though the key is still down.
    assert!(rms(span(&out.left, 0.06, 0.3)) < 1e-3 * burst);
}
