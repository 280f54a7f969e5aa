//! `voml run --audio`: the sound of a visual object rendered to WAV in step with trace time
//! (divided by --speed), checked by analysing the file: onsets within 5 ms of the scheduled
//! times, pitch within 1 %, pan, and the auralization example over the real MPICL trace.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::root;

fn voml(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_voml"))
        .args(args)
        .current_dir(root())
        .env("STEEL_HOME", std::env::temp_dir().join("voml-steel-home"))
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("voml-audio-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `spec` over `trace` (both given as text) with `--audio`; returns the WAV's rate, its
/// left and right channels, and what `voml` printed.
fn run_with_audio(
    name: &str,
    spec: &str,
    trace: &str,
    extra: &[&str],
) -> (u32, Vec<f32>, Vec<f32>, String) {
    let dir = temp(name);
    let (spec_path, trace_path, wav) = (
        dir.join("spec.voml"),
        dir.join("trace.trf"),
        dir.join("out.wav"),
    );
    std::fs::write(&spec_path, spec).unwrap();
    std::fs::write(&trace_path, trace).unwrap();
    let mut args = vec![
        "run",
        spec_path.to_str().unwrap(),
        "--trace",
        trace_path.to_str().unwrap(),
        "--headless",
        "--out",
        dir.to_str().unwrap(),
        "--audio",
        wav.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let (ok, stderr) = voml(&args);
    assert!(ok, "{stderr}");
    let (rate, left, right) = read_wav(&wav);
    let _ = std::fs::remove_dir_all(&dir);
    (rate, left, right, stderr)
}

/// Left and right channels as f32.
fn read_wav(path: &Path) -> (u32, Vec<f32>, Vec<f32>) {
    let mut reader = hound::WavReader::open(path).unwrap();
    let spec = reader.spec();
    assert_eq!(spec.channels, 2);
    let samples: Vec<f32> = reader
        .samples::<i16>()
        .map(|s| f32::from(s.unwrap()) / 32768.0)
        .collect();
    let left = samples.iter().step_by(2).copied().collect();
    let right = samples.iter().skip(1).step_by(2).copied().collect();
    (spec.sample_rate, left, right)
}

/// Times (s) where the level first rises after at least 50 ms of near silence.
fn onsets(rate: u32, signal: &[f32]) -> Vec<f64> {
    let mut out = Vec::new();
    let mut quiet = usize::MAX / 2;
    for (i, s) in signal.iter().enumerate() {
        if s.abs() > 0.01 {
            if quiet > rate as usize / 20 {
                out.push(i as f64 / f64::from(rate));
            }
            quiet = 0;
        } else {
            quiet += 1;
        }
    }
    out
}

/// Frequency from upward zero crossings over `from..to` seconds.
fn pitch(rate: u32, signal: &[f32], from: f64, to: f64) -> f64 {
    let (a, b) = (
        (from * f64::from(rate)) as usize,
        (to * f64::from(rate)) as usize,
    );
    let crossings: Vec<f64> = (a + 1..b)
        .filter(|&i| signal[i - 1] < 0.0 && signal[i] >= 0.0)
        .map(|i| {
            let (y0, y1) = (f64::from(signal[i - 1]), f64::from(signal[i]));
            (i - 1) as f64 + y0 / (y0 - y1)
        })
        .collect();
    let periods = (crossings.len() - 1) as f64;
    f64::from(rate) * periods / (crossings[crossings.len() - 1] - crossings[0])
}

const SPEC: &str = r#"<voml><body><visual-object name="beeps">
  <event-declarations>
    <data-event name="ping" rtype="entry" etype="1">
      <data-field name="ts" type="real"/><data-field name="hz" type="real"/><data-field name="pan" type="real"/>
    </data-event>
  </event-declarations>
  <event-processing>
    <ep-component name="ping" inputs="ping.ts.hz.pan">
      <input name="^0"><tone freq="^0/1" duration="0.3" volume="0.8" pan="^0/2" voice="sine"/></input>
    </ep-component>
  </event-processing>
</visual-object></body></voml>"#;

#[test]
fn tones_start_at_their_trace_times_with_their_pitch_and_pan() {
    // Trace time starts at 10.0 (the first record), so the tones sound at 0, 0.5, 1.25 and
    // 2.0 s of output when replayed at speed 2.
    let trace = "-3 1 10.0 440 -1\n-3 1 11.0 660 0\n-3 1 12.5 550 1\n-3 1 14.0 880 0\n";
    let (rate, left, right, stderr) = run_with_audio("tones", SPEC, trace, &["--speed", "2"]);
    assert!(stderr.contains("4 sound commands"), "{stderr}");
    let mono: Vec<f32> = left.iter().zip(&right).map(|(l, r)| l + r).collect();
    let found = onsets(rate, &mono);
    let expected = [0.0, 0.5, 1.25, 2.0];
    assert_eq!(found.len(), expected.len(), "onsets {found:?}");
    for (f, e) in found.iter().zip(expected) {
        assert!(
            (f - e).abs() < 0.005,
            "onset at {f:.4} s, expected {e} s ({found:?})"
        );
    }
    // Pitch within 1 %, measured in the steady middle of each 0.15 s tone.
    for (start, hz) in [(0.0, 440.0), (0.5, 660.0), (1.25, 550.0), (2.0, 880.0)] {
        let measured = pitch(rate, &mono, start + 0.03, start + 0.12);
        assert!(
            (measured - hz).abs() / hz < 0.01,
            "{hz} Hz measured as {measured:.1} Hz"
        );
    }
    // Pan: the first tone is left, the third right.
    let energy = |s: &[f32], from: f64| -> f64 {
        let a = (from * f64::from(rate)) as usize;
        s[a..a + rate as usize / 10]
            .iter()
            .map(|x| f64::from(*x).powi(2))
            .sum()
    };
    assert!(
        energy(&left, 0.02) > 20.0 * energy(&right, 0.02),
        "tone 1 is not on the left"
    );
    assert!(
        energy(&right, 1.27) > 20.0 * energy(&left, 1.27),
        "tone 3 is not on the right"
    );
    assert!(left.iter().chain(&right).all(|s| s.abs() < 1.0));
}

#[test]
fn the_mpicl_example_auralizes_sends_and_receives() {
    let trace = root().join("../shared/traces/picl/mpicl-trace1.trf");
    if !trace.exists() {
        eprintln!("note: {} not found; test skipped", trace.display());
        return;
    }
    let dir = temp("mpicl");
    let wav = dir.join("messages.wav");
    let (ok, stderr) = voml(&[
        "run",
        "examples/mpicl/sends-and-receives.voml",
        "--trace",
        trace.to_str().unwrap(),
        "--headless",
        "--out",
        dir.to_str().unwrap(),
        "--audio",
        wav.to_str().unwrap(),
        "--speed",
        "0.02",
    ]);
    assert!(ok, "{stderr}");
    // Count the notes independently: sends (-3 -27, -3 -22), receives (-4 -51, -4 -52), and
    // blocked receives (-3 -52: note-on and a channel set-up; -4 -52: note-off).
    let text = std::fs::read_to_string(&trace).unwrap();
    let count = |r: &str, e: &str| {
        text.lines()
            .filter(|l| l.split_whitespace().take(2).eq([r, e]))
            .count()
    };
    let commands = count("-3", "-27")
        + count("-3", "-22")
        + count("-4", "-51")
        + 2 * count("-3", "-52")
        + 2 * count("-4", "-52");
    assert!(
        stderr.contains(&format!("from {commands} sound commands")),
        "expected {commands} commands: {stderr}"
    );
    let (rate, left, right) = read_wav(&wav);
    // The trace lasts 0.1163 s: 5.8 s at speed 0.02, plus the ringing tail.
    let seconds = left.len() as f64 / f64::from(rate);
    assert!((5.8..9.0).contains(&seconds), "{seconds} s of sound");
    let loud = left.iter().chain(&right).filter(|s| s.abs() > 0.05).count();
    assert!(loud > rate as usize / 10, "the WAV is nearly silent");
    assert!(
        left.iter().chain(&right).all(|s| s.abs() < 1.0),
        "clipped samples"
    );
    assert!(dir.join("spacetime.png").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_tempo_change_speeds_up_the_sound_from_its_own_time_on() {
    // Event 2 sets the tempo to 4 before its tone: the gaps after it shrink four times.
    let spec = SPEC.replace(
        r#"<input name="^0"><tone"#,
        r#"<input name="^0">(if (= ^0/1 660) <tempo factor="4"/>)<tone"#,
    );
    let trace = "-3 1 0.0 440 0\n-3 1 2.0 660 0\n-3 1 6.0 550 0\n-3 1 10.0 880 0\n";
    let (rate, left, right, _) = run_with_audio("tempo", &spec, trace, &[]);
    let mono: Vec<f32> = left.iter().zip(&right).map(|(l, r)| l + r).collect();
    let found = onsets(rate, &mono);
    let expected = [0.0, 2.0, 3.0, 4.0];
    assert_eq!(found.len(), expected.len(), "onsets {found:?}");
    for (f, e) in found.iter().zip(expected) {
        assert!(
            (f - e).abs() < 0.005,
            "onset at {f:.4} s, expected {e} s ({found:?})"
        );
    }
}

/// A trace whose times span 10^5 s (or reach 1e300) cannot make `--audio` write without end:
/// sound stops at `--max-audio-seconds`, with one warning saying how much was dropped.
#[test]
fn sound_is_cut_at_its_cap_whatever_the_trace_times() {
    for (name, trace) in [
        (
            "span",
            "-3 1 0.0 440 0\n-3 1 1.0 660 0\n-3 1 100000.0 550 0\n",
        ),
        ("huge", "-3 1 0.0 440 0\n-3 1 1.0 660 0\n-3 1 1e300 550 0\n"),
    ] {
        let started = std::time::Instant::now();
        let (rate, left, _, stderr) =
            run_with_audio(name, SPEC, trace, &["--max-audio-seconds", "3"]);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{name}: took {:?}",
            started.elapsed()
        );
        let seconds = left.len() as f64 / f64::from(rate);
        assert!((seconds - 3.0).abs() < 0.01, "{name}: {seconds} s");
        assert!(
            stderr.contains("cut at 3 s")
                && stderr.contains("1 sound events after it were dropped"),
            "{name}: {stderr}"
        );
        // The two tones before the cap are there.
        assert_eq!(onsets(rate, &left).len(), 2, "{name}");
    }
}

/// Pearson's correlation of two series of the same length.
fn correlation(xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let cov: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let vx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let vy: f64 = ys.iter().map(|y| (y - my).powi(2)).sum();
    cov / (vx * vy).sqrt()
}

#[test]
fn the_library_example_hums_in_step_with_the_waits_it_shows() {
    let dir = temp("heard");
    let wav = dir.join("heard.wav");
    let speed = 0.02;
    let (ok, stderr) = voml(&[
        "run",
        "examples/library/heard.voml",
        "--trace",
        "examples/mpicl/ring.trf",
        "--headless",
        "--out",
        dir.to_str().unwrap(),
        "--audio",
        wav.to_str().unwrap(),
        "--speed",
        "0.02",
    ]);
    assert!(ok, "{stderr}");
    assert!(dir.join("gantt.png").exists() && dir.join("count.png").exists());
    // How many processors wait in a receive (from entry to exit of event -52) at each
    // moment, in trace time from the first record.
    let text = std::fs::read_to_string(root().join("examples/mpicl/ring.trf")).unwrap();
    let t0: f64 = text.split_whitespace().nth(2).unwrap().parse().unwrap();
    let mut changes: Vec<(f64, i32)> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() >= 4 && f[1] == "-52")
        .map(|f| {
            let t: f64 = f[2].parse().unwrap();
            (t - t0, if f[0] == "-3" { 1 } else { -1 })
        })
        .collect();
    changes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let waiting = |t: f64| -> f64 {
        f64::from(
            changes
                .iter()
                .take_while(|c| c.0 <= t)
                .map(|c| c.1)
                .sum::<i32>(),
        )
    };
    let end = changes.last().unwrap().0;
    let (rate, left, right) = read_wav(&wav);
    let seconds = left.len() as f64 / f64::from(rate);
    assert!(
        seconds >= end / speed && seconds < end / speed + 3.0,
        "{seconds} s of sound for {end} s of trace"
    );
    // Over windows of 20 ms of sound, the hum's loudness follows the number of processors
    // waiting then: each waiting processor holds a note.
    let window = 0.02;
    let windows = (end / speed / window) as usize;
    let waits: Vec<f64> = (0..windows)
        .map(|k| {
            (0..10)
                .map(|j| waiting((k as f64 + f64::from(j) / 10.0) * window * speed))
                .sum::<f64>()
                / 10.0
        })
        .collect();
    let loudness: Vec<f64> = (0..windows)
        .map(|k| {
            let a = (k as f64 * window * f64::from(rate)) as usize;
            let b = ((k + 1) as f64 * window * f64::from(rate)) as usize;
            let sum: f64 = (a..b)
                .map(|i| f64::from(left[i]).powi(2) + f64::from(right[i]).powi(2))
                .sum();
            (sum / (b - a) as f64).sqrt()
        })
        .collect();
    // The loudness `lag` windows later (or earlier) against the waits.
    let later = |lag: usize| correlation(&waits[..windows - lag], &loudness[lag..]);
    let earlier = |lag: usize| correlation(&waits[lag..], &loudness[..windows - lag]);
    // In step: the best match within 0.1 s after (the string voice swells in and dies
    // away; a hum late by more would match worse here), and the hum never ahead of the
    // waits.
    let best = (0..=5).map(later).fold(f64::MIN, f64::max);
    assert!(best > 0.7, "the hum follows the waits poorly: {best:.2}");
    assert!(
        earlier(10) < best - 0.3,
        "a hum 0.2 s early matches as well ({:.2} against {best:.2})",
        earlier(10)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
