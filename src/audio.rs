//! `voml run --audio FILE.wav`: the visual object's sound, rendered offline in step with the
//! trace. Sound commands come from the runtime stamped with trace time; output time is
//! (trace time − the first record's time) / speed, sample-exact. The WAV is written as the
//! replay goes, so a long trace needs no more memory than a short one.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use voml_runtime::host::{SoundCommand, TimedSound};
use voml_sound::{SoundEvent, Synth, Voice};

/// Sound keeps ringing this long after the last note ends.
const TAIL_S: f64 = 1.5;
/// Frames rendered per call of the synthesiser.
const CHUNK: usize = 1024;

#[derive(Clone, Copy)]
struct ChannelState {
    voice: Voice,
    pan: f64,
    volume: f64,
    mute: bool,
}

impl Default for ChannelState {
    fn default() -> ChannelState {
        ChannelState {
            voice: Voice::Sine,
            pan: 0.0,
            volume: 1.0,
            mute: false,
        }
    }
}

pub struct AudioOut {
    synth: Synth,
    /// Output time = `out_anchor + (trace − trace_anchor) / (speed × tempo)`; a tempo change
    /// moves the anchors to its own time.
    trace_anchor: f64,
    out_anchor: f64,
    tempo: f64,
    writer: hound::WavWriter<BufWriter<File>>,
    rate: u32,
    speed: f64,
    origin: f64,
    /// Output seconds rendered so far.
    rendered_s: f64,
    /// When the last scheduled sound ends, in output seconds.
    last_end_s: f64,
    channels: HashMap<u8, ChannelState>,
    buffer: Vec<f32>,
    /// Commands played later than their time (they arrived after that time was rendered).
    pub late: u64,
    pub commands: u64,
}

