//! One sounding note: its timbre parameters, envelopes, oscillator and the inner loop that adds
//! it into the mix.
//!
//! Everything slow-moving (envelopes, volume glides, tremolo, vibrato, channel gain and pan) is
//! evaluated at block boundaries, at most every [`crate::synth::BLOCK`] frames, and ramped
//! linearly in between. Ramps start from the value the previous block ended on, so gains are
//! continuous by construction: nothing a voice does can produce a step, hence no clicks.

use crate::event::Voice;
use crate::synth::BLOCK;
use crate::tables::{Table, FRAC_BITS, FRAC_MASK, FRAC_SCALE};

/// Envelope level below which a finished or decaying note is considered silent (-80 dB).
pub(crate) const SILENT: f64 = 1e-4;
/// Level below which a falling envelope is set to exactly 0 (-140 dB): long exponential tails
/// would otherwise reach subnormal floats, which are slow enough to stall rendering.
const FLUSH: f64 = 1e-7;
/// `ln(1e4)`: turns "time to fall 80 dB" into an exponential time constant.
const LN_80DB: f64 = 9.210_340_371_976_184;

/// Envelope and modulation settings of a voice.
pub(crate) struct Spec {
    attack_s: f64,
    /// Time constant of the body's fall towards `sustain`; infinite for none.
    body_tau_s: f64,
    sustain: f64,
    bright_tau_s: f64,
    /// Time to fall 80 dB after key-up.
    release_s: f64,
    /// Whether key-up damps the note; a marimba bar or a click rings out regardless.
    damped: bool,
    tremolo_hz: f64,
    tremolo_depth: f64,
    vibrato_hz: f64,
    vibrato_depth: f64,
    vibrato_delay_s: f64,
}

pub(crate) fn spec(voice: Voice) -> &'static Spec {
    const NONE: f64 = f64::INFINITY;
    static SINE: Spec = Spec {
        attack_s: 0.005,
        body_tau_s: NONE,
        sustain: 1.0,
        bright_tau_s: NONE,
        release_s: 0.04,
        damped: true,
        tremolo_hz: 0.0,
        tremolo_depth: 0.0,
        vibrato_hz: 0.0,
        vibrato_depth: 0.0,
        vibrato_delay_s: 0.0,
    };
    // Pedal down and motor on: a held vibes note settles to a quiet, shimmering sustain.
    static VIBES: Spec = Spec {
        attack_s: 0.0015,
        body_tau_s: 1.2,
        sustain: 0.25,
        bright_tau_s: 0.12,
        release_s: 0.15,
        damped: true,
        tremolo_hz: 5.5,
        tremolo_depth: 0.3,
        vibrato_hz: 0.0,
        vibrato_depth: 0.0,
        vibrato_delay_s: 0.0,
    };
    static MARIMBA: Spec = Spec {
        attack_s: 0.001,
        body_tau_s: 0.2,
        sustain: 0.0,
        bright_tau_s: 0.04,
        release_s: 0.3,
        damped: false,
        tremolo_hz: 0.0,
        tremolo_depth: 0.0,
        vibrato_hz: 0.0,
        vibrato_depth: 0.0,
        vibrato_delay_s: 0.0,
    };
    static BELL: Spec = Spec {
        attack_s: 0.001,
        body_tau_s: 1.0,
        sustain: 0.0,
        bright_tau_s: 0.2,
        release_s: 1.2,
        damped: true,
        tremolo_hz: 0.0,
        tremolo_depth: 0.0,
        vibrato_hz: 0.0,
        vibrato_depth: 0.0,
        vibrato_delay_s: 0.0,
    };
    // A player's vibrato comes in after the bow has settled on the string.
    static STRING: Spec = Spec {
        attack_s: 0.08,
        body_tau_s: NONE,
        sustain: 1.0,
        bright_tau_s: NONE,
        release_s: 0.25,
        damped: true,
        tremolo_hz: 0.0,
        tremolo_depth: 0.0,
        vibrato_hz: 5.2,
        vibrato_depth: 0.004,
        vibrato_delay_s: 0.15,
    };
    static NOISE: Spec = Spec {
        attack_s: 0.0003,
        body_tau_s: 0.008,
        sustain: 0.0,
        bright_tau_s: NONE,
        release_s: 0.05,
        damped: false,
        tremolo_hz: 0.0,
        tremolo_depth: 0.0,
        vibrato_hz: 0.0,
        vibrato_depth: 0.0,
        vibrato_delay_s: 0.0,
    };
    match voice {
        Voice::Sine => &SINE,
        Voice::Vibes => &VIBES,
        Voice::Marimba => &MARIMBA,
        Voice::Bell => &BELL,
        Voice::String => &STRING,
        Voice::Noise => &NOISE,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Attack,
    Decay,
    Release,
}

