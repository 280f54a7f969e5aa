//! Source files and how the compiler reaches them: the file database every span points into,
//! and the entity manager's file access (search path, remote pins, component cache).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use codespan_reporting::files::{self, Files};
use voml_ir::{SourceFile, Span};

/// Every file read during one compilation; a [`Span`]'s `file` indexes it.
#[derive(Debug, Default)]
pub struct SourceDb {
    files: Vec<DbFile>,
}

#[derive(Debug)]
struct DbFile {
    name: String,
    path: PathBuf,
    /// Shared with the compiled visual object's copy of its sources.
    text: Arc<str>,
    line_starts: Vec<usize>,
}

impl SourceDb {
    pub fn new() -> SourceDb {
        SourceDb::default()
    }

    /// Adds a file; `name` is what messages show, `path` where it was read from.
    pub fn add(&mut self, name: String, path: PathBuf, text: String) -> u32 {
        let line_starts = files::line_starts(&text).collect();
        self.files.push(DbFile {
            name,
            path,
            text: text.into(),
            line_starts,
        });
        (self.files.len() - 1) as u32
    }

    pub fn text(&self, file: u32) -> &str {
        &self.files[file as usize].text
    }

    pub fn name(&self, file: u32) -> &str {
        &self.files[file as usize].name
    }

    pub fn path(&self, file: u32) -> &Path {
        &self.files[file as usize].path
    }

    pub fn find_path(&self, path: &Path) -> Option<u32> {
        self.files
            .iter()
            .position(|f| f.path == path)
            .map(|i| i as u32)
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The text a span covers.
    pub fn slice(&self, span: Span) -> &str {
        let text = self.text(span.file);
        text.get(span.start as usize..span.end as usize)
            .unwrap_or("")
    }

    /// 1-based (line, column) of a byte offset, columns counted in characters.
    pub fn line_col(&self, file: u32, offset: u32) -> (usize, usize) {
        voml_ir::line_col(self.text(file), offset as usize)
    }

    /// File name, start and end (line, column) of a span.
    pub fn locate_range(&self, span: Span) -> (&str, (usize, usize), (usize, usize)) {
        (
            self.name(span.file),
            self.line_col(span.file, span.start),
            self.line_col(span.file, span.end),
        )
    }

    /// `file:line:col` of a span's start.
    pub fn locate(&self, span: Span) -> String {
        let (line, col) = self.line_col(span.file, span.start);
        format!("{}:{line}:{col}", self.name(span.file))
    }

    /// The sources as they travel in a compiled visual object.
    pub fn to_ir(&self) -> Vec<SourceFile> {
        self.files
            .iter()
            .map(|f| SourceFile {
                path: f.name.clone(),
                text: Arc::clone(&f.text),
            })
            .collect()
    }
}

impl<'a> Files<'a> for SourceDb {
    type FileId = u32;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: u32) -> Result<&'a str, files::Error> {
        self.files
            .get(id as usize)
            .map(|f| f.name.as_str())
            .ok_or(files::Error::FileMissing)
    }

    fn source(&'a self, id: u32) -> Result<&'a str, files::Error> {
        self.files
            .get(id as usize)
            .map(|f| &*f.text)
            .ok_or(files::Error::FileMissing)
    }

    fn line_index(&'a self, id: u32, byte_index: usize) -> Result<usize, files::Error> {
        let file = self
            .files
            .get(id as usize)
            .ok_or(files::Error::FileMissing)?;
        Ok(file
            .line_starts
            .binary_search(&byte_index)
            .unwrap_or_else(|next| next - 1))
    }

    fn line_range(
        &'a self,
        id: u32,
        line_index: usize,
    ) -> Result<std::ops::Range<usize>, files::Error> {
        let file = self
            .files
            .get(id as usize)
            .ok_or(files::Error::FileMissing)?;
        let start = *file
            .line_starts
            .get(line_index)
            .ok_or(files::Error::LineTooLarge {
                given: line_index,
                max: file.line_starts.len() - 1,
            })?;
        let end = file
            .line_starts
            .get(line_index + 1)
            .copied()
            .unwrap_or(file.text.len());
        Ok(start..end)
    }
}

/// How the compiler reads files. The CLI uses the file system; tests and the fuzzer use a map
/// in memory, so that the compiler core does no I/O of its own.
pub trait FileSystem {
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>>;
    /// Whether `path` is a regular file that can be read.
    fn exists(&self, path: &Path) -> bool;
    /// Whether something other than a regular file is there (a directory, device, FIFO).
    fn is_special(&self, _path: &Path) -> bool {
        false
    }
    /// The path with links, `.` and `..` resolved. In memory: `.` and `..` only.
    fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        Ok(normalize(path))
    }
}

/// `.` and `..` resolved without looking at the disk (`..` beyond the start is kept).
pub fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out: Vec<Component> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir) => {}
                _ => out.push(c),
            },
            other => out.push(other),
        }
    }
    out.iter().collect()
}

/// The real file system.
pub struct RealFs;

