//! Sound sinks: the visual object's sound rendered offline to a WAV file in step with the
//! trace, or played live. Sound commands come from the runtime stamped with trace time;
//! output time is (trace time − the first record's time) / speed, sample-exact. The WAV is
//! written as the run goes, so a long trace needs no more memory than a short one.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use voml_runtime::{Runtime, SoundCommand, TimedSound};
use voml_sound::{SoundEvent, Synth, Voice};

/// Sound keeps ringing this long after the last note ends.
const TAIL_S: f64 = 1.5;
/// Frames rendered per call of the synthesiser.
const CHUNK: usize = 1024;
/// The default longest sound a run writes (`--max-audio-seconds`): one hour.
pub const DEFAULT_MAX_AUDIO_S: f64 = 3600.0;
/// The WAV format counts its data in a 32-bit field: 4 GiB, less the header.
const WAV_MAX_DATA_BYTES: u64 = u32::MAX as u64 - 64;

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

/// Turns the runtime's sound commands (trace time) into synthesiser events (output time):
/// shared by the WAV writer and live output.
pub struct Mapper {
    speed: f64,
    /// Output time = `out_anchor + (trace − trace_anchor) / (speed × tempo)`; a tempo change
    /// moves the anchors to its own time.
    trace_anchor: f64,
    out_anchor: f64,
    tempo: f64,
    channels: HashMap<u8, ChannelState>,
    /// When the last scheduled sound ends, in output seconds.
    pub last_end_s: f64,
    pub commands: u64,
}

impl Mapper {
    pub fn new(speed: f64) -> Mapper {
        Mapper {
            speed,
            trace_anchor: f64::NAN,
            out_anchor: 0.0,
            tempo: 1.0,
            channels: HashMap::new(),
            last_end_s: 0.0,
            commands: 0,
        }
    }

    /// Sets where output time zero is in trace time (the first record's timestamp).
    pub fn set_origin(&mut self, trace_ts: f64) {
        if self.trace_anchor.is_nan() {
            self.trace_anchor = trace_ts;
        }
    }

    pub fn output_time(&self, trace_ts: f64) -> f64 {
        let anchor = if self.trace_anchor.is_nan() {
            trace_ts
        } else {
            self.trace_anchor
        };
        (self.out_anchor + (trace_ts - anchor) / (self.speed * self.tempo)).max(0.0)
    }

