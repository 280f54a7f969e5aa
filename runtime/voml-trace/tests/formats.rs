//! Conformance of the format adapters on small hand-made traces (`tests/data/formats/`):
//! every record checked against records written out by hand, every bad record against its
//! line, column and kind, and reading going on after each.

use std::io::{Cursor, Read};
use std::path::PathBuf;

use voml_trace::{
    parse_line, AdapterStats, ChromeReader, Format, FormatReader, PajeReader, ParaverReader,
    ReadOptions, Record, TraceError, TraceErrorKind,
};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/formats")
        .join(name)
}

/// Records written as PICL lines, read back with the PICL parser.
fn expected(lines: &str) -> Vec<Record> {
    lines
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| parse_line(l, 0).unwrap_or_else(|e| panic!("{l}: {e:?}")))
        .collect()
}

/// The records and errors of a reader, in order.
fn split(items: Vec<Result<Record, TraceError>>) -> (Vec<Record>, Vec<TraceError>) {
    let (mut records, mut errors) = (Vec::new(), Vec::new());
    for item in items {
        match item {
            Ok(r) => records.push(r),
            Err(e) => errors.push(e),
        }
    }
    (records, errors)
}

/// Compares records without their line numbers, showing both sides on a difference.
fn assert_same(actual: &[Record], wanted: &[Record]) {
    let show = |rs: &[Record]| rs.iter().map(|r| format!("{r}\n")).collect::<String>();
    let strip = |rs: &[Record]| -> Vec<Record> {
        rs.iter()
            .map(|r| Record {
                line: 0,
                ..r.clone()
            })
            .collect()
    };
    assert!(
        strip(actual) == strip(wanted),
        "records differ:\n-- actual\n{}-- expected\n{}",
        show(actual),
        show(wanted)
    );
}

/// (line, column, kind) of each error.
fn places(errors: &[TraceError]) -> Vec<(u64, usize, TraceErrorKind)> {
    errors.iter().map(|e| (e.line, e.column, e.kind)).collect()
}

const TWO_RANKS: &str = r#"
    -3 -901 0.0 0 0 6 "%d%d%d%s%s%s" 0 -1 -1 "rank 0" "Process" "0"
    -3 -901 0.0 1 0 6 "%d%d%d%s%s%s" 0 -1 -1 "rank 1" "Process" "0"
    -3 1 0.0 0 0 5 "%d%d%d%s%s" 0 -1 -1 "compute" "MPI state"
    -3 1 0.0 1 0 5 "%d%d%d%s%s" 0 -1 -1 "compute" "MPI state"
    -2 700 0.0 0 0 4 "%lf%d%d%s" 100.0 0 -1 "memory"
    -3 -27 0.5 0 0 6 "%d%d%d%s%s%s" 400 0 1 "message" "m" "k1"
    -4 -27 0.5 0 0 6 "%d%d%d%s%s%s" 400 0 1 "message" "m" "k1"
    -4 1 0.6 1 0 5 "%d%d%d%s%s" 0 -1 -1 "compute" "MPI state"
    -3 -52 0.6 1 0 5 "%d%d%d%s%s" 0 -1 -1 "MPI_Recv" "MPI state"
    -3 -52 0.7 1 0 5 "%d%d%d%s%s" 0 -1 -1 "MPI Wait" "MPI state"
    -3 -51 0.9 1 0 6 "%d%d%d%s%s%s" 400 0 0 "message" "m" "k1"
    -4 -51 0.9 1 0 6 "%d%d%d%s%s%s" 400 0 0 "message" "m" "k1"
    -4 -52 1.0 1 0 5 "%d%d%d%s%s" 0 -1 -1 "MPI Wait" "MPI state"
    -2 700 1.0 0 0 4 "%lf%d%d%s" 120.5 0 -1 "memory"
    -4 -52 1.2 1 0 5 "%d%d%d%s%s" 0 -1 -1 "MPI_Recv" "MPI state"
    -3 1 1.2 1 0 5 "%d%d%d%s%s" 0 -1 -1 "compute" "MPI state"
    -3 -27 1.3 1 0 6 "%d%d%d%s%s%s" 64 1 0 "message" "m" "k2"
    -4 -27 1.3 1 0 6 "%d%d%d%s%s%s" 64 1 0 "message" "m" "k2"
    -3 -51 1.3 0 0 6 "%d%d%d%s%s%s" 64 1 1 "message" "m" "k2"
    -4 -51 1.3 0 0 6 "%d%d%d%s%s%s" 64 1 1 "message" "m" "k2"
    -2 701 1.5 1 0 5 "%d%d%d%s%s" 0 0 -1 "marker" "checkpoint"
    -4 1 2.0 0 0 5 "%d%d%d%s%s" 0 -1 -1 "compute" "MPI state"
    -4 -901 2.0 0 0 6 "%d%d%d%s%s%s" 0 -1 -1 "rank 0" "Process" "0"
    -4 1 2.0 1 0 5 "%d%d%d%s%s" 0 -1 -1 "compute" "MPI state"
