//! The mix: constant-power panning, never clipping with 64 loud voices, muting, smooth volume
//! changes, click-free releases and voice stealing, master volume and loudness compensation.

mod common;

use common::*;
use voml_sound::{
    loudness_gain, processor_frequency, LoudnessCurve, SoundEvent, Synth, Voice, OUTPUT_CEILING,
};

fn sine(freq_hz: f64, duration_s: f64, volume: f64, pan: f64) -> SoundEvent {
    SoundEvent::Tone {
        freq_hz,
        duration_s,
        volume,
        pan,
        voice: Voice::Sine,
    }
}

fn channel(channel: u8, voice: Voice, volume: f64, mute: bool) -> SoundEvent {
    SoundEvent::Channel {
        channel,
        voice,
        pan: 0.0,
        volume,
        mute,
    }
}

#[test]
fn constant_power_pan() {
    let mut totals = Vec::new();
    for pan in [-1.0, 0.0, 1.0] {
        let out = render(&[(0.0, sine(440.0, 1.0, 0.5, pan))], 1.0);
        let l = energy(span(&out.left, 0.1, 0.9));
        let r = energy(span(&out.right, 0.1, 0.9));
        totals.push(l + r);
        if pan < 0.0 {
            assert!(r < 1e-9 * l, "pan -1: right {r} left {l}");
        } else if pan > 0.0 {
            assert!(l < 1e-9 * r, "pan 1: left {l} right {r}");
        } else {
            assert!((r / l - 1.0).abs() < 0.01, "pan 0: ratio {}", r / l);
        }
    }
    // The same total power wherever the note is placed.
    for t in &totals {
        assert!((t / totals[0] - 1.0).abs() < 0.01, "{totals:?}");
    }
}

#[test]
fn half_pan_is_between() {
    let out = render(&[(0.0, sine(440.0, 1.0, 0.5, 0.5))], 1.0);
    let l = rms(span(&out.left, 0.1, 0.9));
    let r = rms(span(&out.right, 0.1, 0.9));
    let want = 1.0 / (3.0 * std::f64::consts::FRAC_PI_8).tan();
    assert!((l / r - want).abs() < 0.01, "{} vs {want}", l / r);
}

fn assert_loud_but_unclipped(out: &Stereo, what: &str) {
    let p = peak(&out.left).max(peak(&out.right));
    assert!(p <= 1.0, "{what}: peak {p}");
    assert!(p <= OUTPUT_CEILING, "{what}: peak {p} above the ceiling");
    let level = rms(span(&out.mono(), 0.3, 0.9));
    assert!(level > 0.1, "{what}: too quiet ({level})");
}

#[test]
fn sixty_four_voices_at_full_volume_never_clip() {
    // Every voice, spread over Trace2au's range, all struck at the same instant.
    let events: Vec<(f64, SoundEvent)> = (0..64)
        .map(|p| {
            (
                0.1,
                SoundEvent::Tone {
                    freq_hz: processor_frequency(p, 64, 100.0, 3500.0),
                    duration_s: 1.0,
                    volume: 1.0,
                    pan: 0.0,
                    voice: Voice::ALL[p % 6],
                },
            )
        })
        .collect();
    assert_loud_but_unclipped(&render(&events, 1.0), "mixed voices");
}

#[test]
fn sixty_four_identical_low_notes_in_phase_never_clip() {
    // The worst case for a sum: 64 equal sines in phase, at a boosted low pitch.
    let events: Vec<(f64, SoundEvent)> =
        (0..64).map(|_| (0.1, sine(100.0, 1.0, 1.0, 0.0))).collect();
    let out = render(&events, 1.0);
    assert_loud_but_unclipped(&out, "identical sines");
    // Limiting is a smooth gain, not clipping: the waveform is still a clean sine.
    let x = span(&out.left, 0.3, 0.9).to_vec();
    let (mags, bin) = spectrum(&x, RATE);
    let fundamental = mags[(100.0 / bin).round() as usize];
    let third = mags[(300.0 / bin).round() as usize];
    assert!(
        third < 1e-3 * fundamental,
        "distortion {}",
        third / fundamental
    );
}