    /// The synthesiser events for one command, at output times.
    pub fn map(&mut self, sound: &TimedSound) -> Vec<(f64, SoundEvent)> {
        self.set_origin(sound.at);
        self.commands += 1;
        let t = self.output_time(sound.at);
        let scale = self.speed * self.tempo;
        // The runtime refuses channels outside the language's range, which is the
        // synthesiser's: the clamp only guards against a runtime that did not.
        let channel = |c: i64| c.clamp(0, voml_sound::NUM_CHANNELS as i64 - 1) as u8;
        let events = match sound.command.clone() {
            SoundCommand::Tone {
                hz,
                duration,
                volume,
                pan,
                voice,
                channel: None,
            } => {
                let duration_s = duration / scale;
                self.last_end_s = self.last_end_s.max(t + duration_s);
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
                let end = t + duration / scale;
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
            } => {
                vec![(
                    t,
                    SoundEvent::NoteOn {
                        channel: channel(c),
                        pitch_hz: hz,
                        volume,
                    },
                )]
            }
            SoundCommand::NoteOff { channel: c, hz } => {
                vec![(
                    t,
                    SoundEvent::NoteOff {
                        channel: channel(c),
                        pitch_hz: hz,
                    },
                )]
            }
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
                if let Some(v) = voice {
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
                // Re-anchor here: later trace time runs at the new tempo.
                self.out_anchor = t;
                self.trace_anchor = sound.at;
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
        };
        for (at, _) in &events {
            self.last_end_s = self.last_end_s.max(*at);
        }
        events
    }
}

pub struct AudioOut {
    synth: Synth,
    writer: hound::WavWriter<BufWriter<File>>,
    rate: u32,
    pub mapper: Mapper,
    /// Output seconds rendered so far.
    rendered_s: f64,
    buffer: Vec<f32>,
    /// Commands played later than their time (they arrived after that time was rendered).
    pub late: u64,
    /// No sound is written past this output time (seconds).
    cap_s: f64,
    /// Sound events dropped because they fell after the cap.
    pub dropped: u64,
    /// Whether the sound was cut at the cap.
    pub cut: bool,
}

impl AudioOut {
    /// A WAV writer at `rate` for sound played at `speed`, at most `max_s` seconds long (and
    /// never longer than the WAV format can hold).
    pub fn create(path: &Path, rate: u32, speed: f64, max_s: f64) -> Result<AudioOut, String> {
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
            writer,
            rate,
            mapper: Mapper::new(speed),
            rendered_s: 0.0,
            buffer: vec![0.0; CHUNK * 2],
            late: 0,
            cap_s: max_s.min((WAV_MAX_DATA_BYTES / (2 * 2)) as f64 / f64::from(rate)),
            dropped: 0,
            cut: false,
        })
    }

    /// Schedules sound commands (in trace-time order).
    pub fn push(&mut self, sounds: &[TimedSound]) {
        for sound in sounds {
            for (at, event) in self.mapper.map(sound) {
                if at >= self.cap_s {
                    self.dropped += 1;
                    continue;
                }
                if at < self.rendered_s {
                    self.late += 1;
                }
                self.synth.schedule(at, event);
            }
        }
    }

    /// Renders output up to the output time of `trace_ts`.
    pub fn advance(&mut self, trace_ts: f64) -> Result<(), String> {
        let target = self.mapper.output_time(trace_ts);
        self.render_until(target)
    }

    fn render_until(&mut self, target_s: f64) -> Result<(), String> {
        if target_s > self.cap_s {
            self.cut = true;
        }
        let target_s = target_s.min(self.cap_s);
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

    /// The longest sound this writer writes, in seconds.
    pub fn cap_s(&self) -> f64 {
        self.cap_s
    }

    /// Renders what is still sounding and closes the file; returns the length in seconds.
    pub fn finish(mut self, trace_end: f64) -> Result<f64, String> {
        let end = self
            .mapper
            .output_time(trace_end)
            .max(self.mapper.last_end_s)
            + TAIL_S;
        self.render_until(end)?;
        let length = self.rendered_s;
        self.writer
            .finalize()
            .map_err(|e| format!("cannot finish the WAV file: {e}"))?;
        Ok(length)
    }
}

/// The sink that writes a run's sound to a WAV file (`voml run --audio`).
pub struct WavSink {
    path: std::path::PathBuf,
    out: Option<AudioOut>,
}

impl WavSink {
    /// Creates the file now, so that a path that cannot be written is reported before the
    /// run; sound is played `speed` times faster than trace time, at most `max_s` seconds.
    pub fn create(path: &Path, speed: f64, max_s: f64) -> Result<WavSink, String> {
        Ok(WavSink {
            path: path.to_path_buf(),
            out: Some(AudioOut::create(path, 48_000, speed, max_s)?),
        })
    }
}

impl crate::Sink for WavSink {
    fn can_restart(&self) -> bool {
        false
    }

    fn sounds(&mut self, runtime: &mut Runtime, sounds: &[TimedSound]) -> Result<(), String> {
        let Some(out) = self.out.as_mut() else {
            return Ok(());
        };
        if let Some(origin) = runtime.stats().first_ts {
            out.mapper.set_origin(origin);
        }
        out.push(sounds);
        Ok(())
    }

    fn progress(&mut self, runtime: &mut Runtime) -> Result<(), String> {
        let Some(out) = self.out.as_mut() else {
            return Ok(());
        };
        if let Some(origin) = runtime.stats().first_ts {
            out.mapper.set_origin(origin);
            out.advance(runtime.trace_time())?;
        }
        Ok(())
    }

