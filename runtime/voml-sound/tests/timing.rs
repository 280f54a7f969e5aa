//! Events sound when they are scheduled: sample-exact starts, onsets of a sequence within a few
//! milliseconds, held notes lasting until their note-off, and output that does not depend on
//! scheduling order or on how rendering is sliced.

mod common;

use common::*;
use voml_sound::{SoundEvent, Synth, Voice};

fn tone(voice: Voice, freq_hz: f64, duration_s: f64) -> SoundEvent {
    SoundEvent::Tone {
        freq_hz,
        duration_s,
        volume: 0.7,
        pan: 0.0,
        voice,
    }
}

#[test]
fn a_tone_starts_at_its_exact_frame() {
    for at in [0.0, 0.5, 0.123_456, 1.000_01] {
        let out = render(&[(at, tone(Voice::Sine, 440.0, 0.2))], at + 0.3);
        let first = out.left.iter().position(|&v| v != 0.0).expect("sound");
        // The attack ramp starts from zero at the scheduled frame.
        let expected = frame(at);
        assert!(
            first == expected || first == expected + 1,
            "at {at}: first sound at frame {first}, expected {expected}"
        );
    }
}

#[test]
fn onsets_of_a_sequence_within_five_ms() {
    let times = [0.1, 0.31, 0.52, 0.8, 0.95, 1.234, 1.5, 1.75, 2.02];
    let voices = [
        Voice::Marimba,
        Voice::Sine,
        Voice::Noise,
        Voice::Vibes,
        Voice::Bell,
    ];
    let mut events: Vec<(f64, SoundEvent)> = times
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            let voice = voices[i % voices.len()];
            (t, tone(voice, 300.0 + 150.0 * i as f64, 0.04))
        })
        .collect();
    // Out of order on purpose: the queue sorts.
    events.reverse();
    events.swap(1, 5);
    let out = render(&events, 2.4);
    let found = onsets(&out.mono(), RATE);
    assert_eq!(found.len(), times.len(), "found onsets {found:?}");
    for (&want, &got) in times.iter().zip(&found) {
        assert!(
            (got - want).abs() < 0.005,
            "onset scheduled at {want} found at {got:.4}"
        );
    }
}

#[test]
fn scheduling_order_does_not_matter() {
    let events: Vec<(f64, SoundEvent)> = (0..30)
        .map(|i| {
            (
                (i * 7 % 30) as f64 * 0.03,
                tone(Voice::ALL[i % 6], 200.0 + 37.0 * i as f64, 0.05),
            )
        })
        .collect();
    let mut sorted = events.clone();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let a = voml_sound::render_to_vec(&events, 1.2, RATE);
    let b = voml_sound::render_to_vec(&sorted, 1.2, RATE);
    assert!(a == b);
}

#[test]
fn output_does_not_depend_on_render_slicing() {
    let setup = || {
        let mut s = Synth::new(RATE);
        for i in 0..20 {
            s.schedule(
                i as f64 * 0.021,
                tone(Voice::ALL[i % 6], 150.0 * (1 + i) as f64, 0.1),
            );
        }
        s
    };
    let frames = frame(0.6);
    let mut whole = vec![0.0; 2 * frames];
    setup().render(&mut whole);
    for slice in [1, 7, 64, 441, 1000] {
        let mut s = setup();
        let mut pieces = Vec::with_capacity(2 * frames);
        let mut buf = vec![0.0; 2 * slice];
        while pieces.len() < 2 * frames {
            let n = (2 * frames - pieces.len()).min(2 * slice);
            s.render(&mut buf[..n]);
            pieces.extend_from_slice(&buf[..n]);
        }
        assert!(pieces == whole, "slices of {slice} frames differ");
        assert_eq!(s.frames_rendered(), frames as u64);
    }
}

#[test]
fn held_note_lasts_until_note_off() {
    for (voice, release_s) in [
        (Voice::Sine, 0.04),
        (Voice::String, 0.25),
        (Voice::Vibes, 0.15),
    ] {
        let events = [
            (
                0.0,
                SoundEvent::Channel {
                    channel: 3,
                    voice,
                    pan: 0.0,
                    volume: 1.0,
                    mute: false,
                },
            ),
            (
                0.1,
                SoundEvent::NoteOn {
                    channel: 3,
                    pitch_hz: 440.0,
                    volume: 0.8,
                },
            ),
            (
                2.0,
                SoundEvent::NoteOff {
                    channel: 3,
                    pitch_hz: 440.0,
                },
            ),
        ];
        let out = render(&events, 2.0 + release_s + 0.2);
        let x = out.mono();
        let early = rms(span(&x, 0.6, 0.7));
        let late = rms(span(&x, 1.9, 2.0));
        assert!(early > 0.01, "{voice}: silent while held");
        // Sustained voices hold their level; vibes settle onto their pedal sustain.
        assert!(
            late > 0.3 * early,
            "{voice}: died before note-off ({late} vs {early})"
        );
        // After the release time the note has fallen 80 dB: silence.
        let after = rms(span(&x, 2.0 + release_s + 0.01, 2.0 + release_s + 0.2));
        assert!(
            after < early * 1e-3,
            "{voice}: still sounding after release ({after})"
        );
    }
}

#[test]
fn note_off_releases_only_its_own_note() {
    let on = |pitch_hz| SoundEvent::NoteOn {
        channel: 0,
        pitch_hz,
        volume: 0.8,
    };
    let events = [
        (0.0, on(300.0)),
        (0.0, on(1200.0)),
        (
            0.5,
            SoundEvent::NoteOff {
                channel: 0,
                pitch_hz: 1200.0,
            },
        ),
    ];
    let out = render(&events, 1.0);
    let x = span(&out.left, 0.7, 1.0).to_vec();
    let f = peak_frequency(&x, RATE, 50.0, 5000.0);
    assert!((f - 300.0).abs() < 3.0, "{f}");
    let (mags, bin) = spectrum(&x, RATE);
    assert!(mags[(1200.0 / bin) as usize] < 1e-3 * mags[(300.0 / bin).round() as usize]);
}

#[test]
fn a_minute_of_output_keeps_time() {
    // After a minute of output the synth's clock and the output length agree to the frame.
    let mut s = Synth::new(44_100);
    let mut buf = vec![0.0; 2 * 1000];
    for _ in 0..(60 * 44_100 / 1000) {
        s.render(&mut buf);
    }
    assert_eq!(s.frames_rendered(), 60 * 44_100 / 1000 * 1000);
    assert!((s.time_s() - 59.99).abs() < 0.01);
}
