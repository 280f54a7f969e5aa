//! The auralization mappings: Trace2au's processor map and mixing rule, meters, scales and
//! processor classes.

use voml_sound::{
    hz_to_midi, meter_pitch, midi_to_hz, processor_frequency, quantize_to_scale,
    trace2au_mix_volume, Partition, Scale, TRACE2AU_F_MAX, TRACE2AU_F_MIN,
};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn processor_frequency_matches_trace2au_formula() {
    let (lo, hi) = (TRACE2AU_F_MIN, TRACE2AU_F_MAX);
    assert_eq!((lo, hi), (100.0, 3500.0));
    for n in [2usize, 5, 16, 64, 1000] {
        assert!(close(processor_frequency(0, n, lo, hi), 100.0));
        assert!(close(processor_frequency(n - 1, n, lo, hi), 3500.0));
        // f_n = α^(n-1) f_min with α = (f_max/f_min)^(1/(N-1)).
        let alpha = (hi / lo).powf(1.0 / (n as f64 - 1.0));
        for p in 0..n.min(20) {
            assert!(close(
                processor_frequency(p, n, lo, hi),
                lo * alpha.powi(p as i32)
            ));
        }
    }
    // With an odd count the middle processor sits at the geometric mean.
    assert!(close(processor_frequency(8, 17, lo, hi), (lo * hi).sqrt()));
    assert!(close(
        processor_frequency(32, 65, lo, hi),
        591.607_978_309_961_6
    ));
    // Degenerate cases.
    assert_eq!(processor_frequency(0, 1, lo, hi), lo);
    assert_eq!(
        processor_frequency(99, 16, lo, hi),
        processor_frequency(15, 16, lo, hi)
    );
}

#[test]
fn meter_maps_percentages_into_a_range() {
    assert!(close(meter_pitch(0.0, 200.0, 800.0), 200.0));
    assert!(close(meter_pitch(100.0, 200.0, 800.0), 800.0));
    assert!(close(meter_pitch(50.0, 200.0, 800.0), 400.0));
    assert!(close(meter_pitch(-5.0, 200.0, 800.0), 200.0));
    assert!(close(meter_pitch(150.0, 200.0, 800.0), 800.0));
    assert!(meter_pitch(30.0, 200.0, 800.0) < meter_pitch(31.0, 200.0, 800.0));
}

#[test]
fn scale_quantisation_examples() {
    let c4 = midi_to_hz(60.0);
    let a3 = midi_to_hz(57.0);
    let note = |f: f64| hz_to_midi(f).round() as i32;
    let is_note = |f: f64, m: i32| (hz_to_midi(f) - f64::from(m)).abs() < 1e-9;

    // Chromatic: the nearest semitone. 450 Hz is 39 cents above A4.
    assert!(is_note(quantize_to_scale(450.0, Scale::Chromatic, c4), 69));
    // C major: 375 Hz (between F#4 and G4, nearer G) goes to G4; E4 stays E4.
    assert!(is_note(quantize_to_scale(375.0, Scale::Major, c4), 67));
    assert!(is_note(
        quantize_to_scale(midi_to_hz(64.0), Scale::Major, c4),
        64
    ));
    // C#4 is halfway between C4 and D4: ties go down.
    assert!(is_note(
        quantize_to_scale(midi_to_hz(61.0), Scale::Major, c4),
        60
    ));
    // A minor pentatonic (A C D E G): B3 is nearer C4 than A3.
    assert!(is_note(
        quantize_to_scale(midi_to_hz(59.0), Scale::MinorPentatonic, a3),
        60
    ));
    // F#4 lies between E4 and G4, a semitone from G4: G4.
    assert!(is_note(
        quantize_to_scale(midi_to_hz(66.0), Scale::MinorPentatonic, a3),
        67
    ));
    // Whole tone on C: 285 Hz (1.48 semitones above C4) goes to D4.
    assert!(is_note(quantize_to_scale(285.0, Scale::WholeTone, c4), 62));
    // Works in any octave of the tonic: 100 Hz (a third of a semitone above G2) is G2.
    assert!(is_note(quantize_to_scale(100.0, Scale::Major, c4), 43));
    // B4 + 40 cents rounds up across the octave to C5.
    assert!(is_note(
        quantize_to_scale(midi_to_hz(71.6), Scale::Major, c4),
        72
    ));

    // Quantising a scale note leaves it alone, for every scale.
    for scale in Scale::ALL {
        for step in -10..20 {
            let f = scale.step_hz(c4, step);
            assert!(
                close(quantize_to_scale(f, scale, c4), f),
                "{scale} step {step}"
            );
            assert_eq!(note(f), note(quantize_to_scale(f * 1.002, scale, c4)));
        }
    }
}