    fn end(
        &mut self,
        runtime: &mut Runtime,
        _outcome: &crate::Outcome,
    ) -> Result<Vec<String>, String> {
        let Some(mut out) = self.out.take() else {
            return Ok(Vec::new());
        };
        if let Some(origin) = runtime.stats().first_ts {
            out.mapper.set_origin(origin);
        }
        let (commands, late, cap, dropped) =
            (out.mapper.commands, out.late, out.cap_s(), out.dropped);
        let seconds = out.finish(runtime.trace_time())?;
        let mut lines = Vec::new();
        if dropped > 0 || seconds >= cap {
            lines.push(format!(
                "warning: the sound was cut at {cap:.0} s (--max-audio-seconds){}",
                if dropped > 0 {
                    format!("; {dropped} sound events after it were dropped")
                } else {
                    String::new()
                }
            ));
        }
        let late = if late > 0 {
            format!(", {late} played late")
        } else {
            String::new()
        };
        lines.push(format!(
            "wrote {} ({seconds:.1} s of sound from {commands} sound commands{late})",
            self.path.display()
        ));
        Ok(lines)
    }
}

/// The sink that plays a paced run's sound on the default audio device (needs the `live`
/// feature).
#[cfg(feature = "live")]
pub struct LiveSink {
    output: Option<voml_sound::LiveOutput>,
    mapper: Mapper,
    speed: f64,
    /// Device time of the first record's trace time, once known.
    offset: Option<f64>,
    dropped: u64,
}

#[cfg(feature = "live")]
impl LiveSink {
    /// Opens the default output device (`VOML_AUDIO_DEVICE` picks another) for sound played
    /// `speed` times faster than trace time.
    pub fn start(speed: f64) -> Result<LiveSink, String> {
        use voml_sound::{LiveOptions, LiveOutput};
        let output = LiveOutput::start(LiveOptions::from_env()).map_err(|e| e.to_string())?;
        Ok(LiveSink {
            output: Some(output),
            mapper: Mapper::new(speed),
            speed,
            offset: None,
            dropped: 0,
        })
    }
}

#[cfg(feature = "live")]
impl crate::Sink for LiveSink {
    fn sounds(&mut self, runtime: &mut Runtime, sounds: &[TimedSound]) -> Result<(), String> {
        let Some(origin) = runtime.stats().first_ts else {
            return Ok(());
        };
        let Some(output) = self.output.as_mut() else {
            return Ok(());
        };
        self.mapper.set_origin(origin);
        // The device clock at the first record: now, less the trace time gone since, played
        // after the device's latency.
        let speed = self.speed;
        let offset = *self.offset.get_or_insert_with(|| {
            output.now_s() + output.latency_s() - (runtime.trace_time() - origin) / speed
        });
        for sound in sounds {
            for (at, event) in self.mapper.map(sound) {
                if output.send(offset + at, event).is_err() {
                    self.dropped += 1;
                }
            }
        }
        Ok(())
    }

    fn end(
        &mut self,
        _runtime: &mut Runtime,
        _outcome: &crate::Outcome,
    ) -> Result<Vec<String>, String> {
        if let Some(output) = self.output.take() {
            output.stop();
        }
        Ok(if self.dropped > 0 {
            vec![format!(
                "warning: {} sound events could not be played in time",
                self.dropped
            )]
        } else {
            Vec::new()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_setting_lets_a_wav_pass_the_format_limit() {
        let path = std::env::temp_dir().join(format!("voml-cap-{}.wav", std::process::id()));
        let out = AudioOut::create(&path, 48_000, 1.0, f64::INFINITY).unwrap();
        let bytes = out.cap_s() * 48_000.0 * 4.0 + 44.0;
        assert!(bytes <= u32::MAX as f64, "{bytes}");
        assert!(out.cap_s() > 20_000.0, "{}", out.cap_s());
        drop(out);
        let _ = std::fs::remove_file(path);
    }
}
