//! What a run tells its user as it goes: faults of the visual object, bad trace lines,
//! progress, and a summary at the end. [`Terminal`] writes them to standard error (a progress
//! line only on a terminal, never on a pipe).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use voml_ir::CompiledVo;
use voml_runtime::{Fault, FaultKind, Runtime};
use voml_trace::TraceError;

use crate::source::Share;
use crate::Outcome;

/// Where the run stands, for a progress line.
#[derive(Clone, Debug)]
pub struct Progress {
    /// Records processed.
    pub records: u64,
    /// Wall time since the run started.
    pub elapsed: Duration,
    /// Bytes of the input read, and its size when it is a file.
    pub read: u64,
    /// The size of the input, when it is a file.
    pub total: Option<u64>,
    /// The trace time reached.
    pub trace_time: f64,
}

impl Progress {
    pub(crate) fn of(records: u64, started: Instant, share: &Share, trace_time: f64) -> Progress {
        let (read, total) = share.get();
        Progress {
            records,
            elapsed: started.elapsed(),
            read,
            total,
            trace_time,
        }
    }
}

/// Someone who is told how the run goes.
pub trait Reporter {
    /// The visual object failed (already acted on: the component is disabled, or the run
    /// stops).
    fn fault(&mut self, fault: &Fault);
    /// A trace line is not a record; it was skipped (or, with `strict`, stops the run).
    fn bad_line(&mut self, error: &TraceError, strict: bool);
    /// A few times a second on long runs.
    fn progress(&mut self, progress: &Progress);
    /// A line for the user (what a sink wrote, a warning, an error).
    fn line(&mut self, text: &str);
}

/// At most this many faults and bad lines are shown in full; the rest are counted.
const SHOWN: usize = 20;
/// Kinds of drawing warnings shown in a run's summary.
const SHOWN_NOTES: usize = 10;

/// Reports to standard error.
pub struct Terminal {
    vo: CompiledVo,
    color: bool,
    faults_shown: usize,
    lines_shown: usize,
    progress: bool,
    last_progress: Option<Instant>,
    progress_on_screen: bool,
    /// With several visual objects on one input: the name its lines start with.
    label: String,
    /// Whether the input's bad lines are this reporter's to tell (one of several is enough).
    bad_lines: bool,
}

impl Terminal {
    /// Reports about `vo` (faults are shown with its sources), in colour when `color`.
    pub fn new(vo: &CompiledVo, color: bool) -> Terminal {
        Terminal {
            vo: vo.clone(),
            color,
            faults_shown: 0,
            lines_shown: 0,
            progress: std::io::stderr().is_terminal(),
            last_progress: None,
            progress_on_screen: false,
            label: String::new(),
            bad_lines: true,
        }
    }

    /// One of several visual objects on one input: its lines start with `label: `, it shows
    /// no progress line (several would overwrite each other), and only the first tells the
    /// input's bad lines, which all of them see.
    pub fn one_of_several(mut self, label: &str, first: bool) -> Terminal {
        self.label = format!("{label}: ");
        self.progress = false;
        self.bad_lines = first;
        self
    }

    fn clear_progress(&mut self) {
        if self.progress_on_screen {
            eprint!("\r\x1b[K");
            self.progress_on_screen = false;
        }
    }

    /// The summary of a run: records, time, rate, what was skipped, faults not shown, what
    /// was disabled, and what the sinks wrote.
    pub fn summary(&mut self, outcome: &Outcome, runtime: &Runtime, source: &str) {
        self.clear_progress();
        let stats = runtime.stats();
        let elapsed = outcome.elapsed.as_secs_f64();
        eprintln!(
            "{}{} records from {} in {:.2} s ({:.0} records/s){}{}{}",
            self.label,
            stats.records,
            source,
            elapsed,
            stats.records as f64 / elapsed.max(1e-9),
            if outcome.bad_lines > 0 {
                format!(", {} bad lines skipped", outcome.bad_lines)
            } else {
                String::new()
            },
            match outcome.read_errors {
                0 => String::new(),
                1 => ", 1 input ended by a read error".to_string(),
                n => format!(", {n} inputs ended by a read error"),
            },
            if stats.skipped > 0 {
                format!(", {} events with bad fields skipped", stats.skipped)
            } else {
                String::new()
            },
        );
        let total = runtime.fault_total();
        if (self.faults_shown as u64) < total {
            eprintln!(
                "({} more faults not shown)",
                total - self.faults_shown as u64
            );
            for (kind, component, part, more) in runtime.unkept_faults().iter().take(10) {
                let place = voml_runtime::fault::place(component.as_deref(), part.as_deref());
                let place = if place.is_empty() {
                    "the trace".into()
                } else {
                    place
                };
                eprintln!("  {more} more {} in {place}", kind.summary_word());
            }
        }
        let (notes, more) = runtime.drawing_notes();
        for note in notes.iter().take(SHOWN_NOTES) {
            eprintln!("{}warning: {note}", self.label);
        }
        let more = more + notes.len().saturating_sub(SHOWN_NOTES) as u64;
        if more > 0 {
            eprintln!(
                "{}({more} more kinds of drawing warnings not shown)",
                self.label
            );
        }
        let disabled = runtime.disabled_components();
        if !disabled.is_empty() {
            eprintln!(
                "{}disabled after errors: {}",
                self.label,
                disabled.join(", ")
            );
        }
        for note in &outcome.notes {
            eprintln!("{}{note}", self.label);
        }
    }
}