impl FileSystem for RealFs {
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        std::fs::read(path)
    }

    fn exists(&self, path: &Path) -> bool {
        path.is_file()
    }

    fn is_special(&self, path: &Path) -> bool {
        path.exists() && !path.is_file()
    }

    fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }
}

/// Files in memory, keyed by path.
#[derive(Default)]
pub struct MemoryFs {
    pub files: HashMap<PathBuf, Vec<u8>>,
}

impl MemoryFs {
    pub fn new() -> MemoryFs {
        MemoryFs::default()
    }

    pub fn with(mut self, path: impl Into<PathBuf>, text: impl Into<Vec<u8>>) -> MemoryFs {
        self.files.insert(path.into(), text.into());
        self
    }
}

impl FileSystem for MemoryFs {
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"))
    }

    fn exists(&self, path: &Path) -> bool {
        self.files.contains_key(path)
    }
}

/// Where a reference (entity system identifier or import href) points.
#[derive(Debug, PartialEq)]
pub enum Reference {
    Local(String),
    /// A file of the standard component library (`voml:NAME`).
    Standard(String),
    /// An `http(s)` URL with its pin, if any.
    Remote {
        url: String,
        sha256: Option<String>,
    },
}

/// Splits `https://host/x.voml#sha256=abc` into URL and pin; anything without a scheme is local.
pub fn parse_reference(text: &str) -> Reference {
    let lower = text.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        let (url, sha256) = match text.split_once("#sha256=") {
            Some((url, hash)) => (url.to_string(), Some(hash.to_ascii_lowercase())),
            None => (text.to_string(), None),
        };
        Reference::Remote { url, sha256 }
    } else if let Some(name) = text.strip_prefix(crate::stdlib::SCHEME) {
        Reference::Standard(name.to_string())
    } else {
        Reference::Local(text.strip_prefix("file://").unwrap_or(text).to_string())
    }
}

pub fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The host of an `http(s)` URL as written: what stands between `//` (after any `user@`)
/// and the port or path, IPv6 brackets removed, lower-cased.
pub fn url_host(url: &str) -> Option<String> {
    let (_, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split_once(']')?.0,
        None => host_port.split(':').next().unwrap_or(""),
    };
    Some(host.to_ascii_lowercase())
}

/// Whether `host` is this machine: `localhost` or a loopback address (127.0.0.0/8, `::1`).
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Why a remote URL may not be used, if it may not: plain `http` is taken only from this
/// machine (a component server for tests or a local mirror), never over the network.
/// The pin guards the content either way; this keeps what is fetched from being seen.
pub fn remote_refusal(url: &str) -> Option<String> {
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("https://") {
        return None;
    }
    match url_host(url) {
        Some(host) if lower.starts_with("http://") && is_loopback_host(&host) => None,
        _ => Some(format!("remote component `{url}` is named over plain http")),
    }
}

/// A remote reference the compiler met: an `http(s)` URL with a valid pin, allowed, and
/// looked up in the component cache. `voml fetch` downloads those that are not there.
#[derive(Clone, Debug, PartialEq)]
pub struct RemoteRef {
    pub url: String,
    /// The pin, 64 lower-case hexadecimal digits.
    pub sha256: String,
    /// The URL (with its pin) where it is written.
    pub span: Span,
    pub cache: CacheState,
}

/// What the component cache holds for a [`RemoteRef`].
#[derive(Clone, Debug, PartialEq)]
pub enum CacheState {
    /// The file is there and matches its pin.
    Cached,
    /// No file (or no cache at all).
    Missing,
    /// A file whose content does not match its pin; this is its digest.
    Mismatch(String),
}

/// Why a local reference was not taken.
#[derive(Debug, PartialEq)]
pub enum NotTaken {
    /// Nothing readable there: the places tried.
    Missing(Vec<PathBuf>),
    /// Found, but outside the roots (`path` resolves to `canonical`).
    Outside { path: PathBuf, canonical: PathBuf },
    /// Something is there, but not a regular file.
    Special(PathBuf),
}

/// The directories a spec may read from: its own directory and the search path, resolved.
pub fn roots(fs: &dyn FileSystem, spec: &Path, search_path: &[PathBuf]) -> Vec<PathBuf> {
    let dir = match spec.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::iter::once(dir)
        .chain(search_path.iter().cloned())
        .filter_map(|d| fs.canonicalize(&d).ok())
        .collect()
}

/// Finds a local reference as [`resolve_local`] does, and takes it only if it is a regular
/// file inside one of `roots` once links and `..` are resolved.
pub fn resolve_confined(
    fs: &dyn FileSystem,
    referrer: &Path,
    name: &str,
    search_path: &[PathBuf],
    roots: &[PathBuf],
) -> Result<PathBuf, NotTaken> {
    let path = match resolve_local(fs, referrer, name, search_path) {
        Ok(path) => path,
        Err(tried) => {
            return Err(match tried.iter().find(|p| fs.is_special(p)) {
                Some(special) => NotTaken::Special(special.clone()),
                None => NotTaken::Missing(tried),
            })
        }
    };
    let canonical = fs.canonicalize(&path).unwrap_or_else(|_| normalize(&path));
    if roots.iter().any(|root| canonical.starts_with(root)) {
        Ok(path)
    } else {
        Err(NotTaken::Outside { path, canonical })
    }
}