"#;

/// Containers, states (set, pushed, popped, ended with their container or the trace), links
/// (in order and with their end first), variables and events, as written out by hand.
#[test]
fn paje_two_ranks() {
    let mut reader = PajeReader::open(data("two-ranks.paje"), ReadOptions::default()).unwrap();
    let (records, errors) = split(reader.by_ref().collect());
    assert!(errors.is_empty(), "{errors:?}");
    assert_same(&records, &expected(TWO_RANKS));
    // Records carry the line of what made them: the send its start, the receive its end.
    let lines: Vec<u64> = records.iter().map(|r| r.line).take(7).collect();
    assert_eq!(lines, vec![107, 108, 109, 110, 111, 112, 112]);
    assert_eq!(records[10].line, 115);
    assert_eq!(
        reader.stats(),
        AdapterStats {
            records: 24,
            bad: 0,
            // Seven definitions of types and values.
            ignored: 7,
            unmatched: 0,
            late: 0,
        }
    );
}

/// The field names and orders are the header's: the same trace with the older Pajé names,
/// other ids, fields in other orders and tabs gives the same records.
#[test]
fn paje_field_orders_come_from_the_header() {
    let reader =
        PajeReader::open(data("two-ranks-old-names.paje"), ReadOptions::default()).unwrap();
    let (records, errors) = split(reader.collect());
    assert!(errors.is_empty(), "{errors:?}");
    assert_same(&records, &expected(TWO_RANKS));
}

/// Every bad record is reported at its line and column, and the records after it are read.
#[test]
fn paje_bad_records() {
    let reader = PajeReader::open(data("bad.paje"), ReadOptions::default()).unwrap();
    let (records, errors) = split(reader.collect());
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    let name = data("bad.paje").display().to_string();
    assert_eq!(
        places(&errors),
        vec![
            // The definition of event 5 lacks its Key: reported at its end, records skipped.
            (35, 2, TraceErrorKind::Syntax),
            (56, 3, TraceErrorKind::Syntax),
            (57, 1, TraceErrorKind::Undefined),
            (58, 7, TraceErrorKind::Undefined),
            (59, 11, TraceErrorKind::Syntax),
            (61, 10, TraceErrorKind::Unmatched),
            (62, 12, TraceErrorKind::Syntax),
            // The link that never ends, at the end of the input (its start container).
            (64, 11, TraceErrorKind::Unmatched),
        ],
        "{messages:#?}"
    );
    assert_eq!(
        messages[1],
        format!("{name}:56:3: expected a time in seconds, found `soon`")
    );
    assert_eq!(
        messages[2],
        format!("{name}:57:1: no `%EventDef` in the header defines event `9`")
    );
    assert!(messages[3].ends_with("no container `p9` has been created"));
    assert!(messages[4].contains(
        "too few fields: PajeSetState (event 3, defined on line 18) has 4, this record 3"
    ));
    assert!(messages[6].contains("unterminated quoted string"));
    assert!(messages[0].contains("lacks the field(s) Key"));
    assert!(messages[7].contains("this link never ends"));
    assert_eq!(errors[7].text, "7 0.8 0 L p0 m lost");
    let wanted = expected(
        r#"
        -3 -901 0.0 0 0 6 "%d%d%d%s%s%s" 0 -1 -1 "rank 0" "Process" "0"
        -3 1 0.1 0 0 5 "%d%d%d%s%s" 0 -1 -1 "run" "State"
        -4 1 0.5 0 0 5 "%d%d%d%s%s" 0 -1 -1 "run" "State"
        -3 2 0.9 0 0 5 "%d%d%d%s%s" 0 -1 -1 "after all" "State"
        -4 2 0.9 0 0 5 "%d%d%d%s%s" 0 -1 -1 "after all" "State"
        "#,
    );
    assert_same(&records, &wanted);
}

