//! Reads the small hand-made traces under `tests/data/` and checks records, errors and counts.

use std::io::BufReader;
use std::path::PathBuf;

use voml_trace::{ReadOptions, Record, TraceError, TraceErrorKind, TraceReader, TraceStats, Value};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn read_all(name: &str, strict: bool) -> (Vec<Result<Record, TraceError>>, TraceStats, bool) {
    let mut reader = TraceReader::open(data(name), ReadOptions { strict }).unwrap();
    let items: Vec<_> = reader.by_ref().collect();
    (items, reader.stats(), reader.missing_final_newline())
}

fn records(name: &str) -> Vec<Record> {
    read_all(name, true)
        .0
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn small_trace() {
    let (items, stats, unterminated) = read_all("small.trf", false);
    assert_eq!(
        stats,
        TraceStats {
            records: 15,
            bad_lines: 0,
            comment_or_blank: 4
        }
    );
    assert!(!unterminated);
    let recs: Vec<Record> = items.into_iter().map(Result::unwrap).collect();

    let first = &recs[0];
    assert_eq!((first.line, first.rtype, first.etype), (4, -3, -901));
    assert_eq!(first.get(2), Some(&Value::Real(-0.000001)));
    assert_eq!(first.timestamp(), Some(-0.000001));

    // ndata 0 with a descriptor after it: the descriptor is kept.
    let user = &recs[3];
    assert_eq!(user.ndata(), Some(0));
    assert_eq!(user.get(6), Some(&Value::Int(2)));

    // The paper's profile record, read by absolute position.
    let profile = recs.iter().find(|r| r.etype == 3141).unwrap();
    assert_eq!(profile.processor(), Some(1)); // node-id
    assert_eq!(profile.get(5).and_then(Value::as_i64), Some(2)); // node-type
    let reals: Vec<f64> = (6..=8)
        .map(|p| profile.get(p).unwrap().as_f64().unwrap())
        .collect();
    assert_eq!(reals, vec![12.5, 0.001, 0.25]);
    assert_eq!(profile.get(11), Some(&Value::Int(1100)));

    let stat = recs.iter().find(|r| r.rtype == -101).unwrap();
    assert_eq!(stat.get(6), Some(&Value::Str("%d%lf".into())));
    assert_eq!(stat.fields.len(), 9);

    let label = recs.iter().find(|r| r.rtype == -5).unwrap();
    assert_eq!(label.get(7).and_then(Value::as_str), Some("phase two"));
}

#[test]
fn crlf_and_missing_final_newline_read_the_same() {
    let plain = records("small.trf");
    assert_eq!(records("crlf.trf"), plain);
    let (items, stats, unterminated) = read_all("no_final_newline.trf", false);
    assert!(unterminated);
    assert_eq!(stats.records, 15);
    let recs: Vec<Record> = items.into_iter().map(Result::unwrap).collect();
    assert_eq!(recs, plain);
}

#[test]
fn tiny_buffers_read_the_same() {
    let file = std::fs::File::open(data("crlf.trf")).unwrap();
    let reader = TraceReader::new(
        BufReader::with_capacity(3, file),
        "crlf.trf".into(),
        ReadOptions::default(),
    );
    let recs: Vec<Record> = reader.map(Result::unwrap).collect();
    assert_eq!(recs, records("small.trf"));
}

#[test]
fn bad_lines_tolerant() {
    let (items, stats, _) = read_all("bad_lines.trf", false);
    assert_eq!(
        stats,
        TraceStats {
            records: 5,
            bad_lines: 5,
            comment_or_blank: 1
        }
    );
    let good: Vec<u64> = items
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .map(|r| r.line)
        .collect();
    assert_eq!(good, vec![2, 4, 6, 9, 11]);

    let errors: Vec<&TraceError> = items.iter().filter_map(|r| r.as_ref().err()).collect();
    let expected: [(u64, usize, TraceErrorKind, &str); 5] = [
        (
            3,
            1,
            TraceErrorKind::RecordType,
            "expected an integer record type, found `entry`",
        ),
        (
            5,
            4,
            TraceErrorKind::EventType,
            "expected an integer event type, found `tracekey`",
        ),
        (
            7,
            8,
            TraceErrorKind::MissingFields,
            "expected at least 3 fields (record type, event type, timestamp), found 2",
        ),
        (
            8,
            19,
            TraceErrorKind::UnterminatedString,
            "unterminated quoted string: expected a closing `\"` before the end of the line",
        ),
        (
            10,
            22,
            TraceErrorKind::InvalidUtf8,
            "invalid UTF-8: unexpected byte 0xE9",
        ),
    ];
    assert_eq!(errors.len(), expected.len());
    for (e, (line, column, kind, message)) in errors.iter().zip(expected) {
        assert_eq!(
            (e.line, e.column, e.kind, e.message.as_str()),
            (line, column, kind, message)
        );
        assert!(e.source_name.ends_with("bad_lines.trf"));
        assert_eq!(
            e.to_string(),
            format!("{}:{line}:{column}: {message}", e.source_name)
        );
    }
    assert_eq!(errors[0].text, "entry -901 0.2 0 0 0");
    assert_eq!(errors[4].text, "-5 7 0.8 0 0 1 1 \"caf\u{fffd}\"");
}

#[test]
fn bad_lines_strict() {
    let (items, stats, _) = read_all("bad_lines.trf", true);
    assert_eq!(items.len(), 2);
    assert!(items[0].is_ok());
    assert_eq!(items[1].as_ref().unwrap_err().line, 3);
    assert_eq!((stats.records, stats.bad_lines), (1, 1));
}

#[test]
fn truncated_in_a_number_gives_a_shorter_record() {
    let (items, stats, unterminated) = read_all("truncated_in_number.trf", false);
    assert!(unterminated);
    assert_eq!((stats.records, stats.bad_lines), (3, 0));
    let last = items.last().unwrap().as_ref().unwrap();
    assert_eq!(last.ndata(), Some(4));
    assert_eq!(last.fields.len(), 7);
    assert_eq!(last.fields[6], Value::Real(0.0));
}

#[test]
fn truncated_in_a_string_gives_a_bad_line() {
    let (items, stats, unterminated) = read_all("truncated_in_string.trf", false);
    assert!(unterminated);
    assert_eq!((stats.records, stats.bad_lines), (1, 1));
    let e = items[1].as_ref().unwrap_err();
    assert_eq!(
        (e.line, e.column, e.kind),
        (2, 24, TraceErrorKind::UnterminatedString)
    );
}
