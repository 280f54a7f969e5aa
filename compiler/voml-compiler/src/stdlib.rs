//! The standard component library that comes with VOML, built into the compiler: a spec
//! imports it as `voml:NAME` (`<import href="voml:auralization.voml"/>`), wherever the spec
//! is and whatever the search path, without reading any file.

/// The library's files, by name.
pub const FILES: &[(&str, &str)] = &[
    (
        "auralization.voml",
        include_str!("../../../stdlib-components/auralization.voml"),
    ),
    (
        "displays.voml",
        include_str!("../../../stdlib-components/displays.voml"),
    ),
    (
        "dynamics.voml",
        include_str!("../../../stdlib-components/dynamics.voml"),
    ),
    (
        "messages.voml",
        include_str!("../../../stdlib-components/messages.voml"),
    ),
    (
        "plots.voml",
        include_str!("../../../stdlib-components/plots.voml"),
    ),
    (
        "rp3.voml",
        include_str!("../../../stdlib-components/rp3.voml"),
    ),
    (
        "paragraph.voml",
        include_str!("../../../stdlib-components/paragraph.voml"),
    ),
];

/// The scheme of references to the standard library.
pub const SCHEME: &str = "voml:";

/// The text of library file `name`.
pub fn file(name: &str) -> Option<&'static str> {
    FILES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// One component of the standard library, as `voml components` shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The library file (`auralization.voml`).
    pub library: String,
    /// `ep-component` or `ir-component`.
    pub kind: String,
    pub name: String,
    /// The interface: `inputs`, `infos`, `controls`, `views` as written (empty when none).
    pub inputs: String,
    pub infos: String,
    pub controls: String,
    pub views: String,
    /// The component's `<description>`, whitespace folded.
    pub description: String,
}

impl Entry {
    /// The parts of its interface the component has, by attribute name (`inputs`, `infos`,
    /// `controls`, `views`).
    pub fn interface(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            ("inputs", self.inputs.as_str()),
            ("infos", self.infos.as_str()),
            ("controls", self.controls.as_str()),
            ("views", self.views.as_str()),
        ]
        .into_iter()
        .filter(|(_, value)| !value.is_empty())
    }

    /// The first sentence of the description: the catalogue's one line.
    pub fn summary(&self) -> &str {
        let d = self.description.as_str();
        match d.find(". ") {
            Some(end) => &d[..=end],
            None => d,
        }
    }
}

/// Every component of the standard library, in library and file order.
pub fn catalogue() -> Vec<Entry> {
    let mut entries = Vec::new();
    for (library, text) in FILES {
        let mut db = crate::source::SourceDb::new();
        let file = db.add(
            format!("{SCHEME}{library}"),
            std::path::PathBuf::from(library),
            text.to_string(),
        );
        let fs = crate::source::RealFs;
        let opts = crate::xml::LoadOptions {
            fs: &fs,
            search_path: &[],
            cache_dir: None,
            remotes: None,
        };
        let mut diags = Vec::new();
        let doc = crate::xml::parse_document(&mut db, file, &opts, &mut diags);
        let Some(root) = doc.root else { continue };
        for comp in root
            .elements()
            .filter(|e| e.name == "ep-component" || e.name == "ir-component")
        {
            let attr = |name: &str| {
                comp.attr_text(name)
                    .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
                    .unwrap_or_default()
            };
            let description = comp
                .elements()
                .find(|e| e.name == "description")
                .map(crate::lower::description_text)
                .unwrap_or_default();
            entries.push(Entry {
                library: library.to_string(),
                kind: comp.name.clone(),
                name: attr("name"),
                inputs: attr("inputs"),
                infos: attr("infos"),
                controls: attr("controls"),
                views: attr("views"),
                description,
            });
        }
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_lists_every_component_with_its_interface() {
        let entries = catalogue();
        let send = entries
            .iter()
            .find(|e| e.name == "send-receive")
            .expect("send-receive is in the library");
        assert_eq!(send.library, "auralization.voml");
        assert_eq!(send.kind, "ep-component");
        assert_eq!(send.inputs, "send.ts.proc.dest receive.ts.proc");
        assert_eq!(send.controls, "chan by-receiver len");
        assert!(send
            .summary()
            .starts_with("Francioni and Jackson's basic send-receive mapping"));
        assert!(send.summary().ends_with('.'));
        // Every component has a name and a description.
        for e in &entries {
            assert!(!e.name.is_empty() && !e.description.is_empty(), "{e:?}");
        }
    }
}