#[test]
fn held_chord_of_sixty_four_notes_never_clips() {
    let mut s = Synth::new(RATE);
    for c in 0..4u8 {
        let voice = [Voice::String, Voice::Vibes, Voice::Sine, Voice::Bell][c as usize];
        s.schedule(0.0, channel(c, voice, 1.0, false));
    }
    for p in 0..64 {
        s.schedule(
            0.0,
            SoundEvent::NoteOn {
                channel: (p % 4) as u8,
                pitch_hz: processor_frequency(p, 64, 100.0, 3500.0),
                volume: 1.0,
            },
        );
    }
    let out = render_synth(&mut s, 2.0);
    assert_loud_but_unclipped(&out, "held chord");
    assert!(s.limiter_gain() < 1.0);
}

#[test]
fn muted_channel_is_silent() {
    let events = [
        (0.0, channel(1, Voice::Marimba, 1.0, true)),
        (
            0.1,
            SoundEvent::NoteOn {
                channel: 1,
                pitch_hz: 440.0,
                volume: 1.0,
            },
        ),
        (
            0.2,
            SoundEvent::NoteOn {
                channel: 1,
                pitch_hz: 660.0,
                volume: 1.0,
            },
        ),
    ];
    let out = render(&events, 0.5);
    assert_eq!(peak(&out.left), 0.0);
    assert_eq!(peak(&out.right), 0.0);
}

#[test]
fn muting_a_sounding_channel_fades_it_out_without_a_click() {
    let events = [
        (0.0, channel(2, Voice::Sine, 1.0, false)),
        (
            0.0,
            SoundEvent::NoteOn {
                channel: 2,
                pitch_hz: 200.0,
                volume: 1.0,
            },
        ),
        (0.5, channel(2, Voice::Sine, 1.0, true)),
        (
            0.5,
            SoundEvent::NoteOn {
                channel: 3,
                pitch_hz: 200.0,
                volume: 0.0,
            },
        ),
    ];
    let out = render(&events, 1.0);
    let before = rms(span(&out.left, 0.3, 0.5));
    let after = rms(span(&out.left, 0.6, 1.0));
    assert!(before > 0.05);
    assert!(after < before * 1e-4, "{after} vs {before}");
    let amplitude = peak(&out.left);
    assert!(max_second_difference(&out.left) < 0.05 * amplitude);
}

#[test]
fn volume_change_on_held_note_is_smooth() {
    let events = [
        (
            0.0,
            SoundEvent::NoteOn {
                channel: 0,
                pitch_hz: 1000.0,
                volume: 0.2,
            },
        ),
        (
            1.0,
            SoundEvent::SetVolume {
                channel: 0,
                pitch_hz: Some(1000.0),
                volume: 0.8,
            },
        ),
    ];
    let out = render(&events, 1.5);
    // 1 ms windows hold exactly one period of the 1 kHz note at 48 kHz.
    let lv = levels(&out.left, 48);
    let quiet = lv[900];
    let loud = lv[1400];
    assert!((loud / quiet - 4.0).abs() < 0.05, "ratio {}", loud / quiet);
    let rise = loud - quiet;
    // No step: no millisecond carries more than a tenth of the change.
    for w in lv[990..1200].windows(2) {
        assert!((w[1] - w[0]).abs() < 0.1 * rise, "step of {}", w[1] - w[0]);
    }
    // A glide, not a jump: a quarter of the way after a few ms, nearly there after 60 ms.
    let at = |ms: usize| (lv[1000 + ms] - quiet) / rise;
    assert!(at(2) < 0.25, "{}", at(2));
    assert!(at(60) > 0.9, "{}", at(60));
    assert!(max_second_difference(&out.left) < 0.05 * peak(&out.left));
}

#[test]
fn swell_of_many_small_steps_has_no_zipper_noise() {
    // The idle-burst swell: the volume is raised every 20 ms while the note is held.
    let mut events = vec![(
        0.0,
        SoundEvent::NoteOn {
            channel: 5,
            pitch_hz: 300.0,
            volume: 0.05,
        },
    )];
    for i in 1..50 {
        events.push((
            i as f64 * 0.02,
            SoundEvent::SetVolume {
                channel: 5,
                pitch_hz: None,
                volume: 0.05 + 0.019 * i as f64,
            },
        ));
    }
    let out = render(&events, 1.2);
    // Zipper noise is energy far above the note: compare the band above 2 kHz with the note.
    let x = span(&out.left, 0.1, 1.0).to_vec();
    let (mags, bin) = spectrum(&x, RATE);
    let note = mags[(300.0 / bin).round() as usize];
    let hiss = mags[(2000.0 / bin) as usize..]
        .iter()
        .cloned()
        .fold(0.0, f64::max);
    assert!(
        hiss < 1e-4 * note,
        "zipper at {:.1} dB",
        20.0 * (hiss / note).log10()
    );
}

