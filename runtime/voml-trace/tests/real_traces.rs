//! Reads the real MPICL traces of the shared trace collection, when it is present next to the
//! repository, and checks the reader against counts computed naively from the text.

use std::collections::BTreeMap;
use std::io::BufReader;
use std::path::PathBuf;

use voml_trace::{ReadOptions, Record, TraceReader, Value};

fn trace(name: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/picl");
    if dir.is_dir() {
        Some(dir.join(name))
    } else {
        eprintln!("note: {} not present, skipping {name}", dir.display());
        None
    }
}

fn read(path: &PathBuf) -> Vec<Record> {
    let mut reader = TraceReader::open(path, ReadOptions { strict: true }).unwrap();
    let recs: Vec<Record> = reader.by_ref().map(Result::unwrap).collect();
    let stats = reader.stats();
    assert_eq!(stats.bad_lines, 0);
    assert_eq!(stats.records, recs.len() as u64);
    recs
}

/// Checks every record against a plain whitespace split of its line, and the number of records
/// per record type against the same count made from the split.
fn compare_with_naive_split(path: &PathBuf, recs: &[Record]) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut naive: BTreeMap<i64, usize> = BTreeMap::new();
    let mut lines = 0;
    for (i, line) in text.lines().enumerate() {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let rtype: i64 = tokens[0].parse().unwrap();
        *naive.entry(rtype).or_default() += 1;
        let rec = &recs[i];
        assert_eq!(rec.line, i as u64 + 1);
        assert_eq!(rec.rtype, rtype);
        assert_eq!(rec.etype, tokens[1].parse::<i64>().unwrap());
        // No string in these traces contains a space, so fields and tokens correspond.
        assert_eq!(rec.fields.len(), tokens.len() - 2, "line {}", i + 1);
        let ts: f64 = tokens[2].parse().unwrap();
        assert_eq!(rec.timestamp(), Some(ts));
        lines += 1;
    }
    assert_eq!(lines, recs.len());
    let mut counted: BTreeMap<i64, usize> = BTreeMap::new();
    for r in recs {
        *counted.entry(r.rtype).or_default() += 1;
    }
    assert_eq!(counted, naive);
}

fn assert_timestamps_never_decrease(recs: &[Record]) {
    for pair in recs.windows(2) {
        assert!(
            pair[0].timestamp() <= pair[1].timestamp(),
            "line {}",
            pair[1].line
        );
    }
}

#[test]
fn trace1() {
    let Some(path) = trace("mpicl-trace1.trf") else {
        return;
    };
    let recs = read(&path);
    assert_eq!(recs.len(), 802);
    compare_with_naive_split(&path, &recs);
    assert_timestamps_never_decrease(&recs);

    let stat = recs.iter().find(|r| r.rtype == -101).unwrap();
    assert_eq!(stat.get(6), Some(&Value::Str("%d%lf".into())));
    // Statistics records count pairs: ndata 4, then 8 values.
    assert_eq!(stat.ndata(), Some(4));
    assert_eq!(stat.fields.len(), 5 + 8);
    assert!(matches!(stat.get(7), Some(Value::Int(-22))));
    assert!(matches!(stat.get(8), Some(Value::Real(_))));

    // A three-byte buffer splits every line across refills; the records must not change.
    let file = std::fs::File::open(&path).unwrap();
    let small = TraceReader::new(
        BufReader::with_capacity(3, file),
        "trace1".into(),
        ReadOptions::default(),
    );
    let again: Vec<Record> = small.map(Result::unwrap).collect();
    assert_eq!(again, recs);
}

#[test]
fn trace2() {
    let Some(path) = trace("mpicl-trace2.trf") else {
        return;
    };
    let recs = read(&path);
    assert_eq!(recs.len(), 802);
    compare_with_naive_split(&path, &recs);
}

#[test]
fn trace3_bcast10() {
    let Some(path) = trace("mpicl-trace3-bcast10.trf") else {
        return;
    };
    let recs = read(&path);
    assert_eq!(recs.len(), 120_426);
    compare_with_naive_split(&path, &recs);
    assert_timestamps_never_decrease(&recs);

    let negative: Vec<&Record> = recs
        .iter()
        .filter(|r| matches!(r.get(2), Some(Value::Real(t)) if t.is_sign_negative()))
        .collect();
    // 8 records at -0.000001 and 4 at -0.000000, which is a negative zero.
    assert_eq!(negative.len(), 12);
    assert_eq!(
        negative
            .iter()
            .filter(|r| r.timestamp() == Some(-0.000001))
            .count(),
        8
    );
    assert_eq!(
        negative
            .iter()
            .filter(|r| r.timestamp() == Some(0.0))
            .count(),
        4
    );

    let processors: std::collections::BTreeSet<i64> =
        recs.iter().filter_map(Record::processor).collect();
    assert_eq!(processors, (0..10).collect());
}