/// Linear attack to 1, exponential fall towards a sustain level, exponential release.
/// Exponential segments are advanced in closed form, so block boundaries cost nothing extra.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Envelope {
    stage: Stage,
    level: f64,
    attack_step: f64,
    decay_k: f64,
    decay_kb: f64,
    sustain: f64,
    release_k: f64,
    release_kb: f64,
}

/// `k^n`, with the common full-block case precomputed as `kb`.
#[inline]
fn pow_n(k: f64, kb: f64, n: u32) -> f64 {
    if n as usize == BLOCK {
        kb
    } else {
        k.powi(n as i32)
    }
}

impl Envelope {
    fn new(attack_frames: f64, decay_tau_frames: f64, sustain: f64, release_k: f64) -> Self {
        let decay_k = (-1.0 / decay_tau_frames).exp();
        Envelope {
            stage: Stage::Attack,
            level: 0.0,
            attack_step: 1.0 / attack_frames.max(1.0),
            decay_k,
            decay_kb: decay_k.powi(BLOCK as i32),
            sustain,
            release_k,
            release_kb: release_k.powi(BLOCK as i32),
        }
    }

    fn set_release(&mut self, release_k: f64) {
        self.release_kb = release_k.powi(BLOCK as i32);
    }

    /// An envelope that is already over: for voices without a bright layer.
    fn silent() -> Self {
        Envelope {
            stage: Stage::Release,
            level: 0.0,
            attack_step: 1.0,
            decay_k: 0.0,
            decay_kb: 0.0,
            sustain: 0.0,
            release_k: 0.0,
            release_kb: 0.0,
        }
    }

    pub(crate) fn level(&self) -> f64 {
        self.level
    }

    fn advance(&mut self, mut n: u32) {
        while n > 0 {
            match self.stage {
                Stage::Attack => {
                    let to_peak = ((1.0 - self.level) / self.attack_step).ceil().max(0.0);
                    if f64::from(n) < to_peak {
                        self.level += f64::from(n) * self.attack_step;
                        n = 0;
                    } else {
                        self.level = 1.0;
                        self.stage = Stage::Decay;
                        n -= to_peak as u32;
                    }
                }
                Stage::Decay => {
                    let k = pow_n(self.decay_k, self.decay_kb, n);
                    self.level = self.sustain + (self.level - self.sustain) * k;
                    n = 0;
                }
                Stage::Release => {
                    self.level *= pow_n(self.release_k, self.release_kb, n);
                    n = 0;
                }
            }
        }
        if self.level < FLUSH && self.falling() {
            self.level = 0.0;
        }
    }

    fn release(&mut self) {
        self.stage = Stage::Release;
    }

    /// Whether the level can only go down from here.
    fn falling(&self) -> bool {
        self.stage == Stage::Release || (self.stage == Stage::Decay && self.sustain < SILENT)
    }
}

/// A one-pole glide towards a target, advanced per block in closed form.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Glide {
    pub(crate) current: f64,
    pub(crate) target: f64,
    k: f64,
    kb: f64,
}

impl Glide {
    pub(crate) fn new(value: f64, tau_frames: f64) -> Self {
        let k = (-1.0 / tau_frames.max(1.0)).exp();
        Glide {
            current: value,
            target: value,
            k,
            kb: k.powi(BLOCK as i32),
        }
    }

    pub(crate) fn set(&mut self, target: f64) {
        self.target = target;
    }

    pub(crate) fn snap(&mut self, value: f64) {
        self.current = value;
        self.target = value;
    }

    pub(crate) fn moving(&self) -> bool {
        self.current != self.target
    }

    pub(crate) fn advance(&mut self, n: u32) {
        if self.current != self.target {
            self.current = self.target + (self.current - self.target) * pow_n(self.k, self.kb, n);
            if (self.current - self.target).abs() < 1e-7 {
                self.current = self.target;
            }
        }
    }
}

/// Constant-power pan: `-1` left, `0` both at `1/√2`, `1` right.
pub(crate) fn pan_gains(pan: f64) -> (f64, f64) {
    let theta = (pan.clamp(-1.0, 1.0) + 1.0) * std::f64::consts::FRAC_PI_4;
    (theta.cos(), theta.sin())
}