/// Strict reading stops at the first bad record.
#[test]
fn paje_strict_stops_at_the_first_error() {
    let reader = PajeReader::open(data("bad.paje"), ReadOptions { strict: true }).unwrap();
    let items: Vec<_> = reader.collect();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].as_ref().unwrap_err().line, 35);
}

const SMALL_CHROME: &str = r#"
    -3 1 0.0 0 1 5 "%d%d%d%s%s" 0 -1 -1 "main" "app"
    -3 -52 0.00005 1 1 5 "%d%d%d%s%s" 0 -1 -1 "WaitForMessage" "app"
    -3 2 0.0001 0 1 5 "%d%d%d%s%s" 0 -1 -1 "work" "app"
    -2 700 0.00012 0 1 5 "%lf%d%d%s%s" 10.0 0 -1 "memory" "used"
    -2 700 0.00012 0 1 5 "%lf%d%d%s%s" 12.5 1 -1 "memory" "peak"
    -3 -27 0.00015 0 1 5 "%d%d%d%s%s" 0 0 1 "post" "ipc"
    -4 -27 0.00015 0 1 5 "%d%d%d%s%s" 0 0 1 "post" "ipc"
    -3 -51 0.00025 1 1 5 "%d%d%d%s%s" 0 0 0 "post" "ipc"
    -4 -51 0.00025 1 1 5 "%d%d%d%s%s" 0 0 0 "post" "ipc"
    -4 -52 0.00026 1 1 5 "%d%d%d%s%s" 0 -1 -1 "WaitForMessage" "app"
    -3 3 0.00027 1 1 5 "%d%d%d%s%s" 0 -1 -1 "load" "net"
    -4 2 0.0003 0 1 5 "%d%d%d%s%s" 0 -1 -1 "work" "app"
    -2 701 0.00031 0 1 5 "%d%d%d%s%s" 0 0 -1 "tick" ""
    -4 3 0.00033 1 1 5 "%d%d%d%s%s" 0 -1 -1 "load" "net"
    -4 1 0.0004 0 1 5 "%d%d%d%s%s" 0 -1 -1 "main" "app"
"#;

/// Slices (B/E, X), a flow, a counter, an async interval and an instant, written out of time
/// order, come out in time order as written out by hand.
#[test]
fn chrome_array_form() {
    let mut reader = ChromeReader::open(data("small.json"), ReadOptions::default()).unwrap();
    let (records, errors) = split(reader.by_ref().collect());
    assert!(errors.is_empty(), "{errors:?}");
    assert_same(&records, &expected(SMALL_CHROME));
    // Each record has the line its event begins on.
    assert_eq!(records[0].line, 2);
    assert_eq!(records[1].line, 5);
    let stats = reader.stats();
    // The counter's series that is not a number, and the metadata event.
    assert_eq!((stats.records, stats.ignored, stats.late), (15, 2, 0));
}

