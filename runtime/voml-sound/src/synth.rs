//! The synthesizer: a time-ordered event queue, a fixed pool of voices, channels, and the mix
//! bus that ends in the limiter.
//!
//! Time is counted in output frames. An event scheduled at `t` seconds takes effect at frame
//! `round(t × sample_rate)` exactly: rendering splits its blocks at event frames. The limiter's
//! look-ahead delay is hidden by starting the voices that many frames ahead of the output, so
//! scheduled times are output times; audio is then made in fixed blocks, so the result does
//! not depend on how callers slice their requests.
//!
//! `render` allocates nothing: voices, channels, mix buffers and the limiter are created with
//! the synth, and taking events from the queue never allocates. Scheduling pushes onto a heap
//! that was reserved up front ([`Synth::reserve_events`] for more).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::event::{SoundEvent, Voice, NUM_CHANNELS};
use crate::limiter::Limiter;
use crate::loudness::{loudness_gain, LoudnessCurve};
use crate::voice::{pan_gains, BlockGains, Glide, NoteStart, Slot, VoiceState};

/// Most frames rendered between two evaluations of envelopes and gains (1.3 ms at 48 kHz).
pub const BLOCK: usize = 64;
/// Default number of simultaneous notes.
pub const DEFAULT_POLYPHONY: usize = 64;
/// Largest absolute sample value [`Synth::render`] produces.
pub const OUTPUT_CEILING: f32 = 0.98;
/// Peak of one full-volume note at 1 kHz before the limiter. Low enough that a handful of
/// loud notes mix without limiting, high enough that a single note is clearly heard.
pub const VOICE_HEADROOM: f64 = 0.3;

/// Extra slots where stolen notes finish their fade while new notes take their place.
const STEAL_SLOTS: usize = 16;
const LIMITER_LOOKAHEAD_S: f64 = 0.002;
/// Longer than a period of the lowest usual notes (50 Hz).
const LIMITER_HOLD_S: f64 = 0.025;
const LIMITER_RELEASE_DB_PER_S: f64 = 60.0;
/// Time constant of note-volume changes: a swell built from steps glides, without zipper noise.
const VOLUME_GLIDE_S: f64 = 0.015;
const CHANNEL_GLIDE_S: f64 = 0.005;
const MASTER_GLIDE_S: f64 = 0.01;
/// Time for a stolen note to fall 80 dB.
const STEAL_FADE_S: f64 = 0.01;
const INITIAL_EVENT_CAPACITY: usize = 4096;

