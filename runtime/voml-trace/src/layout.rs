//! The PICL layout every format adapter writes its records in: the record- and event-type
//! codes it gives each kind of construct, the three numbers and the names that follow, and
//! the helpers that fill a record in place (reusing its storage) with names made safe to
//! write back as a PICL line.
//!
//! Every adapted record reads, by absolute position:
//!
//! ```text
//! 0 rtype  1 etype  2 time (s)  3 processor  4 process  5 ndata  6 descriptor
//! 7 number  8 number  9 number  10.. names
//! ```
//!
//! The three numbers are those MPICL writes for a message (bytes, tag, partner), so that
//! components glued to MPICL's sends and receives take the adapters' messages unchanged; the
//! other kinds carry 0, -1, -1 there (or their value and key; see `docs/formats.md`).

use crate::names::Names;
use crate::record::{Record, Value};

/// Record type of the beginning of a state, a send, a receive or a processor's life.
pub const ENTRY: i64 = -3;
/// Record type of their end.
pub const EXIT: i64 = -4;
/// Record type of a value or an instant event.
pub const MARK: i64 = -2;

/// Event type of a state whose name says the processor waits (see [`is_waiting`]): MPICL's
/// blocking receive, which the library's utilisation displays take as "blocked".
pub const WAITING: i64 = -52;
/// Event type of a send (MPICL's `MPI_Send`): bytes, tag and destination at 7, 8, 9.
pub const SEND: i64 = -27;
/// Event type of a receive (MPICL's receive): bytes, tag and source at 7, 8, 9.
pub const RECEIVE: i64 = -51;
/// Event type of a processor's life (MPICL's tracing event): a Pajé container created
/// (entry) and destroyed (exit).
pub const LIFE: i64 = -901;
/// Event type of a value (a Pajé variable, a Chrome counter): the value at 7, its key at 8.
pub const VALUE: i64 = 700;
/// Event type of an instant event (a Pajé event, a Chrome instant): its key at 8.
pub const EVENT: i64 = 701;

/// Most names given codes of their own; later names share [`MAX_CODES`] itself, so that a
/// trace with endless distinct names still reads in bounded memory.
pub const MAX_CODES: usize = 1 << 16;

/// Whether a state's name says the processor is waiting rather than working: it contains
/// (in any case) `wait`, `block`, `sync`, `barrier`, `idle`, `sleep`, `recv` or `receiv`.
/// Such states get the event type [`WAITING`].
pub fn is_waiting(name: &str) -> bool {
    const WORDS: [&str; 8] = [
        "wait", "block", "sync", "barrier", "idle", "sleep", "recv", "receiv",
    ];
    // Names are short: lowering a copy costs less than a case-insensitive search per word.
    let lower = name.to_ascii_lowercase();
    WORDS.iter().any(|w| lower.contains(w))
}

/// The states seen: each name kept once (referred to by number) with its event type,
/// [`WAITING`] for a waiting state ([`is_waiting`]), else a code given in the order names
/// first appear, from `first`. One look-up per state, whatever is asked of it.
#[derive(Debug)]
pub(crate) struct States {
    names: Names,
    codes: Vec<i64>,
    first: i64,
    next: i64,
}

impl States {
    pub(crate) fn starting_at(first: i64) -> States {
        States {
            names: Names::default(),
            codes: Vec::new(),
            first,
            next: first,
        }
    }

    /// The number of the state named `name`, and its event type.
    pub(crate) fn state(&mut self, name: &str) -> (u32, i64) {
        let id = self.names.id(name);
        if let Some(&code) = self.codes.get(id as usize) {
            return (id, code);
        }
        let code = if is_waiting(name) {
            WAITING
        } else if self.next - self.first < MAX_CODES as i64 {
            self.next += 1;
            self.next - 1
        } else {
            self.first + MAX_CODES as i64
        };
        // Names beyond the bound are not kept (their number is `u32::MAX`).
        if id != u32::MAX {
            self.codes.push(code);
        }
        (id, code)
    }

    /// The name of state number `id`.
    pub(crate) fn name(&self, id: u32) -> &str {
        self.names.get(id)
    }
}

/// Fills a record's fields in place, reusing the strings already there.
pub(crate) struct Fill<'a> {
    fields: &'a mut Vec<Value>,
    at: usize,
}