impl Reporter for Terminal {
    fn fault(&mut self, fault: &Fault) {
        if self.faults_shown < SHOWN {
            self.clear_progress();
            eprint!("{}", fault.render(&self.vo, self.color));
            self.faults_shown += 1;
        }
    }

    fn bad_line(&mut self, error: &TraceError, strict: bool) {
        if !self.bad_lines {
            return;
        }
        if self.lines_shown < SHOWN {
            self.clear_progress();
            // (A read error has no line to show.)
            if error.text.is_empty() {
                eprintln!("warning: {error}");
            } else {
                eprintln!("warning: {error}\n  | {}", error.text);
            }
            self.lines_shown += 1;
        }
        if strict {
            eprintln!("error: stopping at the first bad trace line (--strict)");
        }
    }

    fn progress(&mut self, progress: &Progress) {
        if !self.progress || progress.elapsed < Duration::from_millis(500) {
            return;
        }
        let now = Instant::now();
        if self
            .last_progress
            .is_some_and(|t| now.duration_since(t) < Duration::from_millis(500))
        {
            return;
        }
        self.last_progress = Some(now);
        eprint!("\r\x1b[K{}", progress_line(progress));
        self.progress_on_screen = true;
    }

    fn line(&mut self, text: &str) {
        self.clear_progress();
        eprintln!("{}{text}", self.label);
    }
}

/// The progress line: records, rate, trace time, and for a file of known size the share
/// read and an estimate of the time left.
pub fn progress_line(p: &Progress) -> String {
    let elapsed_s = p.elapsed.as_secs_f64();
    let rate = p.records as f64 / elapsed_s.max(1e-9);
    let mut line = format!("{} records ({rate:.0}/s)", p.records);
    if p.records > 0 {
        line.push_str(&format!(", trace time {}", trace_time(p.trace_time)));
    }
    if let Some(total) = p.total.filter(|&t| t > 0) {
        let share = (p.read as f64 / total as f64).min(1.0);
        line.push_str(&format!(
            ", {:.0}% of {:.1} MB",
            share * 100.0,
            total as f64 / 1e6
        ));
        if share > 0.0 && share < 1.0 {
            let left = elapsed_s * (1.0 - share) / share;
            line.push_str(&format!(", about {left:.0} s left"));
        }
    }
    line.push('…');
    line
}

/// A trace time for people: seconds with as many digits as a short span needs.
pub fn trace_time(t: f64) -> String {
    if t.abs() >= 100.0 || t == 0.0 {
        format!("{t:.1} s")
    } else {
        format!("{t:.4} s")
    }
}

/// Whether a fault makes the run fail (bad fields in records are counted, not failures).
pub fn is_failure(fault: &Fault) -> bool {
    fault.kind != FaultKind::Field
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_says_the_share_read_and_the_time_left() {
        let p = Progress {
            records: 40_000,
            elapsed: Duration::from_secs(2),
            read: 25_000_000,
            total: Some(100_000_000),
            trace_time: 12.5,
        };
        assert_eq!(
            progress_line(&p),
            "40000 records (20000/s), trace time 12.5000 s, 25% of 100.0 MB, about 6 s left…"
        );
        let p = Progress {
            records: 8192,
            elapsed: Duration::from_secs(1),
            read: 0,
            total: None,
            trace_time: 1234.0,
        };
        assert_eq!(
            progress_line(&p),
            "8192 records (8192/s), trace time 1234.0 s…"
        );
    }
}