impl NotTaken {
    /// The diagnostic for a reference `name` (at `span`); `missing` is the message when
    /// nothing was found.
    pub fn diagnostic(&self, name: &str, span: Span, missing: String) -> crate::Diagnostic {
        use crate::{Code, Diagnostic};
        match self {
            NotTaken::Missing(tried) => {
                let tried: Vec<String> =
                    tried.iter().map(|p| format!("`{}`", p.display())).collect();
                Diagnostic::new(Code::FileNotFound, span, missing)
                    .label("no such file")
                    .hint(format!("looked for {}", tried.join(", ")))
                    .hint("add a directory to the search path with `-I DIR` or `VOML_PATH`")
            }
            NotTaken::Outside { .. } => Diagnostic::new(
                Code::ReferenceRefused,
                span,
                format!("`{name}` is outside the spec's directory and the search path"),
            )
            .label("not read")
            .hint("a spec may read files in its own directory tree and in `-I DIR` / `VOML_PATH` directories (links and `..` resolved): copy the file there, or add its directory with `-I`"),
            NotTaken::Special(path) => Diagnostic::new(
                Code::ReferenceRefused,
                span,
                format!("`{}` is not a regular file", path.display()),
            )
            .label("not read")
            .hint("entities, imports and figures name regular files, not directories, devices or pipes"),
        }
    }
}

/// Finds a local reference: relative to the referring file's directory, then on the search
/// path. Absolute paths are taken as they are.
pub fn resolve_local(
    fs: &dyn FileSystem,
    referrer: &Path,
    name: &str,
    search_path: &[PathBuf],
) -> Result<PathBuf, Vec<PathBuf>> {
    let wanted = Path::new(name);
    let mut tried = Vec::new();
    if wanted.is_absolute() {
        if fs.exists(wanted) {
            return Ok(wanted.to_path_buf());
        }
        tried.push(wanted.to_path_buf());
        return Err(tried);
    }
    let base = referrer.parent().unwrap_or(Path::new(""));
    let candidates =
        std::iter::once(base.join(wanted)).chain(search_path.iter().map(|d| d.join(wanted)));
    for candidate in candidates {
        if fs.exists(&candidate) {
            return Ok(candidate);
        }
        tried.push(candidate);
    }
    Err(tried)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_split_scheme_and_pin() {
        assert_eq!(
            parse_reference("lib/x.voml"),
            Reference::Local("lib/x.voml".into())
        );
        assert_eq!(
            parse_reference("https://vendor.com/x.voml#sha256=ABCD"),
            Reference::Remote {
                url: "https://vendor.com/x.voml".into(),
                sha256: Some("abcd".into())
            }
        );
        assert_eq!(
            parse_reference("http://vendor.com/x.voml"),
            Reference::Remote {
                url: "http://vendor.com/x.voml".into(),
                sha256: None
            }
        );
    }

    #[test]
    fn plain_http_is_taken_only_from_this_machine() {
        for allowed in [
            "https://vendor.example/x.voml",
            "http://127.0.0.1:8080/x.voml",
            "http://127.5.6.7/x.voml",
            "http://localhost/x.voml",
            "HTTP://LocalHost:1/x.voml",
            "http://[::1]:9/x.voml",
        ] {
            assert_eq!(remote_refusal(allowed), None, "{allowed}");
        }
        for refused in [
            "http://vendor.example/x.voml",
            "http://127.0.0.1.vendor.example/x.voml",
            "http://localhost.vendor.example/x.voml",
            "http://127.0.0.1@vendor.example/x.voml",
            "http://127.0.0.1:80@vendor.example/x.voml",
            "http://10.0.0.1/x.voml",
            "http://[::2]/x.voml",
            "http:///x.voml",
        ] {
            assert!(remote_refusal(refused).is_some(), "{refused}");
        }
    }

    #[test]
    fn local_references_try_the_referrer_then_the_search_path() {
        let fs = MemoryFs::new()
            .with("spec/lib/a.voml", "a")
            .with("include/b.voml", "b");
        let search = vec![PathBuf::from("include")];
        let spec = Path::new("spec/main.voml");
        assert_eq!(
            resolve_local(&fs, spec, "lib/a.voml", &search),
            Ok(PathBuf::from("spec/lib/a.voml"))
        );
        assert_eq!(
            resolve_local(&fs, spec, "b.voml", &search),
            Ok(PathBuf::from("include/b.voml"))
        );
        let tried = resolve_local(&fs, spec, "c.voml", &search).unwrap_err();
        assert_eq!(
            tried,
            vec![
                PathBuf::from("spec/c.voml"),
                PathBuf::from("include/c.voml")
            ]
        );
    }
}
