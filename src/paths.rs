//! Care with the user's files: an output path that is one of the command's inputs is refused
//! before anything is opened for writing (`voml compile X.voml -o X.voml` would replace the
//! spec with JSON; `--audio` naming the trace would empty it before it is read).

use std::path::{Path, PathBuf};

/// A file as the operating system knows it: canonical path, and device and inode where the
/// file exists (so that hard links and different spellings of one file compare equal).
#[derive(Debug, PartialEq)]
struct Identity {
    path: PathBuf,
    inode: Option<(u64, u64)>,
}

fn identity(path: &Path) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    if let Ok(canonical) = path.canonicalize() {
        let inode = std::fs::metadata(&canonical)
            .ok()
            .map(|m| (m.dev(), m.ino()));
        return Some(Identity {
            path: canonical,
            inode,
        });
    }
    // Not there yet: its directory canonicalised, and its name.
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.canonicalize().ok()?,
        _ => std::env::current_dir().ok()?,
    };
    Some(Identity {
        path: parent.join(name),
        inode: None,
    })
}

/// The files a command reads.
#[derive(Default)]
pub struct Inputs {
    files: Vec<(PathBuf, Identity)>,
}

impl Inputs {
    pub fn add(&mut self, path: &Path) {
        if path.as_os_str() == "-" {
            return;
        }
        if let Some(id) = identity(path) {
            self.files.push((path.to_path_buf(), id));
        }
    }

    /// Every file the compiler read for this spec (the spec, entities, imported libraries).
    pub fn add_sources(&mut self, db: &voml_compiler::SourceDb) {
        for file in 0..db.len() as u32 {
            self.add(db.path(file));
        }
    }

    /// Refuses `output` (what `option` names) when it is one of the inputs.
    pub fn check_output(&self, output: &Path, option: &str) -> Result<(), String> {
        let Some(out) = identity(output) else {
            return Ok(());
        };
        for (named, input) in &self.files {
            let same = input.path == out.path
                || matches!((input.inode, out.inode), (Some(a), Some(b)) if a == b);
            if same {
                return Err(format!(
                    "{option} `{}` is `{}`, which this command reads; nothing was written (choose another output)",
                    output.display(),
                    named.display()
                ));
            }
        }
        Ok(())
    }
}
