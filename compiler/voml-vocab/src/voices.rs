//! The sound voices a `voice` attribute may name, and how a written name is read: the
//! compiler checks literal voice names with [`voice`], and the synthesiser reads them with
//! it, so both take the same names.

/// The voices, by their canonical names.
pub const VOICES: &[&str] = &["sine", "vibes", "marimba", "bell", "string", "noise"];

/// Other names taken for voices: (name, the voice it means).
pub const VOICE_ALIASES: &[(&str, &str)] = &[("vibraphone", "vibes"), ("strings", "string")];

/// The canonical name of the voice `name` means, ignoring case and surrounding whitespace;
/// `None` when it names no voice.
pub fn voice(name: &str) -> Option<&'static str> {
    let name = name.trim();
    VOICES
        .iter()
        .copied()
        .find(|v| v.eq_ignore_ascii_case(name))
        .or_else(|| {
            VOICE_ALIASES
                .iter()
                .find(|(alias, _)| alias.eq_ignore_ascii_case(name))
                .map(|&(_, v)| v)
        })
}

/// Every name [`voice`] takes (canonical names, then aliases), for suggestions.
pub fn voice_names() -> impl Iterator<Item = &'static str> {
    VOICES
        .iter()
        .copied()
        .chain(VOICE_ALIASES.iter().map(|&(alias, _)| alias))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_as_voices() {
        for v in VOICES {
            assert_eq!(voice(v), Some(*v));
            assert_eq!(voice(&format!(" {} ", v.to_ascii_uppercase())), Some(*v));
        }
        for (alias, v) in VOICE_ALIASES {
            assert!(VOICES.contains(v) && !VOICES.contains(alias));
            assert_eq!(voice(alias), Some(*v));
        }
        assert_eq!(voice("vibez"), None);
        assert_eq!(voice(""), None);
        assert_eq!(voice_names().count(), VOICES.len() + VOICE_ALIASES.len());
    }
}
