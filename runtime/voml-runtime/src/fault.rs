//! Faults during a run: what failed, where in the `.voml` source, in which component, on
//! which event, and what the runtime did about it.

use std::fmt;

use codespan_reporting::diagnostic::{Diagnostic, Label};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term;
use voml_ir::{CompiledVo, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// Scheme code raised an error.
    Scheme,
    /// Code ran past the per-event time budget and was interrupted.
    Runaway,
    /// Code held more heap than the memory ceiling and was interrupted.
    Memory,
    /// A record did not have a field a component takes, or it had the wrong type.
    Field,
    /// A trace line could not be read.
    Trace,
}

/// Which record a fault happened on.
#[derive(Clone, Debug, PartialEq)]
pub struct EventRef {
    /// 1-based count of records read.
    pub record: u64,
    /// The trace file (or `-` for standard input) and its 1-based line.
    pub source: String,
    pub line: u64,
}

impl fmt::Display for EventRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "record {} ({}:{})", self.record, self.source, self.line)
    }
}

/// What the runtime did after the fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The component is disabled for the rest of the run.
    Disabled,
    /// The record (or the component's part for it) was skipped.
    Skipped,
    /// The run stopped (`--strict`).
    Stopped,
}

#[derive(Clone, Debug)]
pub struct Fault {
    pub kind: FaultKind,
    /// The component (e.g. "IR component `bu-ir`"), if one was running.
    pub component: Option<String>,
    /// The part (e.g. "phase 1", "input ^0"), if known.
    pub part: Option<String>,
    /// Where in the sources, if known.
    pub span: Option<Span>,
    /// `file:line:col` of `span`.
    pub location: Option<String>,
    pub event: Option<EventRef>,
    pub message: String,
    pub action: Action,
}

impl FaultKind {
    /// What a fault of this kind is called in a summary line.
    pub fn word(self) -> &'static str {
        match self {
            FaultKind::Scheme => "error",
            FaultKind::Runaway => "runaway code",
            FaultKind::Memory => "memory ceiling",
            FaultKind::Field => "bad event",
            FaultKind::Trace => "bad trace line",
        }
    }

    /// The plural, for counts (`12 more bad events`).
    pub fn summary_word(self) -> &'static str {
        match self {
            FaultKind::Scheme => "errors",
            FaultKind::Runaway => "runaways",
            FaultKind::Memory => "memory ceilings",
            FaultKind::Field => "bad events",
            FaultKind::Trace => "bad trace lines",
        }
    }
}

impl Fault {
    /// A one-line summary: `file:line:col: error in COMPONENT (PART) on EVENT: MESSAGE`.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        if let Some(loc) = &self.location {
            out.push_str(loc);
            out.push_str(": ");
        }
        out.push_str(self.kind.word());
        if let Some(c) = &self.component {
            out.push_str(" in ");
            out.push_str(c);
            if let Some(p) = &self.part {
                out.push_str(&format!(" ({p})"));
            }
        }
        if let Some(e) = &self.event {
            out.push_str(&format!(" on {e}"));
        }
        out.push_str(": ");
        out.push_str(&self.message);
        out
    }

    fn action_text(&self) -> &'static str {
        match self.action {
            Action::Disabled => {
                "the component is disabled for the rest of the run (--strict stops instead)"
            }
            Action::Skipped => "skipped; the run goes on",
            Action::Stopped => "the run stops here (--strict)",
        }
    }

    /// A full report with the source snippet, as the compiler shows diagnostics.
    pub fn render(&self, vo: &CompiledVo, color: bool) -> String {
        let Some(span) = self.span.filter(|s| (s.file as usize) < vo.sources.len()) else {
            return format!("{}\n  = {}\n", self.summary(), self.action_text());
        };
        let mut files = SimpleFiles::new();
        for s in &vo.sources {
            files.add(s.path.as_str(), &*s.text);
        }
        let mut title = String::from(match self.kind {
            FaultKind::Scheme => "Scheme error",
            FaultKind::Runaway => "runaway code interrupted",
            FaultKind::Memory => "memory ceiling reached",
            FaultKind::Field => "bad event",
            FaultKind::Trace => "bad trace line",
        });
        if let Some(c) = &self.component {
            title.push_str(&format!(" in {c}"));
            if let Some(p) = &self.part {
                title.push_str(&format!(" ({p})"));
            }
        }
        // The label shows the first line of the message; the notes show the rest.
        let mut notes: Vec<String> = self
            .message
            .lines()
            .skip(1)
            .map(String::from)
            .filter(|l| !l.trim().is_empty())
            .collect();
        if let Some(e) = &self.event {
            notes.push(format!("while processing {e}"));
        }
        notes.push(self.action_text().to_string());
        let d = Diagnostic::error()
            .with_message(title)
            .with_labels(vec![Label::primary(
                span.file as usize,
                span.start as usize..span.end as usize,
            )
            .with_message(first_line(&self.message))])
            .with_notes(notes);
        let config = term::Config::default();
        if color {
            let mut buffer = term::termcolor::Buffer::ansi();
            if term::emit_to_write_style(&mut buffer, &config, &files, &d).is_ok() {
                return String::from_utf8_lossy(buffer.as_slice()).into_owned();
            }
        }
        term::emit_into_string(&config, &files, &d)
            .unwrap_or_else(|_| format!("{}\n", self.summary()))
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    line.chars().take(100).collect()
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.summary())
    }
}

/// Something the drawing layer adjusted or gave up while the run went on as drawn (a value
/// clamped, an exact view that keeps too much and paints over): not a fault, but said once
/// per message and component, with where it first happened and how often.
#[derive(Clone, Debug, PartialEq)]
pub struct DrawingNote {
    /// What it is about, without the value that caused it (notes are grouped by it).
    pub kind: String,
    /// The first one's message.
    pub message: String,
    /// The component (e.g. "IR component `gantt`"), if one was drawing.
    pub component: Option<String>,
    /// The part (e.g. "phase 1").
    pub part: Option<String>,
    /// `file:line:col` of the part's code.
    pub location: Option<String>,
    /// The record it first happened on.
    pub event: Option<EventRef>,
    /// How many times.
    pub count: u64,
}

impl fmt::Display for DrawingNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        let place = place(self.component.as_deref(), self.part.as_deref());
        if !place.is_empty() {
            write!(f, " ({place}")?;
            if let Some(at) = &self.location {
                write!(f, ", {at}")?;
            }
            write!(f, ")")?;
        }
        if let Some(event) = &self.event {
            write!(f, ", first at {event}")?;
        }
        if self.count > 1 {
            write!(f, ", {} times", self.count)?;
        }
        Ok(())
    }
}

/// A component and its part as a summary names them (`IR component `gantt` phase 1`); empty
/// when neither is known.
pub fn place(component: Option<&str>, part: Option<&str>) -> String {
    [component, part]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ")
}
