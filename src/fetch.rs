//! `voml fetch`: downloads the pinned remote components specs name into the component
//! cache, so that `voml check` and `voml run` find them offline.
//!
//! The compiler walks the references (entities, imports, and the files they bring) and says
//! which remote ones the cache lacks; this downloads those, checks each against its pin, and
//! walks again, since a fetched library may name remote files of its own.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use voml_compiler::source::{CacheState, RemoteRef};
use voml_compiler::{diag, Code, Diagnostic, Options, RealFs};

use crate::cache;
use crate::download::Downloader;

/// Problems that keep the compiler from seeing every reference of a spec, or that refuse
/// one: `voml fetch` reports them, since it cannot fetch what it cannot see.
const WALK_CODES: &[Code] = &[
    Code::XmlSyntax,
    Code::BadDoctype,
    Code::FileNotFound,
    Code::IncludeCycle,
    Code::EntityExpansion,
    Code::UnpinnedRemote,
    Code::ReferenceRefused,
];

/// What became of one component (a URL with its pin) in this run.
enum Attempt {
    Fetched,
    Failed(Failure),
}

/// Why a component could not be fetched, to be reported where each spec names it.
struct Failure {
    message: String,
    label: String,
    hints: Vec<String>,
}

impl Failure {
    fn at(&self, span: voml_ir::Span) -> Diagnostic {
        let d = Diagnostic::new(Code::RemoteUnavailable, span, self.message.clone())
            .label(self.label.clone());
        self.hints.iter().fold(d, |d, h| d.hint(h.clone()))
    }
}

struct Fetcher<'a> {
    options: &'a Options,
    cache: PathBuf,
    color: bool,
    downloader: Downloader,
    attempts: HashMap<(String, String), Attempt>,
    /// Components already listed as found in the cache.
    listed: HashSet<(String, String)>,
    fetched: usize,
    cached: usize,
    problems: usize,
}

/// Fetches what `specs` need; exit 1 when anything failed (every failure is reported).
pub fn fetch(specs: &[PathBuf], options: &Options, color: bool) -> ExitCode {
    let Some(cache) = options.cache_dir.clone() else {
        eprintln!("error: there is no component cache: give `--cache DIR` or set `VOML_CACHE` (HOME is not set either)");
        return ExitCode::from(1);
    };
    let mut fetcher = Fetcher {
        options,
        cache,
        color,
        downloader: Downloader::default(),
        attempts: HashMap::new(),
        listed: HashSet::new(),
        fetched: 0,
        cached: 0,
        problems: 0,
    };
    for spec in specs {
        fetcher.spec(spec);
    }
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    println!(
        "{}, {} already cached, {} (cache: {})",
        plural(fetcher.fetched, "component") + " fetched",
        fetcher.cached,
        plural(fetcher.problems, "problem"),
        fetcher.cache.display()
    );
    if fetcher.problems > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

impl Fetcher<'_> {
    fn spec(&mut self, spec: &Path) {
        let problem = match std::fs::metadata(spec) {
            Ok(m) if m.is_file() => None,
            Ok(_) => Some("it is not a regular file".to_string()),
            Err(e) => Some(e.to_string()),
        };
        if let Some(why) = problem {
            eprintln!("error: cannot read `{}`: {why}", spec.display());
            self.problems += 1;
            return;
        }
        // Each pass sees the references of the files fetched by the one before; a pass
        // that fetches nothing new is the last.
        let (out, remotes) = loop {
            let (out, remotes) = voml_compiler::remote_references(spec, &RealFs, self.options);
            let mut progress = false;
            for r in &remotes {
                let key = (r.url.clone(), r.sha256.clone());
                if r.cache == CacheState::Cached || self.attempts.contains_key(&key) {
                    continue;
                }
                let attempt = self.download(r);
                progress |= matches!(attempt, Attempt::Fetched);
                self.attempts.insert(key, attempt);
            }
            if !progress {
                break (out, remotes);
            }
        };
        let mut diags: Vec<Diagnostic> = out
            .diagnostics
            .iter()
            .filter(|d| d.is_error() && WALK_CODES.contains(&d.code))
            .cloned()
            .collect();
        let mut seen = HashSet::new();
        for r in &remotes {
            let key = (r.url.clone(), r.sha256.clone());
            if !seen.insert(key.clone()) {
                continue;
            }
            match (&r.cache, self.attempts.get(&key)) {
                (CacheState::Cached, Some(Attempt::Fetched)) => {}
                (CacheState::Cached, _) => {
                    if self.listed.insert(key) {
                        println!("cached   {}", r.url);
                        self.cached += 1;
                    }
                }
                (_, Some(Attempt::Failed(failure))) => diags.push(failure.at(r.span)),
                (_, _) => diags.push(
                    Diagnostic::new(
                        Code::RemoteUnavailable,
                        r.span,
                        format!(
                            "`{}` was fetched but cannot be read back from the cache",
                            r.url
                        ),
                    )
                    .label("not available")
                    .hint(format!("is `{}` readable?", self.cache.display())),
                ),
            }
        }
        if !diags.is_empty() {
            voml_compiler::sort_diagnostics(&mut diags);
            eprint!("{}", diag::render(&out.db, &diags, self.color));
            self.problems += diags.len();
        }
    }

    /// Downloads one component, checks it against its pin and stores it.
    fn download(&mut self, r: &RemoteRef) -> Attempt {
        let failed = |message: String, label: &str, hints: Vec<String>| {
            Attempt::Failed(Failure {
                message,
                label: label.to_string(),
                hints,
            })
        };
        let nothing = "nothing was written to the cache".to_string();
        let bytes = match self.downloader.get(&r.url) {
            Ok(bytes) => bytes,
            Err(why) => {
                return failed(
                    format!("cannot fetch `{}`: {why}", r.url),
                    "not downloaded",
                    vec![nothing],
                )
            }
        };
        let actual = voml_compiler::sha256_hex(&bytes);
        if actual != r.sha256 {
            return failed(
                format!(
                    "`{}` does not match its pin: expected sha256 {}, got {actual}",
                    r.url, r.sha256
                ),
                "pinned here",
                vec![
                    format!("the server sent {} bytes; {nothing}", bytes.len()),
                    "if the component changed on purpose, review the new version and pin its digest"
                        .into(),
                ],
            );
        }
        match cache::store(&self.cache, &r.sha256, &bytes) {
            Ok(_) => {
                println!("fetched  {} ({} bytes)", r.url, bytes.len());
                self.fetched += 1;
                Attempt::Fetched
            }
            Err(e) => failed(
                format!(
                    "cannot write `{}` into the cache `{}`: {e}",
                    r.url,
                    self.cache.display()
                ),
                "downloaded, not stored",
                vec!["choose another cache with `--cache DIR` or `VOML_CACHE`".into()],
            ),
        }
    }
}