/// The object form, with other keys before and after `traceEvents` (strings holding
/// brackets and escaped quotes, nested arrays), gives the same records.
#[test]
fn chrome_object_form() {
    let reader = ChromeReader::open(data("small-object.json"), ReadOptions::default()).unwrap();
    let (records, errors) = split(reader.collect());
    assert!(errors.is_empty(), "{errors:?}");
    assert_same(&records, &expected(SMALL_CHROME));
    assert_eq!(records[0].line, 5);
}

/// Bad events are reported at their line and column (a JSON error at its own place in the
/// event), the events after them are read, and an event the input cuts short is the last
/// error.
#[test]
fn chrome_bad_events() {
    let reader = ChromeReader::open(data("bad.json"), ReadOptions::default()).unwrap();
    let (records, errors) = split(reader.collect());
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        places(&errors),
        vec![
            // serde_json places a bad value at its last character.
            (3, 37, TraceErrorKind::Syntax),
            (4, 1, TraceErrorKind::Syntax),
            (5, 1, TraceErrorKind::Unmatched),
            (6, 1, TraceErrorKind::Syntax),
            (7, 47, TraceErrorKind::Syntax),
            (9, 2, TraceErrorKind::Syntax),
            (10, 1, TraceErrorKind::Syntax),
        ],
        "{messages:#?}"
    );
    assert!(messages[0].contains("bad event: invalid type: string \"late\", expected f64"));
    assert!(messages[1].ends_with("an event without its phase (`ph`)"));
    assert!(messages[2].ends_with("an `E` event with no slice open (`B`) on its thread"));
    assert!(messages[3].contains("without its duration"));
    assert!(messages[6].ends_with("the input ends inside this event"));
    assert_eq!(errors[1].text, r#"{"pid":1,"tid":1,"ts":3}"#);
    let wanted = expected(
        r#"
        -3 1 0.000001 0 1 5 "%d%d%d%s%s" 0 -1 -1 "a" ""
        -4 1 0.000007 0 1 5 "%d%d%d%s%s" 0 -1 -1 "a" ""
        "#,
    );
    assert_same(&records, &wanted);
}

/// The closing `]` may be missing (a trace whose writer stopped between events).
#[test]
fn chrome_array_without_its_end() {
    let text = "[{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":2,\"name\":\"a\"},\n";
    let reader = ChromeReader::new(text.as_bytes(), "t.json".into(), ReadOptions::default());
    let (records, errors) = split(reader.collect());
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(records.len(), 1);
    // An object without traceEvents, or another JSON value, is one error.
    for (text, message) in [
        (
            "{\"other\": [1, 2]}",
            "the trace object has no `traceEvents` array",
        ),
        ("\"hello\"", "a Chrome trace begins with `[`"),
    ] {
        let reader = ChromeReader::new(text.as_bytes(), "t.json".into(), ReadOptions::default());
        let (records, errors) = split(reader.collect());
        assert!(records.is_empty());
        assert_eq!(errors.len(), 1, "{text}");
        assert!(errors[0].message.contains(message), "{}", errors[0]);
    }
}

/// Nested X events that end together end innermost first, before what begins at that time;
/// a zero-length one ends right after it begins.
#[test]
fn chrome_x_events_end_in_nesting_order() {
    let text = r#"[
        {"ph":"X","pid":1,"tid":1,"ts":0,"dur":10,"name":"outer"},
        {"ph":"X","pid":1,"tid":1,"ts":2,"dur":8,"name":"inner"},
        {"ph":"X","pid":1,"tid":1,"ts":10,"dur":0,"name":"blink"},
        {"ph":"B","pid":1,"tid":1,"ts":10,"name":"next"}
    ]"#;
    let reader = ChromeReader::new(text.as_bytes(), "t.json".into(), ReadOptions::default());
    let order: Vec<String> = reader
        .map(|r| {
            let r = r.unwrap();
            format!(
                "{} {}",
                r.rtype,
                r.get(10).and_then(|v| v.as_str()).unwrap()
            )
        })
        .collect();
    assert_eq!(
        order,
        vec![
            "-3 outer", "-3 inner", "-4 inner", "-4 outer", "-3 blink", "-4 blink", "-3 next",
            "-4 next"
        ]
    );
}

