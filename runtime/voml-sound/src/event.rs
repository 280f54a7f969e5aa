//! What the synthesizer can be told to do: sound events, the voices that play them, and pitch
//! helpers.

use std::fmt;
use std::str::FromStr;

/// A channel number. Channels carry the per-stream settings of Francioni & Jackson's tool
/// (voice, stereo position, volume, mute) so that, say, sends and receives can be told apart,
/// moved in the stereo field or muted during playback.
pub type ChannelId = u8;

/// Number of channels a [`crate::Synth`] keeps (every value of [`ChannelId`]): the language's
/// sound channels, so that every `channel` a visual object may give is a channel of its own.
pub const NUM_CHANNELS: usize = voml_vocab::limits::SOUND_CHANNELS;
const _: () = assert!(NUM_CHANNELS == ChannelId::MAX as usize + 1);

/// One thing to do at a point of output time.
///
/// Volumes are linear amplitudes in `0..=1`, pans run from `-1` (left) through `0` (centre) to
/// `1` (right); values outside are clamped and non-finite ones replaced by a neutral value, so a
/// bad mapping can make a wrong sound but never a broken one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SoundEvent {
    /// A self-contained note: keyed for `duration_s`, then released (its release tail follows).
    /// It belongs to no channel, so channel settings (including mute) do not affect it.
    Tone {
        freq_hz: f64,
        duration_s: f64,
        volume: f64,
        pan: f64,
        voice: Voice,
    },
    /// Start a held note on a channel, with the channel's voice and pan. It sounds until the
    /// matching [`SoundEvent::NoteOff`] (struck voices may have died away by then).
    NoteOn {
        channel: ChannelId,
        pitch_hz: f64,
        volume: f64,
    },
    /// Release the oldest held note of `channel` at `pitch_hz` (matched within a few cents).
    NoteOff { channel: ChannelId, pitch_hz: f64 },
    /// Glide the volume of held notes on `channel`: those at `pitch_hz`, or all of them when it
    /// is `None`. Repeated changes make the idle-burst "swell" of Francioni & Jackson.
    SetVolume {
        channel: ChannelId,
        pitch_hz: Option<f64>,
        volume: f64,
    },
    /// Configure a channel. The voice applies to notes started afterwards; pan, volume and mute
    /// also move notes already sounding, smoothly.
    Channel {
        channel: ChannelId,
        voice: Voice,
        pan: f64,
        volume: f64,
        mute: bool,
    },
    /// Overall output volume.
    Master { volume: f64 },
}

/// A timbre. The set follows the voices of the case studies: vibes and marimba for sends and
/// receives, a bell for the start of an idle burst, a sustained string for its duration, and an
/// unpitched click for the "Geiger counter" of send density.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Voice {
    /// A pure sine: the reference tone of Trace2au.
    #[default]
    Sine,
    /// Struck, decaying, with the 1:4:10 bar partials and motor tremolo of a vibraphone.
    Vibes,
    /// Short woody decay, strong fundamental with a quickly fading fourth harmonic.
    Marimba,
    /// Inharmonic church-bell partials with a long decay.
    Bell,
    /// Bowed: band-limited sawtooth with a slow attack and delayed vibrato.
    String,
    /// Unpitched filtered-noise burst; its pitch only colours it (low thump to high tick).
    Noise,
}

impl Voice {
    /// Every voice, in declaration order.
    pub const ALL: [Voice; 6] = [
        Voice::Sine,
        Voice::Vibes,
        Voice::Marimba,
        Voice::Bell,
        Voice::String,
        Voice::Noise,
    ];

    /// The canonical name, as accepted by [`Voice::from_str`].
    pub fn name(self) -> &'static str {
        match self {
            Voice::Sine => "sine",
            Voice::Vibes => "vibes",
            Voice::Marimba => "marimba",
            Voice::Bell => "bell",
            Voice::String => "string",
            Voice::Noise => "noise",
        }
    }

    /// Whether a held note keeps sounding at a steady level until its note-off.
    pub fn is_sustained(self) -> bool {
        matches!(self, Voice::Sine | Voice::String | Voice::Vibes)
    }

    /// Whether the voice has a definite pitch.
    pub fn is_pitched(self) -> bool {
        self != Voice::Noise
    }
}

impl fmt::Display for Voice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A voice name that matched nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVoice(pub String);

impl fmt::Display for UnknownVoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown voice `{}`; expected one of", self.0)?;
        for (i, v) in Voice::ALL.iter().enumerate() {
            write!(f, "{}{}", if i == 0 { " " } else { ", " }, v.name())?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownVoice {}

impl FromStr for Voice {
    type Err = UnknownVoice;

    /// The language's voice names (`voml_vocab::voice`: case-insensitive, with the aliases
    /// `vibraphone` and `strings`), so that the synthesiser takes exactly the names
    /// `voml check` takes.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let name = voml_vocab::voice(s).ok_or_else(|| UnknownVoice(s.to_string()))?;
        Voice::ALL
            .iter()
            .copied()
            .find(|v| v.name() == name)
            .ok_or_else(|| UnknownVoice(s.to_string()))
    }
}

/// Frequency of a (possibly fractional) MIDI note number, A4 = 69 = 440 Hz.
pub fn midi_to_hz(note: f64) -> f64 {
    440.0 * ((note - 69.0) / 12.0).exp2()
}

/// MIDI note number (fractional) of a frequency; the inverse of [`midi_to_hz`].
pub fn hz_to_midi(freq_hz: f64) -> f64 {
    69.0 + 12.0 * (freq_hz / 440.0).log2()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The synthesiser's voices are the language's, by the same names, both ways.
    #[test]
    fn the_voices_are_the_languages() {
        let ours: Vec<&str> = Voice::ALL.iter().map(|v| v.name()).collect();
        assert_eq!(ours, voml_vocab::VOICES);
        for name in voml_vocab::voice_names() {
            let v: Voice = name.parse().unwrap();
            assert_eq!(Some(v.name()), voml_vocab::voice(name));
        }
        assert!("vibez".parse::<Voice>().is_err());
    }

    #[test]
    fn midi_round_trip() {
        assert!((midi_to_hz(69.0) - 440.0).abs() < 1e-9);
        assert!((midi_to_hz(60.0) - 261.625_565).abs() < 1e-5);
        for m in [21.0, 60.5, 108.0] {
            assert!((hz_to_midi(midi_to_hz(m)) - m).abs() < 1e-9);
        }
    }

    #[test]
    fn voice_names_round_trip() {
        for v in Voice::ALL {
            assert_eq!(v.name().parse::<Voice>().unwrap(), v);
        }
        assert_eq!("Vibraphone".parse::<Voice>().unwrap(), Voice::Vibes);
        let err = "tuba".parse::<Voice>().unwrap_err();
        assert!(err.to_string().contains("marimba"));
    }
}
