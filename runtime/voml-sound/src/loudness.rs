//! Frequency-dependent gain so that notes of equal volume sound about equally loud.
//!
//! Trace2au observes that the ear follows intensity rather than amplitude and that, at equal
//! amplitude, pitch changes how loud a tone seems; its mixing keeps `amplitude × frequency`
//! constant. Measured equal-loudness contours (Fletcher–Munson, ISO 226) show the ear is most
//! sensitive between about 1 and 4 kHz and needs more level both below and above. The default
//! curve is a deliberately gentle, piecewise-linear (in dB per octave) approximation of those
//! contours, capped so that a low note cannot eat the headroom of the whole mix.

/// How note volume is compensated for pitch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoudnessCurve {
    /// No compensation: volume is amplitude.
    Flat,
    /// `+3 dB` per octave below 1 kHz (at most `+12 dB`, reached at 62.5 Hz), flat from 1 to
    /// 4 kHz, `+3 dB` per octave above 4 kHz (at most `+9 dB`). 100 Hz gets about `+10 dB`.
    #[default]
    EqualLoudness,
    /// Trace2au's rule, amplitude inversely proportional to frequency (equal `a·f`), referenced
    /// to 1 kHz and clamped to `±12 dB`. Boosts lows like the default but cuts highs.
    ConstantIntensity,
}

/// Reference frequency of every curve: a 1 kHz note is never changed.
pub const LOUDNESS_REFERENCE_HZ: f64 = 1000.0;

/// Linear gain applied to a note of `freq_hz` under `curve`.
pub fn loudness_gain(curve: LoudnessCurve, freq_hz: f64) -> f64 {
    if !freq_hz.is_finite() || freq_hz <= 0.0 {
        return 1.0;
    }
    let db = match curve {
        LoudnessCurve::Flat => 0.0,
        LoudnessCurve::EqualLoudness => {
            let below = (LOUDNESS_REFERENCE_HZ / freq_hz).log2().max(0.0);
            let above = (freq_hz / 4000.0).log2().max(0.0);
            (3.0 * below).min(12.0) + (3.0 * above).min(9.0)
        }
        LoudnessCurve::ConstantIntensity => {
            (20.0 * (LOUDNESS_REFERENCE_HZ / freq_hz).log10()).clamp(-12.0, 12.0)
        }
    };
    10f64.powf(db / 20.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(curve: LoudnessCurve, f: f64) -> f64 {
        20.0 * loudness_gain(curve, f).log10()
    }

    #[test]
    fn equal_loudness_boosts_both_ends() {
        let c = LoudnessCurve::EqualLoudness;
        assert!(db(c, 1000.0).abs() < 1e-9);
        assert!(db(c, 2500.0).abs() < 1e-9);
        assert!((db(c, 500.0) - 3.0).abs() < 1e-9);
        assert!((db(c, 100.0) - 9.966).abs() < 1e-3);
        assert!((db(c, 20.0) - 12.0).abs() < 1e-9);
        assert!((db(c, 8000.0) - 3.0).abs() < 1e-9);
        assert!((db(c, 20000.0) - 6.966).abs() < 1e-3);
    }

    #[test]
    fn constant_intensity_keeps_af() {
        let c = LoudnessCurve::ConstantIntensity;
        let a1 = loudness_gain(c, 500.0) * 500.0;
        let a2 = loudness_gain(c, 2000.0) * 2000.0;
        assert!((a1 - a2).abs() < 1e-9);
        assert!((db(c, 50.0) - 12.0).abs() < 1e-9);
        assert_eq!(loudness_gain(LoudnessCurve::Flat, 123.0), 1.0);
    }
}