/// A reader over events made as they are asked for, counting the bytes handed out.
struct Generated {
    events: usize,
    made: usize,
    pending: Vec<u8>,
    given: std::rc::Rc<std::cell::Cell<usize>>,
}

impl Read for Generated {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pending.is_empty() {
            if self.made == 0 {
                self.pending.extend_from_slice(b"[\n");
            }
            if self.made < self.events {
                // Two threads, each in time order, written alternately in blocks.
                let i = self.made;
                let tid = (i / 100) % 2;
                let ts = i * 10;
                self.pending.extend_from_slice(
                    format!(
                        "{{\"name\":\"step\",\"cat\":\"gen\",\"ph\":\"X\",\"pid\":7,\"tid\":{tid},\"ts\":{ts},\"dur\":5,\"args\":{{\"i\":{i}}}}},\n"
                    )
                    .as_bytes(),
                );
                self.made += 1;
            } else if self.made == self.events {
                self.pending.extend_from_slice(b"{}]\n");
                self.made += 1;
            }
        }
        let n = self.pending.len().min(out.len());
        out[..n].copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        self.given.set(self.given.get() + n);
        Ok(n)
    }
}

/// The Chrome reader streams: its first record comes once the reorder buffer is full, long
/// before the input ends, and the whole input is read in that bounded buffer, in time order.
#[test]
fn chrome_streams_in_bounded_memory() {
    let events = 3 * voml_trace::REORDER_BOUND;
    let given = std::rc::Rc::new(std::cell::Cell::new(0));
    let input = Generated {
        events,
        made: 0,
        pending: Vec::new(),
        given: given.clone(),
    };
    let mut reader = ChromeReader::new(
        std::io::BufReader::new(input),
        "generated".into(),
        ReadOptions::default(),
    );
    let first = reader.next().unwrap().unwrap();
    assert_eq!(first.timestamp(), Some(0.0));
    let read_at_first = given.get();
    let mut last = 0.0;
    let mut count = 1;
    for item in reader.by_ref() {
        let Ok(r) = item else {
            continue;
        };
        let t = r.timestamp().unwrap();
        assert!(t >= last, "record {count} at {t} after {last}");
        last = t;
        count += 1;
    }
    // Each event's entry and exit, and the final `{}` (an event without a phase).
    assert_eq!(count, 2 * events);
    let total = given.get();
    assert!(
        read_at_first * 2 < total,
        "{read_at_first} of {total} bytes read before the first record"
    );
    assert_eq!(reader.stats().late, 0);
    assert_eq!(reader.stats().bad, 1);
}

const SMALL_PARAVER: &str = r#"
    -3 1 0.0 0 0 5 "%d%d%d%s%d" 0 -1 -1 "Running" 1
    -3 1 0.0 1 1 5 "%d%d%d%s%d" 0 -1 -1 "Running" 1
    -2 42000050 0.0000001 0 0 5 "%d%d%d%s%s" 1000 -1 -1 "PAPI_TOT_INS [Instr completed]" ""
    -2 50000001 0.0000001 0 0 5 "%d%d%d%s%s" 1 -1 -1 "MPI Point-to-point" "MPI_Send"
    -4 1 0.0000003 1 1 5 "%d%d%d%s%d" 0 -1 -1 "Running" 1
    -3 -52 0.0000003 1 1 5 "%d%d%d%s%d" 0 -1 -1 "Waiting a message" 3
    -3 -27 0.00000045 0 0 4 "%d%d%d%lf" 64 7 2 0.0000004
    -4 -27 0.00000045 0 0 4 "%d%d%d%lf" 64 7 2 0.0000004
    -4 1 0.0000005 0 0 5 "%d%d%d%s%d" 0 -1 -1 "Running" 1
    -3 10 0.0000005 0 0 5 "%d%d%d%s%d" 0 -1 -1 "Immediate Send" 10
    -2 42000050 0.00000065 2 1 5 "%d%d%d%s%s" 2000 -1 -1 "PAPI_TOT_INS [Instr completed]" ""
    -3 -51 0.0000007 2 1 4 "%d%d%d%lf" 64 7 0 0.0000006
    -4 -51 0.0000007 2 1 4 "%d%d%d%lf" 64 7 0 0.0000006
    -4 -52 0.0000008 1 1 5 "%d%d%d%s%d" 0 -1 -1 "Waiting a message" 3
    -4 10 0.0000009 0 0 5 "%d%d%d%s%d" 0 -1 -1 "Immediate Send" 10