impl AudioOut {
    pub fn create(path: &Path, rate: u32, speed: f64) -> Result<AudioOut, String> {
        let spec = hound::WavSpec {
            channels: 2,
            sample_rate: rate,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let writer = hound::WavWriter::create(path, spec)
            .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
        Ok(AudioOut {
            synth: Synth::new(rate),
            trace_anchor: f64::NAN,
            out_anchor: 0.0,
            tempo: 1.0,
            writer,
            rate,
            speed,
            origin: f64::NAN,
            rendered_s: 0.0,
            last_end_s: 0.0,
            channels: HashMap::new(),
            buffer: vec![0.0; CHUNK * 2],
            late: 0,
            commands: 0,
        })
    }

    /// Sets where output time zero is in trace time (the first record's timestamp).
    pub fn set_origin(&mut self, trace_ts: f64) {
        if self.origin.is_nan() {
            self.origin = trace_ts;
            self.trace_anchor = trace_ts;
        }
    }

    fn output_time(&self, trace_ts: f64) -> f64 {
        let anchor = if self.trace_anchor.is_nan() {
            trace_ts
        } else {
            self.trace_anchor
        };
        (self.out_anchor + (trace_ts - anchor) / (self.speed * self.tempo)).max(0.0)
    }

    /// Schedules sound commands (in trace-time order).
    pub fn push(&mut self, sounds: Vec<TimedSound>) {
        for sound in sounds {
            self.set_origin(sound.at);
            let t = self.output_time(sound.at);
            if t < self.rendered_s {
                self.late += 1;
            }
            self.commands += 1;
            for (at, event) in self.events(t, sound.command) {
                self.last_end_s = self.last_end_s.max(at);
                self.synth.schedule(at, event);
            }
        }
    }

    /// The synthesiser events for one command at output time `t`.
    fn events(&mut self, t: f64, command: SoundCommand) -> Vec<(f64, SoundEvent)> {
        let channel = |c: i64| c.clamp(0, 255) as u8;
        match command {
            SoundCommand::Tone {
                hz,
                duration,
                volume,
                pan,
                voice,
                channel: None,
            } => {
                let duration_s = duration / (self.speed * self.tempo);
                self.last_end_s = self.last_end_s.max(t + duration_s);
                let voice = voice.parse().unwrap_or(Voice::Sine);
                vec![(
                    t,
                    SoundEvent::Tone {
                        freq_hz: hz,
                        duration_s,
                        volume,
                        pan,
                        voice,
                    },
                )]
            }
            // A tone on a channel is a held note of that length, so the channel's voice,
            // pan, volume and muting apply.
            SoundCommand::Tone {
                hz,
                duration,
                volume,
                channel: Some(c),
                ..
            } => {
                let end = t + duration / (self.speed * self.tempo);
                vec![
                    (
                        t,
                        SoundEvent::NoteOn {
                            channel: channel(c),
                            pitch_hz: hz,
                            volume,
                        },
                    ),
                    (
                        end,
                        SoundEvent::NoteOff {
                            channel: channel(c),
                            pitch_hz: hz,
                        },
                    ),
                ]
            }
            SoundCommand::NoteOn {
                channel: c,
                hz,
                volume,
            } => vec![(
                t,
                SoundEvent::NoteOn {
                    channel: channel(c),
                    pitch_hz: hz,
                    volume,
                },
            )],
            SoundCommand::NoteOff { channel: c, hz } => vec![(
                t,
                SoundEvent::NoteOff {
                    channel: channel(c),
                    pitch_hz: hz,
                },
            )],
            SoundCommand::NoteVolume {
                channel: c,
                hz,
                volume,
            } => {
                vec![(
                    t,
                    SoundEvent::SetVolume {
                        channel: channel(c),
                        pitch_hz: hz,
                        volume,
                    },
                )]
            }
            SoundCommand::Channel {
                channel: c,
                voice,
                pan,
                volume,
                mute,
            } => {
                let state = self.channels.entry(channel(c)).or_default();
                if let Some(v) = voice.and_then(|v| v.parse().ok()) {
                    state.voice = v;
                }
                state.pan = pan.unwrap_or(state.pan);
                state.volume = volume.unwrap_or(state.volume);
                state.mute = mute.unwrap_or(state.mute);
                let s = *state;
                vec![(
                    t,
                    SoundEvent::Channel {
                        channel: channel(c),
                        voice: s.voice,
                        pan: s.pan,
                        volume: s.volume,
                        mute: s.mute,
                    },
                )]
            }
            SoundCommand::Master { volume } => vec![(t, SoundEvent::Master { volume })],
            SoundCommand::Tempo { factor } => {
                // Re-anchor at this command's time: later trace time runs at the new tempo.
                let trace_now = self.trace_anchor + (t - self.out_anchor) * self.speed * self.tempo;
                self.out_anchor = t;
                self.trace_anchor = trace_now;
                self.tempo = factor;
                Vec::new()
            }
            // The paper's beep: a short bell.
            SoundCommand::Beep => {
                self.last_end_s = self.last_end_s.max(t + 0.15);
                vec![(
                    t,
                    SoundEvent::Tone {
                        freq_hz: 880.0,
                        duration_s: 0.15,
                        volume: 0.5,
                        pan: 0.0,
                        voice: Voice::Bell,
                    },
                )]
            }
        }
    }

    /// Renders output up to the output time of `trace_ts`.
    pub fn advance(&mut self, trace_ts: f64) -> Result<(), String> {
        let target = self.output_time(trace_ts);
        self.render_until(target)
    }

    fn render_until(&mut self, target_s: f64) -> Result<(), String> {
        let target_frames = (target_s * f64::from(self.rate)).round() as u64;
        let mut done = (self.rendered_s * f64::from(self.rate)).round() as u64;
        while done < target_frames {
            let frames = ((target_frames - done) as usize).min(CHUNK);
            let out = &mut self.buffer[..frames * 2];
            self.synth.render(out);
            for &sample in out.iter() {
                let s = (sample.clamp(-1.0, 1.0) * 32767.0).round() as i16;
                self.writer
                    .write_sample(s)
                    .map_err(|e| format!("cannot write the WAV file: {e}"))?;
            }
            done += frames as u64;
        }
        self.rendered_s = done as f64 / f64::from(self.rate);
        Ok(())
    }

    /// Renders what is still sounding and closes the file; returns the length in seconds.
    pub fn finish(mut self, trace_end: f64) -> Result<f64, String> {
        let end = self.output_time(trace_end).max(self.last_end_s) + TAIL_S;
        self.render_until(end)?;
        let length = self.rendered_s;
        self.writer
            .finalize()
            .map_err(|e| format!("cannot finish the WAV file: {e}"))?;
        Ok(length)
    }
}
