//! Offline rendering to WAV: the file reads back with the right format, length and content.

use voml_sound::{render_to_vec, render_wav, write_wav, SoundEvent, Voice};

fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("voml-sound-{}-{name}.wav", std::process::id()))
}

fn events() -> Vec<(f64, SoundEvent)> {
    (0..8)
        .map(|i| {
            (
                i as f64 * 0.1,
                SoundEvent::Tone {
                    freq_hz: 220.0 * (1.0 + i as f64 / 4.0),
                    duration_s: 0.08,
                    volume: 0.9,
                    pan: -1.0 + i as f64 / 4.0,
                    voice: Voice::ALL[i % 6],
                },
            )
        })
        .collect()
}

#[test]
fn wav_reads_back_with_format_length_and_samples() {
    let path = temp_path("roundtrip");
    let rate = 44_100;
    let duration = 1.25;
    render_wav(&events(), duration, rate, &path).unwrap();

    let mut reader = hound::WavReader::open(&path).unwrap();
    let spec = reader.spec();
    assert_eq!(spec.channels, 2);
    assert_eq!(spec.sample_rate, rate);
    assert_eq!(spec.bits_per_sample, 16);
    assert_eq!(spec.sample_format, hound::SampleFormat::Int);
    let frames = (duration * f64::from(rate)).round() as u32;
    assert_eq!(reader.duration(), frames);
    let samples: Vec<i16> = reader.samples::<i16>().map(Result::unwrap).collect();
    assert_eq!(samples.len(), 2 * frames as usize);

    let reference = render_to_vec(&events(), duration, rate);
    for (&got, &want) in samples.iter().zip(&reference) {
        assert!((f32::from(got) / 32767.0 - want).abs() <= 1.0 / 32767.0);
    }
    assert!(samples.iter().any(|&s| s.unsigned_abs() > 3000), "audible");
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn write_wav_clamps_and_rejects_incomplete_frames() {
    let path = temp_path("clamp");
    write_wav(&[2.0, -2.0, 0.0, 0.5], 8000, &path).unwrap();
    let samples: Vec<i16> = hound::WavReader::open(&path)
        .unwrap()
        .samples::<i16>()
        .map(Result::unwrap)
        .collect();
    assert_eq!(samples, vec![32767, -32767, 0, 16384]);
    std::fs::remove_file(&path).unwrap();

    let odd = temp_path("odd");
    assert!(write_wav(&[0.0, 0.1, 0.2], 8000, &odd).is_err());
    let _ = std::fs::remove_file(&odd);
}

#[test]
fn low_sample_rates_work() {
    // Trace2au's SPARCstation rate: 8 kHz, where only partials below 3.6 kHz may sound.
    let out = render_to_vec(&events(), 1.0, 8000);
    assert_eq!(out.len(), 2 * 8000);
    assert!(out.iter().all(|s| s.is_finite() && s.abs() <= 1.0));
    assert!(out.iter().any(|s| s.abs() > 0.05));
}