"#;

/// States, events with their `.pcf` names, and a communication, in time order; threads
/// numbered as the header declares them (task 2 has two), tasks as processes.
#[test]
fn paraver_small() {
    let mut reader = ParaverReader::open(data("small.prv"), ReadOptions::default()).unwrap();
    let (records, errors) = split(reader.by_ref().collect());
    assert!(errors.is_empty(), "{errors:?}");
    assert_same(&records, &expected(SMALL_PARAVER));
    assert_eq!(records[6].line, 7);
    assert_eq!(reader.stats().late, 0);
}

/// Bad records at their line and column, reading going on; without its `.pcf`, the trace is
/// read without names, and that is said first.
#[test]
fn paraver_bad_records() {
    let reader = ParaverReader::open(data("bad.prv"), ReadOptions::default()).unwrap();
    let (records, errors) = split(reader.collect());
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        places(&errors),
        vec![
            (1, 1, TraceErrorKind::Companion),
            (3, 13, TraceErrorKind::Syntax),
            (4, 14, TraceErrorKind::Syntax),
            (5, 16, TraceErrorKind::Syntax),
            (6, 1, TraceErrorKind::Undefined),
            (7, 27, TraceErrorKind::Syntax),
        ],
        "{messages:#?}"
    );
    assert!(messages[0].contains("bad.pcf"));
    assert!(messages[1].ends_with("expected a non-negative integer, found `x`"));
    assert!(messages[2].ends_with("the state ends (10) before it begins (20)"));
    assert!(messages[4].contains("unknown Paraver record type `4`"));
    assert!(messages[5].contains("a communication record has 15 fields"));
    // Microseconds (`_us`): state 1 from 0 to 10 us, and the last line's from 60 to 70.
    let wanted = expected(
        r#"
        -3 1 0.0 0 0 5 "%d%d%d%s%d" 0 -1 -1 "" 1
        -4 1 0.00001 0 0 5 "%d%d%d%s%d" 0 -1 -1 "" 1
        -3 1 0.00006 0 0 5 "%d%d%d%s%d" 0 -1 -1 "" 1
        -4 1 0.00007 0 0 5 "%d%d%d%s%d" 0 -1 -1 "" 1
        "#,
    );
    assert_same(&records, &wanted);
}

/// A record earlier than one already given (the input out of order beyond the reorder
/// buffer's reach) is given at once, out of order, and counted as late.
#[test]
fn paraver_out_of_order_input_is_counted_late() {
    let text = "#Paraver (x):100_ns:1(1):1:1(1:1)\n1:1:1:1:1:50:60:1\n1:1:1:1:1:10:20:1\n";
    let mut reader = ParaverReader::new(text.as_bytes(), "t.prv".into(), ReadOptions::default());
    let times: Vec<f64> = reader
        .by_ref()
        .map(|r| r.unwrap().timestamp().unwrap() * 1e9)
        .map(f64::round)
        .collect();
    assert_eq!(times, vec![50.0, 10.0, 20.0, 60.0]);
    assert_eq!(reader.stats().late, 2);
}

