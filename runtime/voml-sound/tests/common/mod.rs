//! Audio analysis shared by the integration tests: rendering to separate channels, spectra
//! with interpolated peaks, short-time levels and onset detection.

#![allow(dead_code)]

use rustfft::{num_complex::Complex, FftPlanner};
use voml_sound::{render_to_vec, SoundEvent, Synth};

pub const RATE: u32 = 48_000;

pub struct Stereo {
    pub left: Vec<f32>,
    pub right: Vec<f32>,
}

impl Stereo {
    pub fn from_interleaved(samples: &[f32]) -> Self {
        Stereo {
            left: samples.iter().step_by(2).copied().collect(),
            right: samples.iter().skip(1).step_by(2).copied().collect(),
        }
    }

    /// Left plus right: what a mono listener hears.
    pub fn mono(&self) -> Vec<f32> {
        self.left
            .iter()
            .zip(&self.right)
            .map(|(l, r)| l + r)
            .collect()
    }
}

pub fn render(events: &[(f64, SoundEvent)], duration_s: f64) -> Stereo {
    Stereo::from_interleaved(&render_to_vec(events, duration_s, RATE))
}

/// Render with a synth the caller has set up.
pub fn render_synth(synth: &mut Synth, duration_s: f64) -> Stereo {
    let frames = (duration_s * f64::from(synth.sample_rate())).round() as usize;
    let mut out = vec![0.0; 2 * frames];
    synth.render(&mut out);
    Stereo::from_interleaved(&out)
}

pub fn frame(t: f64) -> usize {
    (t * f64::from(RATE)).round() as usize
}

/// The part of `x` between two times.
pub fn span(x: &[f32], from_s: f64, to_s: f64) -> &[f32] {
    &x[frame(from_s).min(x.len())..frame(to_s).min(x.len())]
}

pub fn rms(x: &[f32]) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    (x.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>() / x.len() as f64).sqrt()
}

pub fn energy(x: &[f32]) -> f64 {
    x.iter().map(|&v| f64::from(v) * f64::from(v)).sum()
}

pub fn peak(x: &[f32]) -> f32 {
    x.iter().fold(0.0f32, |m, v| m.max(v.abs()))
}

/// Magnitude spectrum of `x` under a Hann window, zero-padded to at least four times its
/// length; returns magnitudes and the width of a bin in Hz.
pub fn spectrum(x: &[f32], rate: u32) -> (Vec<f64>, f64) {
    let n = (4 * x.len()).next_power_of_two();
    let len = x.len() as f64;
    let mut buf: Vec<Complex<f64>> = x
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let w = 0.5 - 0.5 * (std::f64::consts::TAU * i as f64 / (len - 1.0)).cos();
            Complex::new(f64::from(v) * w, 0.0)
        })
        .collect();
    buf.resize(n, Complex::new(0.0, 0.0));
    FftPlanner::new().plan_fft_forward(n).process(&mut buf);
    let mags = buf[..n / 2].iter().map(|c| c.norm()).collect();
    (mags, f64::from(rate) / n as f64)
}

/// Frequency of the strongest spectral peak between `lo_hz` and `hi_hz`, refined by parabolic
/// interpolation of the log magnitudes around the peak bin.
pub fn peak_frequency(x: &[f32], rate: u32, lo_hz: f64, hi_hz: f64) -> f64 {
    let (mags, bin) = spectrum(x, rate);
    let lo = ((lo_hz / bin) as usize).max(1);
    let hi = ((hi_hz / bin) as usize).min(mags.len() - 2);
    let k = (lo..=hi)
        .max_by(|&a, &b| mags[a].total_cmp(&mags[b]))
        .expect("non-empty range");
    let (a, b, c) = (
        mags[k - 1].max(1e-300).ln(),
        mags[k].max(1e-300).ln(),
        mags[k + 1].max(1e-300).ln(),
    );
    let denom = a - 2.0 * b + c;
    let offset = if denom.abs() > 1e-12 {
        0.5 * (a - c) / denom
    } else {
        0.0
    };
    (k as f64 + offset) * bin
}

/// Amplitude-weighted mean frequency.
pub fn spectral_centroid(x: &[f32], rate: u32) -> f64 {
    let (mags, bin) = spectrum(x, rate);
    let total: f64 = mags.iter().sum();
    mags.iter()
        .enumerate()
        .map(|(i, m)| i as f64 * bin * m)
        .sum::<f64>()
        / total
}

/// RMS level in consecutive windows of `window` samples.
pub fn levels(x: &[f32], window: usize) -> Vec<f64> {
    x.chunks(window).map(rms).collect()
}

/// Onset times in seconds. A new sound starts where the peak level of the next 6 ms exceeds
/// one and a half times the peak of the preceding 10 ms (so a note rising over the ringing tail
/// of the previous one still counts); onsets closer than 50 ms are merged. The time reported
/// is the first sample that rises a tenth of the way from the old peak to the new one, which
/// is accurate to the sample rather than to the analysis step.
pub fn onsets(x: &[f32], rate: u32) -> Vec<f64> {
    let hop = (rate / 1000) as usize;
    let mut found = Vec::new();
    let mut last: Option<usize> = None;
    let mut i = 10 * hop;
    while i + 6 * hop <= x.len() {
        let before = peak(&x[i - 10 * hop..i]);
        let ahead = peak(&x[i..i + 6 * hop]);
        let refractory = last.is_some_and(|l| i - l < 50 * hop);
        if !refractory && ahead > 1.5 * before + 1e-3 {
            let threshold = before + 0.1 * (ahead - before);
            let first = x[i..i + 6 * hop]
                .iter()
                .position(|v| v.abs() > threshold)
                .expect("the peak exceeds it");
            found.push((i + first) as f64 / f64::from(rate));
            last = Some(i);
        }
        i += hop;
    }
    found
}

/// Largest absolute second difference, a detector of clicks: a smooth signal of frequency `f`
/// and amplitude `A` has second differences of at most `A·(2πf/rate)²`, a step of height `h`
/// gives one of `h`.
pub fn max_second_difference(x: &[f32]) -> f32 {
    x.windows(3)
        .map(|w| (w[2] - 2.0 * w[1] + w[0]).abs())
        .fold(0.0, f32::max)
}