impl<'a> Fill<'a> {
    /// Starts `record` over as `rtype etype time processor process`, the numbers and names
    /// to follow; [`Fill::done`] writes `ndata` and the descriptor.
    pub(crate) fn start(
        record: &'a mut Record,
        line: u64,
        rtype: i64,
        etype: i64,
        time: f64,
        processor: i64,
        process: i64,
    ) -> Fill<'a> {
        record.line = line;
        record.rtype = rtype;
        record.etype = etype;
        let mut fill = Fill {
            fields: &mut record.fields,
            at: 0,
        };
        fill.put_real(time);
        fill.put_int(processor);
        fill.put_int(process);
        // ndata and the descriptor, written by `done` once the data are known.
        fill.put_int(0);
        fill.put_str("");
        fill
    }

    fn slot(&mut self) -> Option<&mut Value> {
        let at = self.at;
        self.at += 1;
        self.fields.get_mut(at)
    }

    fn put_int(&mut self, v: i64) {
        match self.slot() {
            Some(slot) => stash(std::mem::replace(slot, Value::Int(v))),
            None => self.fields.push(Value::Int(v)),
        }
    }

    fn put_real(&mut self, v: f64) {
        match self.slot() {
            Some(slot) => stash(std::mem::replace(slot, Value::Real(v))),
            None => self.fields.push(Value::Real(v)),
        }
    }

    fn put_str(&mut self, s: &str) {
        match self.slot() {
            Some(Value::Str(old)) => {
                old.clear();
                push_safe(old, s);
            }
            Some(slot) => stash(std::mem::replace(slot, Value::Str(pooled(s)))),
            None => self.fields.push(Value::Str(pooled(s))),
        }
    }

    pub(crate) fn int(mut self, v: i64) -> Self {
        self.put_int(v);
        self
    }

    pub(crate) fn real(mut self, v: f64) -> Self {
        self.put_real(v);
        self
    }

    pub(crate) fn str(mut self, s: &str) -> Self {
        self.put_str(s);
        self
    }

    /// Ends the record: drops what the storage held beyond it and writes `ndata` (the data
    /// after the descriptor) and the descriptor (a scanf format of the data, as PICL's
    /// statistics records carry).
    pub(crate) fn done(self) {
        for v in self.fields.drain(self.at..) {
            stash(v);
        }
        let ndata = self.fields.len().saturating_sub(5);
        self.fields[3] = Value::Int(ndata as i64);
        // Written in the string the slot holds (`start` put one there).
        let (head, data) = self.fields.split_at_mut(5);
        if let Value::Str(descriptor) = &mut head[4] {
            for v in data.iter() {
                // A character at a time: a call to copy two bytes costs more than they do.
                for c in scanf_code(v).chars() {
                    descriptor.push(c);
                }
            }
        }
    }
}

/// How a descriptor spells a field of this kind.
fn scanf_code(v: &Value) -> &'static str {
    match v {
        Value::Int(_) => "%d",
        Value::Real(_) => "%lf",
        Value::Str(_) => "%s",
    }
}

