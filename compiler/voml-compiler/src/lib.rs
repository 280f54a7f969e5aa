//! The VOML compiler: `.voml` (XML with embedded Scheme) in, a compiled visual object
//! ([`voml_ir::CompiledVo`]) and every diagnostic out.
//!
//! The phases, each in its own module:
//! 1. [`xml`]: quick-xml to a spanned tree, DOCTYPE entities expanded ([`source`] finds files).
//! 2. [`structure`]: element and attribute names, nesting and fixed-kind values, from the
//!    table in [`schema`].
//! 3. [`lower`]: names resolved, whole-spec checks, Scheme tangled ([`scheme`] handles formal
//!    parameters and reads code with steel's own reader).
//!
//! Invariant: compilation never panics and never stops at the first problem. It returns the
//! diagnostics and, when there is no error, the compiled visual object.

pub mod colours;
pub mod diag;
pub mod lower;
pub mod schema;
pub mod scheme;
pub mod source;
pub mod stdlib;
pub mod structure;
pub mod xml;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use sha2::Digest;
use voml_ir::{CompiledVo, Span};

pub use diag::{Code, Diagnostic, Severity};
pub use source::{FileSystem, MemoryFs, RealFs, SourceDb};
pub use xml::LoadOptions;

/// How to compile.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Directories searched for entities and imports after the referring file's directory.
    pub search_path: Vec<PathBuf>,
    /// Where pinned remote components are looked up (files named by their sha256).
    pub cache_dir: Option<PathBuf>,
}

/// The result of a compilation.
pub struct Output {
    /// Present when there were no errors.
    pub vo: Option<CompiledVo>,
    pub diagnostics: Vec<Diagnostic>,
    /// Every file read, for rendering the diagnostics.
    pub db: SourceDb,
}

impl Output {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Compiles the file at `path`, reading it and everything it refers to through `fs`.
pub fn compile(path: &Path, fs: &dyn FileSystem, options: &Options) -> Output {
    compile_noting(path, fs, options, None)
}

/// Compiles as [`compile`] does and lists every pinned remote reference met on the way
/// (in entities, imports and the files they bring, cached or not), in the order met. A
/// reference inside a remote file that is not cached yet is not seen until it is.
pub fn remote_references(
    path: &Path,
    fs: &dyn FileSystem,
    options: &Options,
) -> (Output, Vec<source::RemoteRef>) {
    let remotes = std::cell::RefCell::new(Vec::new());
    let out = compile_noting(path, fs, options, Some(&remotes));
    (out, remotes.into_inner())
}

fn compile_noting(
    path: &Path,
    fs: &dyn FileSystem,
    options: &Options,
    remotes: Option<&std::cell::RefCell<Vec<source::RemoteRef>>>,
) -> Output {
    let mut db = SourceDb::new();
    let mut diagnostics = Vec::new();
    let text = match fs.read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                let valid = e.utf8_error().valid_up_to();
                let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
                let file = db.add(path.display().to_string(), path.to_path_buf(), lossy);
                diagnostics.push(
                    Diagnostic::new(
                        Code::XmlSyntax,
                        Span::new(file, valid, valid + 1),
                        "the file is not UTF-8 text",
                    )
                    .label("invalid byte here")
                    .hint("save the file as UTF-8"),
                );
                return Output {
                    vo: None,
                    diagnostics,
                    db,
                };
            }
        },
        Err(e) => {
            let file = db.add(
                path.display().to_string(),
                path.to_path_buf(),
                String::new(),
            );
            diagnostics.push(
                Diagnostic::new(
                    Code::FileNotFound,
                    Span::new(file, 0, 0),
                    format!("cannot read `{}`: {e}", path.display()),
                )
                .label("here"),
            );
            return Output {
                vo: None,
                diagnostics,
                db,
            };
        }
    };
    let file = db.add(path.display().to_string(), path.to_path_buf(), text);
    let opts = LoadOptions {
        fs,
        search_path: &options.search_path,
        cache_dir: options.cache_dir.as_deref(),
        remotes,
    };
    let vo = compile_loaded(&mut db, file, &opts, &mut diagnostics);
    sort_diagnostics(&mut diagnostics);
    let vo = if diagnostics.iter().any(Diagnostic::is_error) {
        None
    } else {
        vo
    };
    Output {
        vo,
        diagnostics,
        db,
    }
}

