//! Band-limited single-cycle wavetables, built once per process and shared by every synth.
//!
//! A voice reads its table with a 32-bit phase accumulator and linear interpolation, which
//! costs a few operations per sample whatever the number of partials: that is what makes 64
//! voices far faster than real time. Aliasing is avoided the usual way, with several versions
//! of each table holding fewer and fewer harmonics; a note picks, when it starts, the richest
//! version whose top harmonic stays below the audible limit at its pitch.
//!
//! Tables hold harmonics of a *table frequency*. For the bell the table frequency is a
//! twentieth of the note, so partials at 0.5, 1.2, 2.65... times the note are exact integer
//! harmonics of it: inharmonic to the ear, but still one periodic table.

use std::sync::OnceLock;

use crate::event::Voice;

pub(crate) const TABLE_BITS: u32 = 11;
pub(crate) const TABLE_SIZE: usize = 1 << TABLE_BITS;
/// Bits of the phase accumulator below the table index, used as the interpolation fraction.
pub(crate) const FRAC_BITS: u32 = 32 - TABLE_BITS;
pub(crate) const FRAC_MASK: u32 = (1 << FRAC_BITS) - 1;
pub(crate) const FRAC_SCALE: f32 = 1.0 / (1u32 << FRAC_BITS) as f32;

/// One cycle as (value, difference to the next value) pairs: one load gives everything linear
/// interpolation needs, and the difference at the last point wraps to the first.
pub(crate) type Table = [[f32; 2]; TABLE_SIZE];

/// A partial: harmonic number of the table frequency and amplitude.
type Partial = (u32, f64);

/// One layer of a timbre at every band limit.
pub(crate) struct Layer {
    /// Ascending highest harmonic kept by each version.
    cutoffs: Vec<u32>,
    tables: Vec<Box<Table>>,
}