/// The sound source of a voice.
#[derive(Clone, Copy)]
pub(crate) enum Source {
    Table {
        body: &'static Table,
        bright: Option<&'static Table>,
        phase: u32,
        base_inc: f64,
        inc: u32,
    },
    /// White noise through a band-pass state-variable filter (topology-preserving form, stable
    /// at any centre frequency).
    Noise {
        rng: u32,
        ic1: f32,
        ic2: f32,
        a1: f32,
        a2: f32,
        a3: f32,
        k: f32,
        norm: f32,
    },
}

impl Source {
    pub(crate) fn noise(center_hz: f64, sample_rate: f64, seed: u32) -> Source {
        const Q: f64 = 1.5;
        let fc = center_hz.clamp(20.0, 0.45 * sample_rate);
        let g = (std::f64::consts::PI * fc / sample_rate).tan();
        let k = 1.0 / Q;
        let a1 = 1.0 / (1.0 + g * (g + k));
        let a2 = g * a1;
        let a3 = g * a2;
        // Band-limited noise power scales with bandwidth; this keeps the burst's loudness
        // independent of its centre. Uniform noise has RMS 1/√3, the band fraction is π·fc/(Q·sr).
        let band = std::f64::consts::PI * fc / (Q * sample_rate);
        let rms = (1.0 / 3.0f64).sqrt() * band.min(1.0).sqrt();
        Source::Noise {
            rng: seed | 1,
            ic1: 0.0,
            ic2: 0.0,
            a1: a1 as f32,
            a2: a2 as f32,
            a3: a3 as f32,
            k: k as f32,
            norm: (0.3 / rms) as f32,
        }
    }
}

/// Where a voice is in its life, for allocation and stealing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    Free,
    /// Sounding and counted against the polyphony.
    Playing,
    /// Being faded out after being stolen; not counted.
    Fading,
}

/// Per-block inputs a voice needs from the synth.
pub(crate) struct BlockGains {
    pub(crate) master: f64,
    /// Channel volume × mute and pan gains, or `None` for channel-less tones.
    pub(crate) channel: Option<(f64, f64, f64)>,
}

pub(crate) struct VoiceState {
    pub(crate) slot: Slot,
    pub(crate) channel: Option<u8>,
    pub(crate) pitch_hz: f64,
    pub(crate) serial: u64,
    pub(crate) held: bool,
    /// Frames until an automatic key-up (tones).
    pub(crate) key_up_in: Option<u64>,
    pub(crate) volume: Glide,
    pub(crate) source: Source,
    body_env: Envelope,
    bright_env: Envelope,
    damped: bool,
    comp: f64,
    fixed_pan: (f64, f64),
    age: u64,
    sample_rate: f64,
    tremolo_depth: f64,
    vibrato_depth: f64,
    vibrato_delay: f64,
    lfo_table: &'static Table,
    lfo_phase: u32,
    lfo_inc: u32,
    /// Gains the previous block ended on: body left, body right, bright left, bright right.
    g: [f32; 4],
}

/// Everything needed to start a note.
pub(crate) struct NoteStart {
    pub(crate) voice: Voice,
    pub(crate) channel: Option<u8>,
    /// As requested, to match note-offs against.
    pub(crate) pitch_hz: f64,
    /// What will sound: the pitch limited to what the sample rate can carry.
    pub(crate) sound_hz: f64,
    pub(crate) volume: f64,
    pub(crate) fixed_pan: (f64, f64),
    pub(crate) key_up_in: Option<u64>,
    pub(crate) comp: f64,
    pub(crate) serial: u64,
}

impl VoiceState {
    pub(crate) fn idle() -> Self {
        VoiceState {
            slot: Slot::Free,
            channel: None,
            pitch_hz: 0.0,
            serial: 0,
            held: false,
            key_up_in: None,
            volume: Glide::new(0.0, 1.0),
            source: Source::Noise {
                rng: 1,
                ic1: 0.0,
                ic2: 0.0,
                a1: 0.0,
                a2: 0.0,
                a3: 0.0,
                k: 0.0,
                norm: 0.0,
            },
            body_env: Envelope::new(1.0, 1.0, 0.0, 0.0),
            bright_env: Envelope::new(1.0, 1.0, 0.0, 0.0),
            damped: true,
            comp: 1.0,
            fixed_pan: (1.0, 1.0),
            age: 0,
            sample_rate: 48_000.0,
            tremolo_depth: 0.0,
            vibrato_depth: 0.0,
            vibrato_delay: 0.0,
            lfo_table: crate::tables::tables().sine(),
            lfo_phase: 0,
            lfo_inc: 0,
            g: [0.0; 4],
        }
    }