struct Pending {
    frame: u64,
    seq: u64,
    event: SoundEvent,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Pending {}

impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Pending {
    /// Reversed, so the max-heap yields the earliest frame first, and among events at the same
    /// frame the one scheduled first (a channel set up and a note started together work).
    fn cmp(&self, other: &Self) -> Ordering {
        (other.frame, other.seq).cmp(&(self.frame, self.seq))
    }
}

struct Channel {
    voice: Voice,
    pan: Glide,
    pan_lr: (f64, f64),
    /// Volume, or 0 when muted.
    gain: Glide,
}

impl Channel {
    fn new(sample_rate: f64) -> Self {
        Channel {
            voice: Voice::Sine,
            pan: Glide::new(0.0, CHANNEL_GLIDE_S * sample_rate),
            pan_lr: pan_gains(0.0),
            gain: Glide::new(1.0, CHANNEL_GLIDE_S * sample_rate),
        }
    }
}

/// A polyphonic, sample-accurate, allocation-free synthesizer producing interleaved stereo.
pub struct Synth {
    sample_rate: u32,
    sr: f64,
    queue: BinaryHeap<Pending>,
    seq: u64,
    voices: Vec<VoiceState>,
    polyphony: usize,
    channels: Vec<Channel>,
    master: Glide,
    limiter: Limiter,
    mix_l: [f32; BLOCK],
    mix_r: [f32; BLOCK],
    /// Limited output of the current block, interleaved, and how much of it has been handed out.
    out_buf: [f32; 2 * BLOCK],
    out_pos: usize,
    /// Frame the voices will render next; ahead of the output by the limiter look-ahead.
    gen_frame: u64,
    out_frame: u64,
    primed: bool,
    serial: u64,
    loudness: LoudnessCurve,
    steal_fade_k: f64,
}

fn unit(x: f64) -> f64 {
    if x.is_finite() {
        x.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

fn signed_unit(x: f64) -> f64 {
    if x.is_finite() {
        x.clamp(-1.0, 1.0)
    } else {
        0.0
    }
}

/// Whether two pitches name the same note (within about 3.5 cents).
fn same_pitch(a: f64, b: f64) -> bool {
    (a / b - 1.0).abs() < 2e-3
}

impl Synth {
    /// A synth with [`DEFAULT_POLYPHONY`] voices.
    ///
    /// # Panics
    /// If `sample_rate` is below 1000.
    pub fn new(sample_rate: u32) -> Self {
        Self::with_polyphony(sample_rate, DEFAULT_POLYPHONY)
    }

    /// A synth that plays up to `polyphony` notes at once (at least 1); a note beyond that
    /// steals the quietest one, which fades out over a few milliseconds.
    ///
    /// # Panics
    /// If `sample_rate` is below 1000.
    pub fn with_polyphony(sample_rate: u32, polyphony: usize) -> Self {
        assert!(
            sample_rate >= 1000,
            "sample rate {sample_rate} Hz is too low"
        );
        let sr = f64::from(sample_rate);
        let polyphony = polyphony.max(1);
        let lookahead = (LIMITER_LOOKAHEAD_S * sr).round() as usize;
        Synth {
            sample_rate,
            sr,
            queue: BinaryHeap::with_capacity(INITIAL_EVENT_CAPACITY),
            seq: 0,
            voices: (0..polyphony + STEAL_SLOTS)
                .map(|_| VoiceState::idle())
                .collect(),
            polyphony,
            channels: (0..NUM_CHANNELS).map(|_| Channel::new(sr)).collect(),
            master: Glide::new(1.0, MASTER_GLIDE_S * sr),
            limiter: Limiter::new(
                lookahead,
                (LIMITER_HOLD_S * sr).round() as usize,
                OUTPUT_CEILING,
                LIMITER_RELEASE_DB_PER_S / sr,
            ),
            mix_l: [0.0; BLOCK],
            mix_r: [0.0; BLOCK],
            out_buf: [0.0; 2 * BLOCK],
            out_pos: BLOCK,
            gen_frame: 0,
            out_frame: 0,
            primed: false,
            serial: 0,
            loudness: LoudnessCurve::default(),
            steal_fade_k: (-9.210_340_371_976_184 / (STEAL_FADE_S * sr)).exp(),
        }
    }

    pub fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    /// Maximum number of notes counted against polyphony.
    pub fn polyphony(&self) -> usize {
        self.polyphony
    }

    /// Output time reached so far, in seconds.
    pub fn time_s(&self) -> f64 {
        self.out_frame as f64 / self.sr
    }

    /// Output frames rendered so far.
    pub fn frames_rendered(&self) -> u64 {
        self.out_frame
    }

    /// Notes currently making sound, including those fading after being stolen.
    pub fn active_voices(&self) -> usize {
        self.voices.iter().filter(|v| v.slot != Slot::Free).count()
    }

    /// Events scheduled but not yet reached.
    pub fn pending_events(&self) -> usize {
        self.queue.len()
    }

    /// Make room for `additional` more scheduled events without allocating later.
    pub fn reserve_events(&mut self, additional: usize) {
        self.queue.reserve(additional);
    }

    /// How many events can be pending before [`Synth::schedule`] has to allocate: while
    /// [`Synth::pending_events`] is below this, scheduling never allocates.
    pub fn event_capacity(&self) -> usize {
        self.queue.capacity()
    }

    pub fn loudness_curve(&self) -> LoudnessCurve {
        self.loudness
    }

    /// Pitch compensation for notes started from now on.
    pub fn set_loudness_curve(&mut self, curve: LoudnessCurve) {
        self.loudness = curve;
    }

    /// How far, in frames, the voices may be computed ahead of the output (one block plus the
    /// limiter look-ahead): the minimum scheduling lead for sample-exact live timing.
    pub fn lead_frames(&self) -> usize {
        BLOCK + self.limiter.lookahead()
    }

    /// Gain the limiter currently applies: 1 when the mix fits, less while it is limiting.
    pub fn limiter_gain(&self) -> f32 {
        self.limiter.gain()
    }

    /// Schedule `event` at `at_s` seconds of output time. Events may be scheduled in any order.
    /// Voices are computed ahead of the output by [`Synth::lead_frames`] at most; an event for
    /// a time they have passed takes effect as soon as possible, so live callers should
    /// schedule at least that far ahead. Negative and NaN times mean "as soon as possible".
    pub fn schedule(&mut self, at_s: f64, event: SoundEvent) {
        // `as` saturates: negative and NaN become 0, +inf never fires.
        let frame = (at_s * self.sr).round() as u64;
        self.queue.push(Pending {
            frame,
            seq: self.seq,
            event,
        });
        self.seq += 1;
    }

    /// Drop every pending event and release every note (their tails still sound): for
    /// stopping or seeking live playback.
    pub fn clear(&mut self) {
        self.queue.clear();
        for v in &mut self.voices {
            if v.slot == Slot::Playing && v.held {
                v.key_up();
            }
        }
    }

    /// Fill `out` with interleaved stereo frames (left, right) and advance time by
    /// `out.len() / 2` frames. A trailing odd sample is set to 0.
    ///
    /// Audio is produced in fixed blocks and handed out from there, so the result does not
    /// depend on how the output is sliced into calls: a live callback asking for 441 frames at a
    /// time hears exactly what an offline render writes.
    pub fn render(&mut self, out: &mut [f32]) {
        if !self.primed {
            self.prime();
        }
        let frames = out.len() / 2;
        let mut done = 0;
        while done < frames {
            if self.out_pos == BLOCK {
                self.synthesize(BLOCK);
                for (i, frame) in self.out_buf.chunks_exact_mut(2).enumerate() {
                    let [l, r] = self.limiter.process(self.mix_l[i], self.mix_r[i]);
                    frame[0] = l;
                    frame[1] = r;
                }
                self.out_pos = 0;
            }
            let n = (frames - done).min(BLOCK - self.out_pos);
            out[2 * done..2 * (done + n)]
                .copy_from_slice(&self.out_buf[2 * self.out_pos..2 * (self.out_pos + n)]);
            self.out_pos += n;
            done += n;
        }
        if out.len() % 2 == 1 {
            out[out.len() - 1] = 0.0;
        }
        self.out_frame += frames as u64;
    }

    /// Run the voices one look-ahead ahead of the output, so the limiter's delay lines up
    /// with scheduled times.
    fn prime(&mut self) {
        self.primed = true;
        let mut left = self.limiter.lookahead();
        while left > 0 {
            let n = left.min(BLOCK);
            self.synthesize(n);
            for i in 0..n {
                self.limiter.process(self.mix_l[i], self.mix_r[i]);
            }
            left -= n;
        }
    }

    /// Render the next `n` (at most [`BLOCK`]) frames of voices into the mix buffers.
    fn synthesize(&mut self, n: usize) {
        self.mix_l[..n].fill(0.0);
        self.mix_r[..n].fill(0.0);
        let mut pos = 0;
        while pos < n {
            while let Some(top) = self.queue.peek() {
                if top.frame > self.gen_frame {
                    break;
                }
                let event = self.queue.pop().expect("peeked").event;
                self.apply(event);
            }
            let mut seg = n - pos;
            if let Some(top) = self.queue.peek() {
                seg = (top.frame - self.gen_frame).min(seg as u64) as usize;
            }
            self.render_segment(pos, seg);
            pos += seg;
            self.gen_frame += seg as u64;
        }
    }

    fn render_segment(&mut self, pos: usize, seg: usize) {
        let n = seg as u32;
        self.master.advance(n);
        for ch in &mut self.channels {
            if ch.pan.moving() {
                ch.pan.advance(n);
                ch.pan_lr = pan_gains(ch.pan.current);
            }
            ch.gain.advance(n);
        }
        let master = self.master.current;
        let left = &mut self.mix_l[pos..pos + seg];
        let right = &mut self.mix_r[pos..pos + seg];
        for v in &mut self.voices {
            if v.slot == Slot::Free {
                continue;
            }
            let gains = BlockGains {
                master,
                channel: v.channel.map(|c| {
                    let ch = &self.channels[usize::from(c)];
                    (ch.gain.current, ch.pan_lr.0, ch.pan_lr.1)
                }),
            };
            if !v.render(left, right, &gains) {
                v.slot = Slot::Free;
            }
        }
    }

    fn channel_sounding(&self, channel: u8) -> bool {
        self.voices
            .iter()
            .any(|v| v.slot != Slot::Free && v.channel == Some(channel))
    }

    fn apply(&mut self, event: SoundEvent) {
        match event {
            SoundEvent::Tone {
                freq_hz,
                duration_s,
                volume,
                pan,
                voice,
            } => {
                let duration = if duration_s.is_finite() {
                    duration_s.max(0.0)
                } else {
                    0.0
                };
                self.start_note(
                    voice,
                    None,
                    freq_hz,
                    volume,
                    pan_gains(signed_unit(pan)),
                    Some((duration * self.sr).round() as u64),
                );
            }
            SoundEvent::NoteOn {
                channel,
                pitch_hz,
                volume,
            } => {
                let voice = self.channels[usize::from(channel)].voice;
                self.start_note(voice, Some(channel), pitch_hz, volume, (1.0, 1.0), None);
            }
            SoundEvent::NoteOff { channel, pitch_hz } => {
                let oldest = self
                    .voices
                    .iter_mut()
                    .filter(|v| {
                        v.slot == Slot::Playing
                            && v.held
                            && v.channel == Some(channel)
                            && same_pitch(v.pitch_hz, pitch_hz)
                    })
                    .min_by_key(|v| v.serial);
                if let Some(v) = oldest {
                    v.key_up();
                }
            }
            SoundEvent::SetVolume {
                channel,
                pitch_hz,
                volume,
            } => {
                let volume = unit(volume);
                for v in &mut self.voices {
                    if v.slot == Slot::Playing
                        && v.held
                        && v.channel == Some(channel)
                        && pitch_hz.is_none_or(|p| same_pitch(v.pitch_hz, p))
                    {
                        v.volume.set(volume);
                    }
                }
            }
            SoundEvent::Channel {
                channel,
                voice,
                pan,
                volume,
                mute,
            } => {
                // With nothing sounding on the channel there is nothing to glide: take the new
                // settings at once, so a note started together with them obeys them fully.
                let snap = !self.channel_sounding(channel);
                let ch = &mut self.channels[usize::from(channel)];
                ch.voice = voice;
                let gain = if mute { 0.0 } else { unit(volume) };
                let pan = signed_unit(pan);
                if snap {
                    ch.gain.snap(gain);
                    ch.pan.snap(pan);
                    ch.pan_lr = pan_gains(pan);
                } else {
                    ch.gain.set(gain);
                    ch.pan.set(pan);
                }
            }
            SoundEvent::Master { volume } => {
                let volume = unit(volume);
                if self.voices.iter().all(|v| v.slot == Slot::Free) {
                    self.master.snap(volume);
                } else {
                    self.master.set(volume);
                }
            }
        }
    }

    fn start_note(
        &mut self,
        voice: Voice,
        channel: Option<u8>,
        freq_hz: f64,
        volume: f64,
        fixed_pan: (f64, f64),
        key_up_in: Option<u64>,
    ) {
        if !(freq_hz.is_finite() && freq_hz > 0.0) {
            return;
        }
        let pitch = freq_hz.clamp(1.0, 0.45 * self.sr);
        let comp = loudness_gain(self.loudness, pitch) * VOICE_HEADROOM;
        let index = self.allocate();
        self.serial += 1;
        let start = NoteStart {
            voice,
            channel,
            pitch_hz: freq_hz,
            sound_hz: pitch,
            volume: unit(volume),
            fixed_pan,
            key_up_in,
            comp,
            serial: self.serial,
        };
        let tau = VOLUME_GLIDE_S * self.sr;
        self.voices[index].start(start, self.sr, tau);
    }

    /// A free slot for a new note, stealing the quietest note if polyphony is exhausted.
    fn allocate(&mut self) -> usize {
        let playing = self
            .voices
            .iter()
            .filter(|v| v.slot == Slot::Playing)
            .count();
        if playing >= self.polyphony {
            let victim = self
                .voices
                .iter_mut()
                .filter(|v| v.slot == Slot::Playing)
                .min_by(|a, b| {
                    a.loudness()
                        .total_cmp(&b.loudness())
                        .then(a.serial.cmp(&b.serial))
                });
            if let Some(v) = victim {
                v.steal(self.steal_fade_k);
            }
        }
        if let Some(i) = self.voices.iter().position(|v| v.slot == Slot::Free) {
            return i;
        }
        // Every fade slot is busy (a burst of steals): reuse the faintest fading note, which is
        // by then far down its fade.
        self.voices
            .iter()
            .enumerate()
            .filter(|(_, v)| v.slot == Slot::Fading)
            .min_by(|a, b| a.1.loudness().total_cmp(&b.1.loudness()))
            .map(|(i, _)| i)
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synth_can_move_to_an_audio_thread() {
        fn assert_send<T: Send>() {}
        assert_send::<Synth>();
    }

    #[test]
    fn queue_orders_by_frame_then_scheduling_order() {
        let mut s = Synth::new(48_000);
        s.schedule(0.5, SoundEvent::Master { volume: 0.5 });
        s.schedule(0.1, SoundEvent::Master { volume: 0.1 });
        s.schedule(0.1, SoundEvent::Master { volume: 0.2 });
        let a = s.queue.pop().unwrap();
        let b = s.queue.pop().unwrap();
        let c = s.queue.pop().unwrap();
        assert_eq!(a.frame, 4800);
        assert_eq!(a.event, SoundEvent::Master { volume: 0.1 });
        assert_eq!(b.event, SoundEvent::Master { volume: 0.2 });
        assert_eq!(c.frame, 24_000);
    }

    #[test]
    fn polyphony_is_bounded_and_stolen_slots_recycle() {
        let mut s = Synth::with_polyphony(48_000, 4);
        for i in 0..40 {
            s.schedule(
                i as f64 * 0.001,
                SoundEvent::Tone {
                    freq_hz: 200.0 + i as f64,
                    duration_s: 5.0,
                    volume: 1.0,
                    pan: 0.0,
                    voice: Voice::Sine,
                },
            );
        }
        let mut buf = vec![0.0; 2 * 4800];
        s.render(&mut buf);
        let playing = s.voices.iter().filter(|v| v.slot == Slot::Playing).count();
        assert_eq!(playing, 4);
        assert!(s.active_voices() <= 4 + STEAL_SLOTS);
        s.render(&mut buf);
        assert_eq!(s.active_voices(), 4, "stolen notes have faded out");
    }
}