#[test]
fn scale_steps_walk_through_octaves() {
    let c4 = midi_to_hz(60.0);
    assert!(close(Scale::Major.step_hz(c4, 0), c4));
    assert!(close(Scale::Major.step_hz(c4, 7), 2.0 * c4));
    assert!(close(Scale::Major.step_hz(c4, -1), midi_to_hz(59.0)));
    assert!(close(Scale::MinorPentatonic.step_hz(c4, 5), 2.0 * c4));
    assert!(close(Scale::WholeTone.step_hz(c4, 3), midi_to_hz(66.0)));
    assert_eq!(
        "minor_pentatonic".parse::<Scale>().unwrap(),
        Scale::MinorPentatonic
    );
    assert_eq!("Whole Tone".parse::<Scale>().unwrap(), Scale::WholeTone);
    assert!("dorian".parse::<Scale>().is_err());
    for s in Scale::ALL {
        assert_eq!(s.name().parse::<Scale>().unwrap(), s);
    }
}

#[test]
fn processor_classes_give_one_pitch_per_class() {
    // SLALOM's backsolve: 64 processors as the 8 rows of an 8 × 8 mesh.
    let rows = Partition::contiguous(64, 8);
    assert_eq!(rows.num_classes(), 8);
    assert_eq!(rows.class_of(0), Some(0));
    assert_eq!(rows.class_of(7), Some(0));
    assert_eq!(rows.class_of(8), Some(1));
    assert_eq!(rows.class_of(63), Some(7));
    assert_eq!(rows.class_of(64), None);
    let f = |p| rows.frequency_of(p, 100.0, 3500.0).unwrap();
    assert_eq!(f(3), f(5));
    assert!(f(8) > f(7));
    assert!(close(f(63), 3500.0));
    assert!(close(f(9), processor_frequency(1, 8, 100.0, 3500.0)));

    // Explicit groups: boundary processors apart from interior ones; 4 is in no class.
    let groups = Partition::from_groups(&[vec![0, 3, 5], vec![1, 2]]).unwrap();
    assert_eq!(groups.class_of(5), Some(0));
    assert_eq!(groups.class_of(2), Some(1));
    assert_eq!(groups.class_of(4), None);
    assert_eq!(groups.frequency_of(4, 100.0, 3500.0), None);
    assert!(close(
        groups.frequency_of(1, 100.0, 3500.0).unwrap(),
        3500.0
    ));

    let err = Partition::from_groups(&[vec![0, 1], vec![1]]).unwrap_err();
    assert_eq!(err.processor, 1);
    assert!(err.to_string().contains("processor 1"));

    let by_index = Partition::from_class_of(&[2, 0, 2, 1]);
    assert_eq!(by_index.num_classes(), 3);
    assert_eq!(by_index.class_of(2), Some(2));
    assert_eq!(Partition::contiguous(10, 3).class_of(9), Some(2));
}

#[test]
fn trace2au_mix_gets_louder_with_activity_but_stays_bounded() {
    let n = 64;
    let mut previous = 0.0;
    for sounding in 1..=n {
        let total = sounding as f64 * trace2au_mix_volume(sounding, n);
        assert!(total > previous && total <= 1.0 + 1e-12);
        previous = total;
    }
    assert!(close(trace2au_mix_volume(n, n), 1.0 / n as f64));
    // One processor of many: about an eighth, the quietest of the eight loudness levels.
    assert!(close(
        trace2au_mix_volume(1, n),
        1.0 / (1.0 + 7.0 * 63.0 / 64.0)
    ));
    assert_eq!(trace2au_mix_volume(0, n), 0.0);
}
