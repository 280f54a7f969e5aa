//! The component cache: where pinned remote components are kept, each in a file named by its
//! sha256. `voml fetch` writes it; the compiler (`voml check`, `compile`, `run`) only reads it.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The cache directory, the one definition of it: `--cache DIR`, else `VOML_CACHE`, else
/// `$XDG_CACHE_HOME/voml/components`, else `$HOME/.cache/voml/components`. `None` when
/// none of these is set.
pub fn dir(option: Option<&Path>) -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = option {
        return Some(dir.to_path_buf());
    }
    if let Some(dir) = var("VOML_CACHE") {
        return Some(PathBuf::from(dir));
    }
    // XDG: a relative value is to be ignored.
    let base = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("voml").join("components"))
}

/// Writes `bytes` as the file named `sha256` in `dir` (made if need be), atomically: a
/// reader sees the whole file or none. The caller has checked the digest.
pub fn store(dir: &Path, sha256: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(sha256);
    let part = dir.join(format!(".{sha256}.{}.part", std::process::id()));
    let written = std::fs::File::create(&part)
        .and_then(|mut file| {
            file.write_all(bytes)?;
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&part, &path));
    if written.is_err() {
        let _ = std::fs::remove_file(&part);
    }
    written.map(|()| path)
}