/// The `.pcf` sections: states, event types (several sharing their values), values.
#[test]
fn pcf_sections() {
    let (pcf, problems) = voml_trace::Pcf::parse(
        "STATES\n0 Idle\n1 Running\n\nEVENT_TYPE\n0 10 A\n0 11 B\nVALUES\n1 one\n\n\
         STATES_COLOR\n0 {1,2,3}\n\nEVENT_TYPE\n0 12 C\n0 nonsense\n",
    );
    assert_eq!(pcf.states.get(&1).map(String::as_str), Some("Running"));
    assert_eq!(pcf.event_types.get(&11).map(String::as_str), Some("B"));
    for ty in [10, 11] {
        assert_eq!(
            pcf.event_values[&ty].get(&1).map(String::as_str),
            Some("one")
        );
    }
    assert!(!pcf.event_values.contains_key(&12));
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].line, 16);
}

/// Each fixture is told by its content, and read the same through `FormatReader`.
#[test]
fn formats_are_told_by_content() {
    for (name, format, records) in [
        ("two-ranks.paje", Format::Paje, 24),
        ("two-ranks-old-names.paje", Format::Paje, 24),
        ("small.json", Format::Chrome, 15),
        ("small-object.json", Format::Chrome, 15),
        ("small.prv", Format::Paraver, 15),
    ] {
        let reader = FormatReader::open(data(name), ReadOptions::default(), None).unwrap();
        assert_eq!(reader.format(), format, "{name}");
        let (got, errors) = split(reader.collect());
        assert!(errors.is_empty(), "{name}: {errors:?}");
        assert_eq!(got.len(), records, "{name}");
    }
    let picl = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/small.trf");
    let reader = FormatReader::open(picl, ReadOptions::default(), None).unwrap();
    assert_eq!(reader.format(), Format::Picl);
    assert_eq!(reader.filter(Result::is_ok).count(), 15);
    // Forced: a Chrome trace read as PICL is only bad lines.
    let forced = FormatReader::open(
        data("small.json"),
        ReadOptions::default(),
        Some(Format::Picl),
    )
    .unwrap();
    assert_eq!(forced.format(), Format::Picl);
    assert!(forced.into_iter().all(|r| r.is_err()));
}

/// A Paraver trace from a stream has no `.pcf`: read without names, and said so.
#[test]
fn paraver_from_a_stream() {
    let text = std::fs::read(data("small.prv")).unwrap();
    let reader = FormatReader::from_input(
        Cursor::new(text),
        "-".into(),
        ReadOptions::default(),
        None,
        None,
    );
    assert_eq!(reader.format(), Format::Paraver);
    let (records, errors) = split(reader.collect());
    assert_eq!(records.len(), 15);
    assert_eq!(places(&errors), vec![(1, 1, TraceErrorKind::Companion)]);
}

/// Every adapted record can be written as a PICL line and read back the same, names with
/// quotes and line breaks included.
#[test]
fn adapted_records_round_trip_as_picl_lines() {
    let quoted = "[{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":1,\"name\":\"say \\\"hi\\\"\\n\"}]";
    let mut all: Vec<Record> =
        ChromeReader::new(quoted.as_bytes(), "q".into(), ReadOptions::default())
            .map(Result::unwrap)
            .collect();
    for name in ["two-ranks.paje", "small.json", "small.prv"] {
        let reader = FormatReader::open(data(name), ReadOptions::default(), None).unwrap();
        all.extend(reader.map(Result::unwrap));
    }
    assert_eq!(all[0].get(10).and_then(|v| v.as_str()), Some("say 'hi' "));
    for r in &all {
        let back = parse_line(&r.to_string(), r.line).unwrap();
        assert_eq!(&back, r);
    }
}