/// Compiles a spec given as text (for tests, tools and the fuzzer); entities and imports are
/// read from `fs`.
pub fn compile_str(name: &str, text: &str, fs: &dyn FileSystem, options: &Options) -> Output {
    struct Overlay<'a> {
        name: PathBuf,
        text: &'a str,
        inner: &'a dyn FileSystem,
    }
    impl FileSystem for Overlay<'_> {
        fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
            if path == self.name {
                Ok(self.text.as_bytes().to_vec())
            } else {
                self.inner.read(path)
            }
        }
        fn exists(&self, path: &Path) -> bool {
            path == self.name || self.inner.exists(path)
        }
        fn is_special(&self, path: &Path) -> bool {
            path != self.name && self.inner.is_special(path)
        }
        fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
            self.inner
                .canonicalize(path)
                .or_else(|_| Ok(source::normalize(path)))
        }
    }
    let overlay = Overlay {
        name: PathBuf::from(name),
        text,
        inner: fs,
    };
    compile(Path::new(name), &overlay, options)
}

fn compile_loaded(
    db: &mut SourceDb,
    file: u32,
    opts: &LoadOptions,
    diags: &mut Vec<Diagnostic>,
) -> Option<CompiledVo> {
    let doc = xml::parse_document(db, file, opts, diags);
    if doc.malformed {
        return None;
    }
    let mut root = doc.root?;
    if !structure::check(&mut root, &["voml", "voml-library"], diags) {
        return None;
    }
    if root.name == "voml-library" {
        // A library is checked on its own terms; it becomes code only inside a spec.
        check_library(&root, diags);
        return None;
    }
    let library = imports(db, &root, opts, diags);
    let body = root.elements().find(|e| e.name == "body");
    let vo = body.and_then(|b| b.elements().find(|e| e.name == "visual-object"));
    let Some(vo) = vo else {
        let (span, msg) = match body {
            Some(b) => (b.name_span, "`<body>` has no `<visual-object>`"),
            None => (root.name_span, "`<voml>` has no `<body>`"),
        };
        diags.push(
            Diagnostic::new(Code::MissingElement, span, msg)
                .label("nothing to compile")
                .hint("a spec is <voml><body><visual-object name=\"...\">...</visual-object></body></voml>"),
        );
        return None;
    };
    let lowering = lower::Lowering::new(db, opts, diags, &library);
    let mut compiled = lowering.visual_object(vo);
    // An import is unused when none of its components is used; a library may well offer
    // more components than one spec needs.
    let mut per_import: Vec<(Span, Vec<&str>, bool)> = Vec::new();
    for (name, lib) in &library {
        match per_import
            .iter_mut()
            .find(|(s, _, _)| *s == lib.import_span)
        {
            Some(entry) => {
                entry.1.push(name);
                entry.2 |= lib.used.get();
            }
            None => per_import.push((lib.import_span, vec![name], lib.used.get())),
        }
    }
    for (import_span, mut names, used) in per_import {
        if !used {
            names.sort_unstable();
            diags.push(
                Diagnostic::new(
                    Code::UnusedImport,
                    import_span,
                    "nothing from this import is used",
                )
                .label("no component has use=\"...\" naming one of its components")
                .hint(format!(
                    "it defines {}",
                    names
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
        }
    }
    // The document is no longer needed: a large spec's tree is gone before its program is
    // copied with the marks.
    drop(library);
    drop(root);
    compiled.program.text.shrink_to_fit();
    compiled.program.map.shrink_to_fit();
    compiled.program = lower::mark_bodies(&compiled.program);
    Some(compiled)
}

/// Checks a component library on its own: each component's code must read as Scheme, and
/// its formal parameters must lie within the component's own (formal) lists.
fn check_library(root: &xml::Element, diags: &mut Vec<Diagnostic>) {
    for comp in root
        .elements()
        .filter(|e| e.name == "ep-component" || e.name == "ir-component")
    {
        let count = |attr: &str| {
            comp.attr_text(attr)
                .map_or(0, |t| t.split_whitespace().count())
        };
        let fields: Vec<usize> = comp
            .attr_text("inputs")
            .map(|t| {
                t.split_whitespace()
                    .map(|entry| entry.split('.').count() - 1)
                    .collect()
            })
            .unwrap_or_default();
        let is_ep = comp.name == "ep-component";
        let lists = (
            count("infos"),
            count("controls"),
            if is_ep { fields.len() } else { count("views") },
        );
        let name = comp.attr_text("name").unwrap_or("?").trim().to_string();
        let parts: Vec<&xml::Element> = if is_ep {
            comp.elements()
                .filter(|e| {
                    matches!(
                        e.name.as_str(),
                        "input" | "before" | "after" | "preprocess-inputs"
                    )
                })
                .collect()
        } else {
            std::iter::once(comp)
                .chain(comp.elements().filter(|e| e.name == "end-with"))
                .collect()
        };
        for part in parts {
            let mut code = voml_ir::Program::default();
            for node in &part.children {
                match node {
                    xml::Node::Text(t) => code.push_program(t),
                    xml::Node::Element(e)
                        if schema::element(&e.name).is_some_and(|s| s.primitive()) =>
                    {
                        for attr in &e.attrs {
                            let checked =
                                library_params(&attr.value, lists, &fields, is_ep, &name, diags);
                            if scheme::split_exprs(&checked.text).is_none()
                                || scheme::read_error(&checked.text).is_some()
                            {
                                scheme::check_syntax(
                                    &checked,
                                    &format!("attribute `{}`", attr.name),
                                    attr.value_span,
                                    diags,
                                );
                            }
                        }
                        code.push(" #f ", e.tag_span, false);
                    }
                    xml::Node::Element(_) => {}
                }
            }
            let checked = library_params(&code, lists, &fields, is_ep, &name, diags);
            scheme::check_syntax(&checked, &format!("`{name}`"), part.tag_span, diags);
        }
    }
}

/// Replaces formal parameters by a placeholder, reporting those out of range of the
/// library component's lists (infos, controls, inputs or views).
fn library_params(
    code: &voml_ir::Program,
    (infos, controls, carets): (usize, usize, usize),
    fields: &[usize],
    is_ep: bool,
    name: &str,
    diags: &mut Vec<Diagnostic>,
) -> voml_ir::Program {
    let lists = scheme::ParamLists {
        infos,
        controls,
        carets,
        carets_are_views: !is_ep,
        fields,
    };
    scheme::substitute(code, |param, span| {
        let beyond = scheme::param_out_of_range(param, &lists);
        if let Some((text, list, len)) = beyond {
            diags.push(
                Diagnostic::new(
                    Code::ParameterOutOfRange,
                    span,
                    format!(
                        "`{text}` is out of range: library component `{name}` has {len} {}",
                        if len == 1 {
                            list.trim_end_matches('s')
                        } else {
                            list
                        }
                    ),
                )
                .label("out of range"),
            );
        }
        Some("voml-formal".to_string())
    })
}

/// Reads every `<import>`ed library and collects its components by name.
fn imports(
    db: &mut SourceDb,
    root: &xml::Element,
    opts: &LoadOptions,
    diags: &mut Vec<Diagnostic>,
) -> HashMap<String, lower::LibraryComponent> {
    let mut library: HashMap<String, lower::LibraryComponent> = HashMap::new();
    let Some(head) = root.elements().find(|e| e.name == "head") else {
        return library;
    };
    for import in head.elements().filter(|e| e.name == "import") {
        let Some(href) = import.attr("href") else {
            continue;
        };
        let pin_attr = import.attr("sha256");
        let pin = pin_attr.map(|a| a.value.text.trim());
        if let (Some(attr), Some(pin)) = (pin_attr, pin) {
            if !source::is_sha256_hex(pin) {
                diags.push(
                    Diagnostic::new(
                        Code::UnpinnedRemote,
                        attr.value_span,
                        format!("`{pin}` is not a sha256 digest"),
                    )
                    .label("a pin is 64 hexadecimal digits"),
                );
                continue;
            }
        }
        // The href is the place to show: the whole `<import>` tag around it adds nothing.
        let Some(file) = xml::load_reference(
            db,
            opts,
            diags,
            href.value_span.file,
            href.value.text.trim(),
            pin,
            href.value_span,
            href.value_span,
        ) else {
            continue;
        };
        let doc = xml::parse_document(db, file, opts, diags);
        let Some(mut lib_root) = doc.root else {
            continue;
        };
        if doc.malformed || !structure::check(&mut lib_root, &["voml-library"], diags) {
            continue;
        }
        for comp in lib_root
            .elements()
            .filter(|e| e.name == "ep-component" || e.name == "ir-component")
        {
            let Some(name) = comp.attr_text("name").map(|n| n.trim().to_string()) else {
                continue;
            };
            if let Some(first) = library.get(&name) {
                diags.push(
                    Diagnostic::new(
                        Code::DuplicateName,
                        comp.name_span,
                        format!("library component `{name}` is defined twice"),
                    )
                    .label("second definition")
                    .secondary(first.element.name_span, "first definition"),
                );
                continue;
            }
            library.insert(
                name,
                lower::LibraryComponent {
                    element: comp.clone(),
                    import_span: import.tag_span,
                    used: std::cell::Cell::new(false),
                },
            );
        }
    }
    library
}

/// Errors first, then by file and position, so output is stable.
pub fn sort_diagnostics(diags: &mut [Diagnostic]) {
    diags.sort_by_key(|d| {
        let s = d.primary_span();
        (std::cmp::Reverse(d.severity), s.file, s.start, d.code)
    });
}

/// Hex sha256 of bytes (for pins).
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = sha2::Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}
