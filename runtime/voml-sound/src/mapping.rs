//! The auralization mappings of the seed papers, as plain functions from program quantities to
//! pitches and volumes: Trace2au's logarithmic processor map and mixing rule, Francioni &
//! Jackson's percentage meters, scales and processor equivalence classes.

use std::fmt;
use std::str::FromStr;

use crate::event::hz_to_midi;

/// Lowest frequency of Trace2au's processor map: the lowest its authors found useful.
pub const TRACE2AU_F_MIN: f64 = 100.0;
/// Highest frequency of Trace2au's processor map.
pub const TRACE2AU_F_MAX: f64 = 3500.0;

/// Trace2au's processor-to-frequency map: `f_n = α^(n-1) · f_min` with
/// `α = (f_max / f_min)^(1/(N-1))`, so processor 0 gets `f_min`, processor `N-1` gets `f_max`,
/// and neighbours are a constant musical interval apart (the ear hears ratios, not
/// differences). Processors are numbered from 0; `p` beyond the last is clamped to it, and a
/// single processor gets `f_min`. Use [`TRACE2AU_F_MIN`] and [`TRACE2AU_F_MAX`] for the paper's
/// range.
pub fn processor_frequency(p: usize, nprocs: usize, f_min: f64, f_max: f64) -> f64 {
    if nprocs <= 1 {
        return f_min;
    }
    let last = nprocs - 1;
    let n = p.min(last) as f64;
    f_min * (f_max / f_min).powf(n / last as f64)
}

/// Francioni & Jackson's sound meter: a percentage (0 to 100, clamped) to a pitch between
/// `low_hz` and `high_hz`, low notes for low percentages. Interpolated in log-frequency, so
/// equal steps of percentage are equal musical intervals.
pub fn meter_pitch(percent: f64, low_hz: f64, high_hz: f64) -> f64 {
    let x = if percent.is_finite() {
        percent.clamp(0.0, 100.0) / 100.0
    } else {
        0.0
    };
    low_hz * (high_hz / low_hz).powf(x)
}

/// Trace2au's `tr_sendmix` rule, as the volume to give each of `sounding` equal-intensity notes
/// out of `nprocs` possible: the mix gets louder as more processors sound, over eight loudness
/// levels, and never exceeds full scale. (The synth's limiter already prevents clipping; this
/// reproduces the paper's loudness-versus-activity curve.)
pub fn trace2au_mix_volume(sounding: usize, nprocs: usize) -> f64 {
    if sounding == 0 || nprocs == 0 {
        return 0.0;
    }
    let n = sounding.min(nprocs) as f64;
    let total = nprocs as f64;
    1.0 / (n * (1.0 + 7.0 * (total - n) / total))
}

/// A musical scale, as semitone offsets from its tonic within one octave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Scale {
    #[default]
    Chromatic,
    Major,
    MinorPentatonic,
    WholeTone,
}

impl Scale {
    pub const ALL: [Scale; 4] = [
        Scale::Chromatic,
        Scale::Major,
        Scale::MinorPentatonic,
        Scale::WholeTone,
    ];

    /// Semitones above the tonic of each degree, ascending, starting at 0.
    pub fn degrees(self) -> &'static [u8] {
        match self {
            Scale::Chromatic => &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
            Scale::Major => &[0, 2, 4, 5, 7, 9, 11],
            Scale::MinorPentatonic => &[0, 3, 5, 7, 10],
            Scale::WholeTone => &[0, 2, 4, 6, 8, 10],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Scale::Chromatic => "chromatic",
            Scale::Major => "major",
            Scale::MinorPentatonic => "minor-pentatonic",
            Scale::WholeTone => "whole-tone",
        }
    }

    /// The frequency nearest to `freq_hz` (in log-frequency) that lies on this scale built on
    /// `tonic_hz` (any octave of the tonic works). Halfway cases go down.
    pub fn quantize(self, freq_hz: f64, tonic_hz: f64) -> f64 {
        let rel = hz_to_midi(freq_hz) - hz_to_midi(tonic_hz);
        let octave = (rel / 12.0).floor();
        let within = rel - 12.0 * octave;
        let mut best = 0.0;
        let mut best_dist = f64::INFINITY;
        let candidates = self.degrees().iter().map(|&d| f64::from(d)).chain([12.0]);
        for d in candidates {
            let dist = (within - d).abs();
            if dist < best_dist - 1e-9 {
                best = d;
                best_dist = dist;
            }
        }
        tonic_hz * ((12.0 * octave + best) / 12.0).exp2()
    }

    /// The `step`-th note of this scale counting from `tonic_hz` (step 0), continuing through
    /// octaves in both directions: a way to give each processor or class its own scale note.
    pub fn step_hz(self, tonic_hz: f64, step: i64) -> f64 {
        let degrees = self.degrees();
        let len = degrees.len() as i64;
        let octave = step.div_euclid(len);
        let degree = f64::from(degrees[step.rem_euclid(len) as usize]);
        tonic_hz * ((12.0 * octave as f64 + degree) / 12.0).exp2()
    }
}