/// A flow whose finish is written before its start (the receiving thread's events flushed
/// first) is still a message, from the start to the earliest finish after it.
#[test]
fn chrome_flow_finished_before_its_start_is_written() {
    let text = r#"[
        {"ph":"f","pid":1,"tid":2,"ts":30,"id":5,"cat":"c","name":"m"},
        {"ph":"f","pid":1,"tid":2,"ts":90,"id":5,"cat":"c","name":"m"},
        {"ph":"s","pid":1,"tid":1,"ts":20,"id":5,"cat":"c","name":"m"},
        {"ph":"s","pid":1,"tid":1,"ts":80,"id":5,"cat":"c","name":"m"},
        {"ph":"s","pid":1,"tid":1,"ts":95,"id":5,"cat":"c","name":"m"}
    ]"#;
    let mut reader = ChromeReader::new(text.as_bytes(), "t.json".into(), ReadOptions::default());
    let messages: Vec<(i64, i64, f64)> = reader
        .by_ref()
        .map(Result::unwrap)
        .filter(|r| r.rtype == -3)
        .map(|r| {
            (
                r.etype,
                r.processor().unwrap(),
                r.timestamp().unwrap() * 1e6,
            )
        })
        .map(|(e, p, t)| (e, p, t.round()))
        .collect();
    // Processors: thread 2 came first (0), thread 1 second (1).
    assert_eq!(
        messages,
        vec![
            (-27, 1, 20.0),
            (-51, 0, 30.0),
            (-27, 1, 80.0),
            (-51, 0, 90.0)
        ]
    );
    // The last start never finishes.
    assert_eq!(reader.stats().unmatched, 1);
}

/// At one time a message's send comes before its receive, even when the receiving thread's
/// finish was written first.
#[test]
fn chrome_send_before_receive_at_one_time() {
    let text = r#"[
        {"ph":"f","pid":1,"tid":2,"ts":40,"id":1,"cat":"c","name":"m"},
        {"ph":"s","pid":1,"tid":1,"ts":40,"id":1,"cat":"c","name":"m"}
    ]"#;
    let reader = ChromeReader::new(text.as_bytes(), "t.json".into(), ReadOptions::default());
    let order: Vec<(i64, i64)> = reader
        .map(|r| r.unwrap())
        .map(|r| (r.rtype, r.etype))
        .collect();
    assert_eq!(order, vec![(-3, -27), (-4, -27), (-3, -51), (-4, -51)]);
}

/// A state value is named by the entity values defined when its record comes: a value used
/// before it is defined keeps its own word, and is named by its definition from then on
/// (whatever the reader remembered of it). Names longer than fifteen bytes are found as the
/// short ones are.
#[test]
fn paje_values_defined_late_name_the_states_after_them() {
    let trace = "\
%EventDef PajeDefineContainerType 0
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineStateType 1
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineEntityValue 2
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeCreateContainer 3
% Time date
% Alias string
% Type string
% Container string
% Name string
%EndEventDef
%EventDef PajePushState 4
% Time date
% Container string
% Type string
% Value string
%EndEventDef
%EventDef PajePopState 5
% Time date
% Container string
% Type string
%EndEventDef
0 P 0 \"a process type with a long name\"
1 S P \"state\"
3 0.0 p0 P 0 \"the first process of the run\"
4 1.0 p0 S c
5 2.0 \"the first process of the run\" S
2 c S \"compute\"
4 3.0 p0 S c
5 4.0 p0 S
";
    let reader = PajeReader::new(trace.as_bytes(), "late.paje".into(), ReadOptions::default());
    let (records, errors) = split(reader.collect());
    assert!(errors.is_empty(), "{errors:?}");
    let states: Vec<String> = records
        .iter()
        .filter(|r| r.etype != voml_trace::layout::LIFE)
        .map(|r| {
            format!(
                "{} {}",
                r.rtype,
                r.get(10).and_then(|v| v.as_str()).unwrap_or("?")
            )
        })
        .collect();
    assert_eq!(states, ["-3 c", "-4 c", "-3 compute", "-4 compute"]);
    assert_eq!(
        records[0].get(11).and_then(|v| v.as_str()),
        Some("a process type with a long name")
    );
}