    /// (Re)initialise this slot for a new note; the slot must be silent.
    pub(crate) fn start(&mut self, n: NoteStart, sample_rate: f64, volume_tau: f64) {
        let s = spec(n.voice);
        let sr = sample_rate;
        let release_k = (-LN_80DB / (s.release_s * sr)).exp();
        self.slot = Slot::Playing;
        self.channel = n.channel;
        self.pitch_hz = n.pitch_hz;
        self.serial = n.serial;
        self.held = true;
        self.key_up_in = n.key_up_in;
        self.volume = Glide::new(n.volume, volume_tau);
        self.body_env = Envelope::new(s.attack_s * sr, s.body_tau_s * sr, s.sustain, release_k);
        self.bright_env = Envelope::silent();
        self.damped = s.damped;
        self.comp = n.comp;
        self.fixed_pan = n.fixed_pan;
        self.age = 0;
        self.sample_rate = sr;
        self.tremolo_depth = s.tremolo_depth;
        self.vibrato_depth = s.vibrato_depth;
        self.vibrato_delay = s.vibrato_delay_s;
        let lfo_hz = if s.tremolo_depth > 0.0 {
            s.tremolo_hz
        } else {
            s.vibrato_hz
        };
        self.lfo_phase = 0;
        self.lfo_inc = (lfo_hz / sr * 4_294_967_296.0).round() as u32;
        self.g = [0.0; 4];
        self.source = match crate::tables::tables().timbre(n.voice) {
            Some(t) => {
                if t.bright.is_some() {
                    self.bright_env =
                        Envelope::new(s.attack_s * sr, s.bright_tau_s * sr, 0.0, release_k);
                }
                let table_hz = n.sound_hz * t.table_ratio;
                // Keep every partial below 20 kHz and safely under Nyquist.
                let limit = (0.45 * sr).min(20_000.0);
                let max_h = limit / table_hz;
                let base_inc = table_hz / sr * 4_294_967_296.0;
                Source::Table {
                    body: t.body.for_max_harmonic(max_h),
                    bright: t.bright.as_ref().map(|b| b.for_max_harmonic(max_h)),
                    phase: 0,
                    base_inc,
                    inc: base_inc.round() as u32,
                }
            }
            None => Source::noise(n.sound_hz, sr, (n.serial as u32).wrapping_mul(0x9E37_79B9)),
        };
    }

    /// Key-up: the note enters its release (undamped voices just ring on).
    pub(crate) fn key_up(&mut self) {
        self.held = false;
        self.key_up_in = None;
        if self.damped {
            self.body_env.release();
            self.bright_env.release();
        }
    }

    /// Fade out quickly to free the slot for another note.
    pub(crate) fn steal(&mut self, fade_k: f64) {
        self.slot = Slot::Fading;
        self.held = false;
        self.key_up_in = None;
        self.damped = true;
        for env in [&mut self.body_env, &mut self.bright_env] {
            env.set_release(fade_k);
            env.release();
        }
    }

    /// Rough current loudness, for picking a voice to steal.
    pub(crate) fn loudness(&self) -> f64 {
        (self.body_env.level() + self.bright_env.level()) * self.volume.current * self.comp
    }

    fn finished(&self) -> bool {
        self.body_env.falling()
            && self.bright_env.falling()
            && self.body_env.level() < SILENT
            && self.bright_env.level() < SILENT
    }