#[test]
fn releases_and_steals_do_not_click() {
    // Four voices of polyphony, a fifth note steals one; notes end by note-off and by duration.
    let mut s = Synth::with_polyphony(RATE, 4);
    for i in 0..4 {
        s.schedule(
            0.0,
            SoundEvent::NoteOn {
                channel: 0,
                pitch_hz: 200.0 + 10.0 * i as f64,
                volume: 0.5,
            },
        );
    }
    s.schedule(0.4, sine(260.0, 0.3, 0.5, 0.0));
    s.schedule(
        0.8,
        SoundEvent::NoteOff {
            channel: 0,
            pitch_hz: 220.0,
        },
    );
    let out = render_synth(&mut s, 1.2);
    let amplitude = peak(&out.left);
    assert!(amplitude > 0.1);
    let worst = max_second_difference(&out.left);
    assert!(
        worst < 0.05 * amplitude,
        "click of {worst} at amplitude {amplitude}"
    );
}

#[test]
fn stealing_keeps_polyphony_and_plays_the_new_note() {
    let mut s = Synth::with_polyphony(RATE, 64);
    for i in 0..64 {
        s.schedule(
            0.0,
            SoundEvent::NoteOn {
                channel: 0,
                pitch_hz: 200.0 + i as f64,
                volume: 0.05,
            },
        );
    }
    s.schedule(
        0.5,
        SoundEvent::NoteOn {
            channel: 1,
            pitch_hz: 3000.0,
            volume: 1.0,
        },
    );
    let out = render_synth(&mut s, 1.0);
    assert!(s.active_voices() <= 64);
    let f = peak_frequency(span(&out.left, 0.6, 1.0), RATE, 100.0, 8000.0);
    assert!((f - 3000.0).abs() < 5.0, "{f}");
}

#[test]
fn master_volume_scales_output() {
    let full = render(&[(0.0, sine(500.0, 1.0, 0.5, 0.0))], 1.0);
    let half = render(
        &[
            (0.0, SoundEvent::Master { volume: 0.5 }),
            (0.0, sine(500.0, 1.0, 0.5, 0.0)),
        ],
        1.0,
    );
    let ratio = rms(span(&half.left, 0.2, 0.8)) / rms(span(&full.left, 0.2, 0.8));
    assert!((ratio - 0.5).abs() < 0.005, "{ratio}");
}

#[test]
fn loudness_curve_boosts_low_notes() {
    let level = |curve: LoudnessCurve, f: f64| {
        let mut s = Synth::new(RATE);
        s.set_loudness_curve(curve);
        s.schedule(0.0, sine(f, 1.0, 0.5, 0.0));
        rms(span(&render_synth(&mut s, 1.0).left, 0.2, 0.8))
    };
    let flat = level(LoudnessCurve::Flat, 100.0) / level(LoudnessCurve::Flat, 1000.0);
    assert!((flat - 1.0).abs() < 0.01, "{flat}");
    let eq =
        level(LoudnessCurve::EqualLoudness, 100.0) / level(LoudnessCurve::EqualLoudness, 1000.0);
    let want = loudness_gain(LoudnessCurve::EqualLoudness, 100.0);
    assert!((eq / want - 1.0).abs() < 0.01, "{eq} vs {want}");
    assert!(eq > 3.0);
}

#[test]
fn bad_values_make_no_noise_and_no_panic() {
    let events = [
        (f64::NAN, sine(f64::NAN, 1.0, 1.0, 0.0)),
        (-1.0, sine(440.0, f64::INFINITY, f64::NAN, f64::NAN)),
        (0.1, sine(-5.0, 1.0, 1.0, 0.0)),
        (0.1, sine(1e9, 0.1, 2.0, 7.0)),
        (
            0.2,
            SoundEvent::SetVolume {
                channel: 9,
                pitch_hz: Some(f64::NAN),
                volume: f64::NAN,
            },
        ),
        (f64::INFINITY, SoundEvent::Master { volume: 0.0 }),
    ];
    let out = render(&events, 0.5);
    assert!(out
        .left
        .iter()
        .chain(&out.right)
        .all(|v| v.is_finite() && v.abs() <= 1.0));
}