impl Layer {
    /// The richest version whose harmonics all lie at or below `max_harmonic`.
    pub(crate) fn for_max_harmonic(&'static self, max_harmonic: f64) -> &'static Table {
        let mut chosen = 0;
        for (i, &c) in self.cutoffs.iter().enumerate() {
            if f64::from(c) <= max_harmonic {
                chosen = i;
            }
        }
        &self.tables[chosen]
    }
}

/// The two layers of a timbre: a body and a brighter layer that decays on its own envelope.
pub(crate) struct Timbre {
    pub(crate) body: Layer,
    pub(crate) bright: Option<Layer>,
    /// Table frequency divided by the note frequency.
    pub(crate) table_ratio: f64,
}

pub(crate) struct Tables {
    sine: Timbre,
    vibes: Timbre,
    marimba: Timbre,
    bell: Timbre,
    string: Timbre,
}

impl Tables {
    /// One cycle of a sine of peak 1, also used by the low-frequency oscillators.
    pub(crate) fn sine(&'static self) -> &'static Table {
        self.sine.body.tables.last().expect("sine table")
    }

    /// The timbre of a tabled voice; `None` for noise.
    pub(crate) fn timbre(&'static self, voice: Voice) -> Option<&'static Timbre> {
        match voice {
            Voice::Sine => Some(&self.sine),
            Voice::Vibes => Some(&self.vibes),
            Voice::Marimba => Some(&self.marimba),
            Voice::Bell => Some(&self.bell),
            Voice::String => Some(&self.string),
            Voice::Noise => None,
        }
    }
}

pub(crate) fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(build)
}

fn build() -> Tables {
    // Exact sine at every table index: harmonic h at index i is `master[(h * i) % N]`, the
    // integer-index trick of Trace2au's master sine wave, so building stays cheap.
    let master: Vec<f64> = (0..TABLE_SIZE)
        .map(|i| (std::f64::consts::TAU * i as f64 / TABLE_SIZE as f64).sin())
        .collect();

    let sine = timbre(&master, &[(1, 1.0)], None, 1.0);

    // Vibraphone bars are tuned so the first overtones sit at 4 and 10 times the fundamental.
    let vibes = timbre(&master, &[(1, 1.0)], Some(&[(4, 0.32), (10, 0.1)]), 1.0);

    // Marimba bars use the same 1:4:10 tuning, with a stronger fourth harmonic that dies fast.
    let marimba = timbre(&master, &[(1, 1.0)], Some(&[(4, 0.45), (10, 0.08)]), 1.0);

    // Church-bell partials (hum, prime, tierce, quint, nominal, ...) as multiples of the note,
    // in twentieths so they are harmonics of note/20. The prime is the loudest and longest.
    let bell_body: Vec<Partial> = vec![(10, 0.3), (20, 1.0), (24, 0.45), (30, 0.25), (40, 0.35)];
    let bell_bright: Vec<Partial> =
        vec![(50, 0.22), (53, 0.18), (60, 0.15), (83, 0.12), (109, 0.08)];
    let bell = timbre(&master, &bell_body, Some(&bell_bright), 1.0 / 20.0);

    // A sawtooth with a gentle extra roll-off: bowed strings are less buzzy than a raw saw.
    let saw: Vec<Partial> = (1..=(TABLE_SIZE as u32 / 2))
        .map(|k| (k, 1.0 / f64::from(k).powf(1.15)))
        .collect();
    let string = timbre(&master, &saw, None, 1.0);

    Tables {
        sine,
        vibes,
        marimba,
        bell,
        string,
    }
}

fn timbre(
    master: &[f64],
    body: &[Partial],
    bright: Option<&[Partial]>,
    table_ratio: f64,
) -> Timbre {
    // One scale for both layers, taken from their sum at full bandwidth, so the attack of a
    // struck note peaks at 1 and every band-limited version keeps the same loudness.
    let mut full = synthesize(master, body);
    if let Some(b) = bright {
        for (x, y) in full.iter_mut().zip(synthesize(master, b)) {
            *x += y;
        }
    }
    let peak = full.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let scale = if peak > 0.0 { 1.0 / peak } else { 1.0 };
    Timbre {
        body: layer(master, body, scale),
        bright: bright.map(|b| layer(master, b, scale)),
        table_ratio,
    }
}

fn layer(master: &[f64], partials: &[Partial], scale: f64) -> Layer {
    let top = partials.iter().map(|p| p.0).max().unwrap_or(0);
    // Sparse spectra get one version per partial; dense ones one per octave. A version with
    // nothing in it (cutoff 0) is silence, for layers whose every partial would alias.
    let mut cutoffs: Vec<u32> = vec![0];
    if partials.len() <= 16 {
        cutoffs.extend(partials.iter().map(|p| p.0));
    } else {
        let mut c = 1;
        while c < top {
            cutoffs.push(c);
            c *= 2;
        }
        cutoffs.push(top);
    }
    cutoffs.sort_unstable();
    cutoffs.dedup();
    let tables = cutoffs
        .iter()
        .map(|&c| {
            let kept: Vec<Partial> = partials.iter().copied().filter(|p| p.0 <= c).collect();
            let wave = synthesize(master, &kept);
            let mut t: Box<Table> = Box::new([[0.0; 2]; TABLE_SIZE]);
            for i in 0..TABLE_SIZE {
                let here = (wave[i] * scale) as f32;
                let next = (wave[(i + 1) % TABLE_SIZE] * scale) as f32;
                t[i] = [here, next - here];
            }
            t
        })
        .collect();
    Layer { cutoffs, tables }
}

fn synthesize(master: &[f64], partials: &[Partial]) -> Vec<f64> {
    let mut wave = vec![0.0; TABLE_SIZE];
    for &(h, amp) in partials {
        let h = h as usize;
        for (i, w) in wave.iter_mut().enumerate() {
            *w += amp * master[(h * i) % TABLE_SIZE];
        }
    }
    wave
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_normalised_and_continuous() {
        let t = tables();
        for v in Voice::ALL {
            let Some(timbre) = t.timbre(v) else { continue };
            let top = timbre.body.tables.last().unwrap();
            let peak = top.iter().fold(0.0f32, |m, x| m.max(x[0].abs()));
            assert!(peak <= 1.0 + 1e-5, "{v}: {peak}");
            let last = top[TABLE_SIZE - 1];
            assert!((last[0] + last[1] - top[0][0]).abs() < 1e-6);
        }
    }

    #[test]
    fn band_limit_picks_fewer_harmonics() {
        let s = &tables().string.body;
        assert_eq!(*s.cutoffs.last().unwrap(), 1024);
        let low = s.for_max_harmonic(2000.0) as *const Table;
        let high = s.for_max_harmonic(5.0) as *const Table;
        assert_ne!(low, high);
        // Below the first partial nothing can be kept: the silent version.
        let silent = tables()
            .vibes
            .bright
            .as_ref()
            .unwrap()
            .for_max_harmonic(3.0);
        assert!(silent.iter().all(|&x| x == [0.0, 0.0]));
    }
}
