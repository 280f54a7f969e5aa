//! The standard component library that comes with VOML, built into the compiler: a spec
//! imports it as `voml:NAME` (`<import href="voml:auralization.voml"/>`), wherever the spec
//! is and whatever the search path, without reading any file.

/// The library's files, by name.
pub const FILES: &[(&str, &str)] = &[(
    "auralization.voml",
    include_str!("../../../stdlib-components/auralization.voml"),
)];

/// The scheme of references to the standard library.
pub const SCHEME: &str = "voml:";

/// The text of library file `name`.
pub fn file(name: &str) -> Option<&'static str> {
    FILES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}