    /// Add `left.len()` frames of this voice into the mix. Returns false once it has finished.
    pub(crate) fn render(
        &mut self,
        left: &mut [f32],
        right: &mut [f32],
        gains: &BlockGains,
    ) -> bool {
        let n = left.len() as u32;
        if n == 0 {
            return true;
        }
        // Vibrato is applied as a per-block frequency: depth is a fraction of a semitone, so
        // the steps are far below what the ear can resolve.
        if let Source::Table { base_inc, inc, .. } = &mut self.source {
            if self.vibrato_depth > 0.0 {
                let t = self.age as f64 / self.sample_rate;
                let fade_in = ((t - self.vibrato_delay) / 0.4).clamp(0.0, 1.0);
                let sin = f64::from(lookup(self.lfo_table, self.lfo_phase));
                *inc = (*base_inc * (1.0 + self.vibrato_depth * fade_in * sin)).round() as u32;
            }
        }
        match self.key_up_in {
            Some(k) if k < u64::from(n) => {
                self.body_env.advance(k as u32);
                self.bright_env.advance(k as u32);
                self.key_up();
                self.body_env.advance(n - k as u32);
                self.bright_env.advance(n - k as u32);
            }
            _ => {
                if let Some(k) = &mut self.key_up_in {
                    *k -= u64::from(n);
                }
                self.body_env.advance(n);
                self.bright_env.advance(n);
            }
        }
        self.volume.advance(n);
        self.age += u64::from(n);

        self.lfo_phase = self.lfo_phase.wrapping_add(self.lfo_inc.wrapping_mul(n));
        let tremolo = if self.tremolo_depth > 0.0 {
            // Starts at full level: cos(0) = 1.
            let cos = f64::from(lookup(self.lfo_table, self.lfo_phase.wrapping_add(1 << 30)));
            1.0 - self.tremolo_depth * 0.5 * (1.0 - cos)
        } else {
            1.0
        };
        let (chan_gain, pl, pr) = match gains.channel {
            Some(c) => c,
            None => (1.0, self.fixed_pan.0, self.fixed_pan.1),
        };
        let common = self.comp * self.volume.current * chan_gain * gains.master;
        let body = common * self.body_env.level() * tremolo;
        let bright = common * self.bright_env.level();
        // Gains are ramped as left and right products: the product of two linear ramps is not
        // linear within a block, but it still meets its neighbours, which is all continuity needs.
        let end = [
            (body * pl) as f32,
            (body * pr) as f32,
            (bright * pl) as f32,
            (bright * pr) as f32,
        ];
        let start = self.g;
        self.g = end;
        let inv = 1.0 / n as f32;
        let ramp = Ramp {
            start,
            step: [
                (end[0] - start[0]) * inv,
                (end[1] - start[1]) * inv,
                (end[2] - start[2]) * inv,
                (end[3] - start[3]) * inv,
            ],
        };

        // A bright layer that has died away costs nothing more.
        let bright_live = start[2] != 0.0 || end[2] != 0.0 || start[3] != 0.0 || end[3] != 0.0;
        match &mut self.source {
            Source::Table {
                body,
                bright: Some(bright),
                phase,
                inc,
                ..
            } if bright_live => mix_two(body, bright, phase, *inc, &ramp, left, right),
            Source::Table {
                body, phase, inc, ..
            } => mix_one(body, phase, *inc, &ramp, left, right),
            Source::Noise {
                rng,
                ic1,
                ic2,
                a1,
                a2,
                a3,
                k,
                norm,
            } => {
                let (a1, a2, a3, k) = (*a1, *a2, *a3, *k * *norm);
                for (i, (l, r)) in left.iter_mut().zip(right.iter_mut()).enumerate() {
                    // xorshift32: cheap, and quality is irrelevant for a noise burst.
                    let mut x = *rng;
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    *rng = x;
                    let white = (x as i32) as f32 * (1.0 / 2_147_483_648.0);
                    let v3 = white - *ic2;
                    let v1 = a1 * *ic1 + a2 * v3;
                    let v2 = *ic2 + a2 * *ic1 + a3 * v3;
                    *ic1 = 2.0 * v1 - *ic1;
                    *ic2 = 2.0 * v2 - *ic2;
                    let s = k * v1;
                    let t = i as f32;
                    *l += s * ramp.at(0, t);
                    *r += s * ramp.at(1, t);
                }
            }
        }
        !self.finished()
    }
}

/// Linear gain ramps over a block: body left, body right, bright left, bright right.
struct Ramp {
    start: [f32; 4],
    step: [f32; 4],
}

impl Ramp {
    #[inline(always)]
    fn at(&self, k: usize, t: f32) -> f32 {
        self.start[k] + self.step[k] * t
    }
}

#[inline(always)]
fn lookup(table: &Table, phase: u32) -> f32 {
    let [a, d] = table[(phase >> FRAC_BITS) as usize];
    a + d * ((phase & FRAC_MASK) as f32 * FRAC_SCALE)
}

// The loops work four frames at a time: the four table reads are scalar, and everything after
// them is written so the compiler can use vector arithmetic. Gains are computed from the frame
// index rather than accumulated, so no frame waits on the previous one's additions.