impl fmt::Display for Scale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A scale name that matched nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownScale(pub String);

impl fmt::Display for UnknownScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown scale `{}`; expected chromatic, major, minor-pentatonic or whole-tone",
            self.0
        )
    }
}

impl std::error::Error for UnknownScale {}

impl FromStr for Scale {
    type Err = UnknownScale;

    /// Case-insensitive; `-`, `_` and spaces are interchangeable (`minor_pentatonic`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let key: String = s
            .trim()
            .chars()
            .filter(|c| !matches!(c, '-' | '_' | ' '))
            .collect::<String>()
            .to_ascii_lowercase();
        Ok(match key.as_str() {
            "chromatic" => Scale::Chromatic,
            "major" => Scale::Major,
            "minorpentatonic" | "pentatonic" => Scale::MinorPentatonic,
            "wholetone" => Scale::WholeTone,
            _ => return Err(UnknownScale(s.to_string())),
        })
    }
}

/// Quantise `freq_hz` to `scale` built on `tonic_hz`; see [`Scale::quantize`].
pub fn quantize_to_scale(freq_hz: f64, scale: Scale, tonic_hz: f64) -> f64 {
    scale.quantize(freq_hz, tonic_hz)
}

/// Processors grouped into equivalence classes (Francioni & Jackson's group mapping): the ear
/// hears a class as one note, so thousands of processors fit into a few pitches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    class_of: Vec<Option<usize>>,
    classes: usize,
}

/// A processor listed in two classes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverlappingClasses {
    pub processor: usize,
    pub first: usize,
    pub second: usize,
}

impl fmt::Display for OverlappingClasses {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "processor {} is in class {} and in class {}",
            self.processor, self.first, self.second
        )
    }
}

impl std::error::Error for OverlappingClasses {}

impl Partition {
    /// Classes given as lists of processors; class `i` is `groups[i]`. Processors in no list
    /// belong to no class.
    pub fn from_groups(groups: &[Vec<usize>]) -> Result<Self, OverlappingClasses> {
        let size = groups.iter().flatten().max().map_or(0, |&m| m + 1);
        let mut class_of = vec![None; size];
        for (class, group) in groups.iter().enumerate() {
            for &p in group {
                match class_of[p] {
                    Some(first) if first != class => {
                        return Err(OverlappingClasses {
                            processor: p,
                            first,
                            second: class,
                        })
                    }
                    _ => class_of[p] = Some(class),
                }
            }
        }
        Ok(Partition {
            class_of,
            classes: groups.len(),
        })
    }

    /// Classes given as the class number of each processor.
    pub fn from_class_of(class_of: &[usize]) -> Self {
        Partition {
            classes: class_of.iter().max().map_or(0, |&m| m + 1),
            class_of: class_of.iter().map(|&c| Some(c)).collect(),
        }
    }

    /// `nprocs` processors in `nclasses` consecutive, nearly equal blocks: the rows of a mesh
    /// when processors are numbered row by row (SLALOM's 8 × 8 case study).
    pub fn contiguous(nprocs: usize, nclasses: usize) -> Self {
        let nclasses = nclasses.clamp(1, nprocs.max(1));
        let class_of = (0..nprocs).map(|p| Some(p * nclasses / nprocs)).collect();
        Partition {
            class_of,
            classes: nclasses,
        }
    }

    pub fn num_classes(&self) -> usize {
        self.classes
    }

    /// The class of processor `p`, if it has one.
    pub fn class_of(&self, p: usize) -> Option<usize> {
        self.class_of.get(p).copied().flatten()
    }

    /// The pitch of a class: classes spread over `f_min..=f_max` with
    /// [`processor_frequency`], one pitch per class.
    pub fn class_frequency(&self, class: usize, f_min: f64, f_max: f64) -> f64 {
        processor_frequency(class, self.classes, f_min, f_max)
    }

    /// The pitch of processor `p`: the pitch of its class.
    pub fn frequency_of(&self, p: usize, f_min: f64, f_max: f64) -> Option<f64> {
        self.class_of(p)
            .map(|c| self.class_frequency(c, f_min, f_max))
    }
}
