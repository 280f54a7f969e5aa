//! The sound layer of VOML: turns timed sound events into stereo audio, so that the event
//! stream of a parallel program can be heard as well as seen.
//!
//! It follows the two auralization designs the project is built on. From Francioni & Jackson
//! come channels (voice, stereo position, volume, mute), held notes that last as long as the
//! program state they depict, volume swells on held notes, and a set of voices (vibes, marimba,
//! bell, string, a noise "Geiger counter"). From Trace2au come real-time synthesis without
//! samples, the logarithmic processor-to-frequency map, loudness compensation across pitch and
//! mixing that never exceeds full scale.
//!
//! ```
//! use voml_sound::{processor_frequency, render_to_vec, SoundEvent, Voice};
//!
//! // Processor 3 of 16 sends a message at 0.25 s of output: a vibes note at its pitch.
//! let f = processor_frequency(3, 16, 100.0, 3500.0);
//! let events = [(0.25, SoundEvent::Tone { freq_hz: f, duration_s: 0.1, volume: 0.8, pan: -0.5, voice: Voice::Vibes })];
//! let stereo = render_to_vec(&events, 1.0, 48_000);
//! assert_eq!(stereo.len(), 2 * 48_000);
//! assert!(stereo.iter().all(|s| s.abs() <= 1.0));
//! ```
//!
//! The runtime drives a [`Synth`]: it converts trace time to output time, calls
//! [`Synth::schedule`], and pulls audio with [`Synth::render`] (offline, or from an audio
//! callback: `render` does not allocate).
//!
//! # Live output
//!
//! With the cargo feature `live` (not on by default), `LiveOutput` plays a synth on the
//! default audio device through cpal, fed from any thread through a lock-free ring buffer: the
//! audio callback neither locks nor allocates. Without a device, `LiveOutput::start` returns
//! `LiveError::NoDevice`, whose message is one line suitable as a warning.
//!
//! Building the feature on Linux needs the ALSA development files and pkg-config (Debian and
//! Ubuntu: `apt-get install libasound2-dev pkg-config`; Fedora: `alsa-lib-devel pkgconf`); the
//! default build needs neither. The `live_latency` example reports the device's buffer, sample
//! rate and the resulting latency:
//! `cargo run --release -p voml-sound --features live --example live_latency [--tone]`.
//!
//! # How it sounds right
//!
//! - **No clicks.** Every note has a linear attack (0.3 ms for a click, 1–5 ms struck, 80 ms
//!   bowed) and exponential decay and release; gains are ramped over blocks of at most
//!   [`BLOCK`] frames starting from where the last block ended, so a note-off, a mute, a pan or
//!   volume change is always a ramp, never a step. Volume changes on held notes glide with a
//!   15 ms time constant.
//! - **Never clipping.** Each note peaks at [`VOICE_HEADROOM`] at full volume; the sum goes
//!   through a 2 ms look-ahead limiter that provably keeps every sample within
//!   [`OUTPUT_CEILING`], holds its gain for 25 ms (a steady loud chord gets a steady gain, not
//!   distortion) and recovers at 60 dB/s.
//! - **Equal loudness.** Notes are compensated for pitch by a [`LoudnessCurve`], by default
//!   +3 dB per octave below 1 kHz and above 4 kHz (capped), so low processors are not drowned.
//! - **Polyphony.** [`DEFAULT_POLYPHONY`] notes; one more steals the quietest, which fades out
//!   in 10 ms in a spare slot while the new note starts on time.

mod event;
mod limiter;
#[cfg(feature = "live")]
mod live;
mod loudness;
mod mapping;
mod offline;
mod synth;
mod tables;
mod voice;

pub use event::{hz_to_midi, midi_to_hz, ChannelId, SoundEvent, UnknownVoice, Voice, NUM_CHANNELS};
#[cfg(feature = "live")]
pub use live::{
    Full, LiveError, LiveOptions, LiveOutput, LiveRenderer, LiveSender, DEFAULT_EVENT_CAPACITY,
    DEVICE_ENV, DEVICE_PERIODS,
};
pub use loudness::{loudness_gain, LoudnessCurve, LOUDNESS_REFERENCE_HZ};
pub use mapping::{
    meter_pitch, processor_frequency, quantize_to_scale, trace2au_mix_volume, OverlappingClasses,
    Partition, Scale, UnknownScale, TRACE2AU_F_MAX, TRACE2AU_F_MIN,
};
pub use offline::{render_to_vec, render_wav, write_wav};
pub use synth::{Synth, BLOCK, DEFAULT_POLYPHONY, OUTPUT_CEILING, VOICE_HEADROOM};