thread_local! {
    /// Strings of fields that became numbers or were dropped, kept to hold the next string
    /// fields: records of different shapes take turns in the same storage, and reading
    /// should not allocate and free a string per record as they do.
    static SPARE_STRINGS: std::cell::RefCell<Vec<String>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Keeps `s`'s storage for a later string (a few are kept).
pub(crate) fn keep_string(mut s: String) {
    SPARE_STRINGS.with_borrow_mut(|p| {
        if p.len() < 64 {
            s.clear();
            p.push(s)
        }
    });
}

/// An empty string, in a kept string's storage if there is one.
pub(crate) fn spare_string() -> String {
    SPARE_STRINGS
        .with_borrow_mut(|p| p.pop())
        .unwrap_or_default()
}

/// Keeps `v`'s storage for a later string field, if it is a string.
fn stash(v: Value) {
    if let Value::Str(s) = v {
        keep_string(s);
    }
}

/// `s` as a PICL string can hold it (see `push_safe`), in a kept string's storage if there is
/// one.
fn pooled(s: &str) -> String {
    let mut out = spare_string();
    push_safe(&mut out, s);
    out
}

/// Appends `s` as a PICL string can hold it: `"` becomes `'` and control characters (line
/// breaks, tabs) spaces, so that every adapted record can be written as a PICL line and read
/// back.
fn push_safe(out: &mut String, s: &str) {
    // Names are mostly short and ASCII: a byte at a time, in the same pass as the check.
    if s.len() <= 32 && s.is_ascii() {
        out.reserve(s.len());
        for &b in s.as_bytes() {
            out.push(match b {
                b'"' => '\'',
                0..0x20 | 0x7f => ' ',
                b => char::from(b),
            });
        }
        return;
    }
    if !s.bytes().any(|b| b == b'"' || b < 0x20 || b == 0x7f) {
        out.push_str(s);
        return;
    }
    out.extend(s.chars().map(|c| match c {
        '"' => '\'',
        c if c.is_control() => ' ',
        c => c,
    }));
}

/// A record to fill: one handed back by the caller, or a new one.
pub(crate) fn blank(spare: &mut Vec<Record>) -> Record {
    spare.pop().unwrap_or_else(|| Record {
        line: 0,
        rtype: 0,
        etype: 0,
        fields: Vec::with_capacity(12),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_names() {
        for name in [
            "MPI_Wait",
            "action_recv",
            "Blocking Send",
            "Synchronization",
            "Idle",
        ] {
            assert!(is_waiting(name), "{name}");
        }
        for name in [
            "Running",
            "MPI_Send",
            "action_bcast",
            "Executing",
            "compute",
        ] {
            assert!(!is_waiting(name), "{name}");
        }
    }

    #[test]
    fn states_number_names_and_give_codes() {
        let mut states = States::starting_at(1);
        assert_eq!(states.state("compute"), (0, 1));
        assert_eq!(states.state("MPI_Wait"), (1, WAITING));
        assert_eq!(states.state("pack"), (2, 2));
        assert_eq!(states.state("compute"), (0, 1));
        assert_eq!(states.name(1), "MPI_Wait");
    }

    #[test]
    fn fill_writes_the_layout_and_reuses_storage() {
        let mut r = blank(&mut Vec::new());
        Fill::start(&mut r, 3, ENTRY, SEND, 0.5, 2, 0)
            .int(100)
            .int(7)
            .int(1)
            .str("a \"b\"\nc")
            .done();
        assert_eq!(r.line, 3);
        assert_eq!(
            r.to_string(),
            "-3 -27 0.5 2 0 4 \"%d%d%d%s\" 100 7 1 \"a 'b' c\""
        );
        Fill::start(&mut r, 4, MARK, VALUE, 1.0, 0, 0)
            .real(2.5)
            .done();
        assert_eq!(r.to_string(), "-2 700 1.0 0 0 1 \"%lf\" 2.5");
        let back = crate::parse_line(&r.to_string(), 4).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn storage_of_any_shape_is_filled_as_a_fresh_record_is() {
        type Shape = fn(&mut Record);
        let shapes: [Shape; 4] = [
            |r| {
                Fill::start(r, 1, -3, 7, 0.5, 2, 0)
                    .real(1.5)
                    .int(3)
                    .str("a b")
                    .done()
            },
            |r| {
                Fill::start(r, 2, -3, 8, 1.0, 1, 0)
                    .int(0)
                    .int(-1)
                    .str("Running")
                    .str("STATE")
                    .str("x")
                    .done()
            },
            |r| Fill::start(r, 3, -4, 9, 2.0, 0, 0).done(),
            |r| {
                let mut fill = Fill::start(r, 4, -3, 10, 3.0, 0, 0);
                // Many data, of both kinds.
                for i in 0..30 {
                    fill = if i % 2 == 0 {
                        fill.str("q\"")
                    } else {
                        fill.real(0.25)
                    };
                }
                fill.done()
            },
        ];
        for first in shapes {
            for second in shapes {
                let mut fresh = blank(&mut Vec::new());
                second(&mut fresh);
                let mut reused = blank(&mut Vec::new());
                first(&mut reused);
                second(&mut reused);
                assert_eq!(reused, fresh);
                assert_eq!(reused.to_string(), fresh.to_string());
            }
        }
        let mut many = blank(&mut Vec::new());
        shapes[3](&mut many);
        assert_eq!(many.fields[4], Value::Str("%s%lf".repeat(15)));
        assert_eq!(many.fields[5], Value::Str("q'".into()));
    }
}
