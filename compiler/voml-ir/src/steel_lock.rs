//! One lock for every reading of Scheme text in the process.
//!
//! The Scheme reader (steel-parser 0.8.3) interns number literals in a process-wide table of
//! two maps, filled one after the other without a lock between them: a thread that reads a
//! number another thread is adding can find its key before its value, and panic. The
//! compiler's reader check and the runtime's engines (building one, compiling a program)
//! read Scheme text under this lock, so that visual objects compiled or loaded on several
//! threads at once (`voml run A.voml B.voml`, the tests) never meet in the table.

use std::sync::{Mutex, MutexGuard};

/// Held while Scheme text is read. A panic while it was held (the reader is third-party
/// code) leaves nothing half-done that the lock protects, so a poisoned lock is taken anyway.
pub fn steel_parse_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