/// Values, slopes and interpolation fractions of four consecutive frames.
#[inline(always)]
fn read4(table: &Table, p0: u32, inc: u32, i: usize) -> ([f32; 4], [f32; 4], [f32; 4]) {
    let mut a = [0.0; 4];
    let mut b = [0.0; 4];
    let mut f = [0.0; 4];
    for k in 0..4 {
        let p = p0.wrapping_add(inc.wrapping_mul((i + k) as u32));
        let j = (p >> FRAC_BITS) as usize;
        [a[k], b[k]] = table[j];
        f[k] = (p & FRAC_MASK) as f32 * FRAC_SCALE;
    }
    (a, b, f)
}

fn mix_one(
    body: &Table,
    phase: &mut u32,
    inc: u32,
    ramp: &Ramp,
    left: &mut [f32],
    right: &mut [f32],
) {
    let p0 = *phase;
    let n = left.len().min(right.len());
    let quads = n / 4 * 4;
    for (q, (l4, r4)) in left[..quads]
        .chunks_exact_mut(4)
        .zip(right[..quads].chunks_exact_mut(4))
        .enumerate()
    {
        let i = 4 * q;
        let (a, b, f) = read4(body, p0, inc, i);
        for k in 0..4 {
            let t = (i + k) as f32;
            let s = a[k] + b[k] * f[k];
            l4[k] += s * ramp.at(0, t);
            r4[k] += s * ramp.at(1, t);
        }
    }
    for i in quads..n {
        let t = i as f32;
        let s = lookup(body, p0.wrapping_add(inc.wrapping_mul(i as u32)));
        left[i] += s * ramp.at(0, t);
        right[i] += s * ramp.at(1, t);
    }
    *phase = p0.wrapping_add(inc.wrapping_mul(n as u32));
}

fn mix_two(
    body: &Table,
    bright: &Table,
    phase: &mut u32,
    inc: u32,
    ramp: &Ramp,
    left: &mut [f32],
    right: &mut [f32],
) {
    let p0 = *phase;
    let n = left.len().min(right.len());
    let quads = n / 4 * 4;
    for (q, (l4, r4)) in left[..quads]
        .chunks_exact_mut(4)
        .zip(right[..quads].chunks_exact_mut(4))
        .enumerate()
    {
        let i = 4 * q;
        let (a, b, f) = read4(body, p0, inc, i);
        let (c, d, _) = read4(bright, p0, inc, i);
        for k in 0..4 {
            let t = (i + k) as f32;
            let x = a[k] + b[k] * f[k];
            let y = c[k] + d[k] * f[k];
            l4[k] += x * ramp.at(0, t) + y * ramp.at(2, t);
            r4[k] += x * ramp.at(1, t) + y * ramp.at(3, t);
        }
    }
    for i in quads..n {
        let t = i as f32;
        let p = p0.wrapping_add(inc.wrapping_mul(i as u32));
        let x = lookup(body, p);
        let y = lookup(bright, p);
        left[i] += x * ramp.at(0, t) + y * ramp.at(2, t);
        right[i] += x * ramp.at(1, t) + y * ramp.at(3, t);
    }
    *phase = p0.wrapping_add(inc.wrapping_mul(n as u32));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_attack_then_decay_to_sustain() {
        let mut e = Envelope::new(10.0, 100.0, 0.5, 0.9);
        e.advance(5);
        assert!((e.level() - 0.5).abs() < 1e-12);
        e.advance(5);
        assert!((e.level() - 1.0).abs() < 1e-12);
        e.advance(100);
        assert!((e.level() - (0.5 + 0.5 * (-1.0f64).exp())).abs() < 1e-9);
        e.release();
        let before = e.level();
        e.advance(10);
        assert!((e.level() - before * 0.9f64.powi(10)).abs() < 1e-12);
        assert!(e.falling());
    }

    #[test]
    fn glide_converges() {
        let mut g = Glide::new(0.0, 10.0);
        g.set(1.0);
        g.advance(10);
        assert!((g.current - (1.0 - (-1.0f64).exp())).abs() < 1e-9);
        g.advance(1000);
        assert_eq!(g.current, 1.0);
        assert!(!g.moving());
    }

    #[test]
    fn constant_power_pan() {
        for p in [-1.0, -0.3, 0.0, 0.7, 1.0] {
            let (l, r) = pan_gains(p);
            assert!((l * l + r * r - 1.0).abs() < 1e-12);
        }
        let (l, r) = pan_gains(-1.0);
        assert!((l - 1.0).abs() < 1e-12 && r.abs() < 1e-12);
    }
}
