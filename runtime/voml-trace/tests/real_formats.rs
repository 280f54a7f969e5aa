//! Reads every real Pajé, Chrome and Paraver trace of the shared trace collection, when it is
//! present next to the repository, and checks the adapters against counts made here from
//! the file text by simpler means (a whitespace split of Pajé lines, serde_json's whole-file
//! parse of Chrome traces, a `:` split of Paraver lines), the records' time order and the
//! names they carry.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use voml_trace::layout::{EVENT, LIFE, RECEIVE, SEND, VALUE};
use voml_trace::{Format, FormatReader, ReadOptions, Record, TraceError};

/// The traces of one format beside the repository (`../shared/traces/DIR/*.EXT`), or none
/// with a note; with `VOML_REQUIRE_TOOLS` set (as in CI) a missing collection fails.
fn shared(dir: &str, ext: &str) -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == ext))
                .collect()
        })
        .unwrap_or_default();
    if files.is_empty() {
        assert!(
            std::env::var_os("VOML_REQUIRE_TOOLS").is_none(),
            "no .{ext} traces in {}",
            dir.display()
        );
        eprintln!("note: no .{ext} traces in {}; skipped", dir.display());
    }
    files.sort();
    files
}

/// The records and errors of a trace read in the format its content tells, which must be
/// `format`.
fn read(path: &Path, format: Format) -> (Vec<Record>, Vec<TraceError>) {
    let reader = FormatReader::open(path, ReadOptions::default(), None).unwrap();
    assert_eq!(reader.format(), format, "{}", path.display());
    let (mut records, mut errors) = (Vec::new(), Vec::new());
    for item in reader {
        match item {
            Ok(r) => records.push(r),
            Err(e) => errors.push(e),
        }
    }
    (records, errors)
}

/// What a record is, for counting: the record type and the kind of event.
fn kind(r: &Record) -> (i64, &'static str) {
    let what = match r.etype {
        LIFE => "life",
        SEND => "send",
        RECEIVE => "receive",
        VALUE if r.rtype == -2 => "value",
        EVENT if r.rtype == -2 => "event",
        _ if r.rtype == -2 => "event",
        _ => "state",
    };
    (r.rtype, what)
}

fn counts(records: &[Record]) -> BTreeMap<(i64, &'static str), usize> {
    let mut out = BTreeMap::new();
    for r in records {
        *out.entry(kind(r)).or_default() += 1;
    }
    out
}

fn assert_in_time_order(path: &Path, records: &[Record]) {
    assert_at_most_back_steps(path, records, 0);
}

/// The records' times go back at most `steps` times (where the input's own times do).
fn assert_at_most_back_steps(path: &Path, records: &[Record], steps: usize) {
    let back: Vec<String> = records
        .windows(2)
        .filter(|p| p[0].timestamp() > p[1].timestamp())
        .map(|p| format!("{} after {}", p[1], p[0]))
        .collect();
    assert!(back.len() <= steps, "{}: {back:#?}", path.display());
}

/// A Pajé line's fields: blank-separated, or quoted.
fn paje_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line.trim();
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted.find('"').unwrap_or(quoted.len());
            out.push(quoted[..end].to_string());
            rest = quoted.get(end + 1..).unwrap_or("").trim_start();
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            out.push(rest[..end].to_string());
            rest = rest[end..].trim_start();
        }
    }
    out
}

#[test]
fn every_paje_trace() {
    for path in shared("paje", "trace") {
        let text = std::fs::read_to_string(&path).unwrap();
        // The header: each event's name and field names, by id.
        let mut defs: HashMap<String, (String, Vec<String>)> = HashMap::new();
        let mut open: Option<String> = None;
        let mut by_name: HashMap<String, usize> = HashMap::new();
        let mut starts = HashSet::new();
        let mut ends = HashSet::new();
        let mut destroyed_root = 0;
        // Times that go back in the input: the records then go back too.
        let mut latest = f64::NEG_INFINITY;
        let mut back_in = 0;
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if let Some(first) = words.first().and_then(|w| w.strip_prefix('%')) {
                let first = if first.is_empty() {
                    words.get(1).copied().unwrap_or("")
                } else {
                    first
                };
                let rest: Vec<&str> = if words[0] == "%" {
                    words[2..].to_vec()
                } else {
                    words[1..].to_vec()
                };
                match first {
                    "EventDef" => {
                        defs.insert(rest[1].to_string(), (rest[0].to_string(), Vec::new()));
                        open = Some(rest[1].to_string());
                    }
                    "EndEventDef" => open = None,
                    field => {
                        if let Some(id) = &open {
                            defs.get_mut(id).unwrap().1.push(field.to_string());
                        }
                    }
                }
                continue;
            }
            if words.is_empty() || words[0].starts_with('#') {
                continue;
            }
            let (name, fields) = &defs[words[0]];
            *by_name.entry(name.clone()).or_default() += 1;
            let values = paje_fields(line);
            let field = |f: &[&str]| {
                let i = fields.iter().position(|n| f.contains(&n.as_str())).unwrap();
                values[i + 1].clone()
            };
            if fields.iter().any(|f| f == "Time") {
                let t: f64 = field(&["Time"]).parse().unwrap();
                if t < latest {
                    back_in += 1;
                }
                latest = latest.max(t);
            }
            match name.as_str() {
                "PajeStartLink" => {
                    starts.insert((field(&["Type"]), field(&["Key"])));
                }
                "PajeEndLink" => {
                    ends.insert((field(&["Type"]), field(&["Key"])));
                }
                "PajeDestroyContainer" if field(&["Name"]) == "0" => destroyed_root += 1,
                _ => {}
            }
        }
        let n = |name: &str| by_name.get(name).copied().unwrap_or(0);
        let states = n("PajeSetState") + n("PajePushState");
        let messages = starts.intersection(&ends).count();
        let lost = starts.symmetric_difference(&ends).count();
        let mut wanted = BTreeMap::new();
        for (key, count) in [
            ((-3, "life"), n("PajeCreateContainer")),
            ((-4, "life"), n("PajeDestroyContainer") - destroyed_root),
            ((-3, "state"), states),
            // Every state ends: popped, set over, with its container, or at the end.
            ((-4, "state"), states),
            (
                (-2, "value"),
                n("PajeSetVariable") + n("PajeAddVariable") + n("PajeSubVariable"),
            ),
            ((-2, "event"), n("PajeNewEvent")),
            ((-3, "send"), messages),
            ((-4, "send"), messages),
            ((-3, "receive"), messages),
            ((-4, "receive"), messages),
        ] {
            if count > 0 {
                wanted.insert(key, count);
            }
        }
        let (records, errors) = read(&path, Format::Paje);
        assert_eq!(errors.len(), lost, "{}: {errors:?}", path.display());
        assert_eq!(counts(&records), wanted, "{}", path.display());
        assert_at_most_back_steps(&path, &records, back_in);
        // Processors are the containers, in creation order.
        let numbers: Vec<i64> = records
            .iter()
            .filter(|r| r.etype == LIFE && r.rtype == -3)
            .filter_map(Record::processor)
            .collect();
        assert_eq!(numbers, (0..numbers.len() as i64).collect::<Vec<_>>());
        eprintln!("{}: {} records", path.display(), records.len());
    }
}

#[test]
fn every_chrome_trace() {
    for path in shared("chrome", "json") {
        let value: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let events = match &value {
            serde_json::Value::Array(a) => a.clone(),
            serde_json::Value::Object(o) => o["traceEvents"].as_array().unwrap().clone(),
            _ => panic!("{}: not a trace", path.display()),
        };
        let s =
            |e: &serde_json::Value, k: &str| e.get(k).map(|v| v.to_string()).unwrap_or_default();
        let mut entries = 0;
        let mut exits = 0;
        let mut unmatched = 0;
        let mut values = 0;
        let mut instants = 0;
        let mut messages = 0;
        let mut depth: HashMap<(String, String), usize> = HashMap::new();
        let mut asyncs: HashMap<(String, String), Vec<String>> = HashMap::new();
        // Flows waiting for their next step, and finishes that came before their start (a
        // thread's events written before another's): their times.
        let mut flows: HashMap<(String, String), f64> = HashMap::new();
        let mut finishes: HashMap<(String, String), Vec<f64>> = HashMap::new();
        // The events in file order; the adapter sees them so too.
        for e in &events {
            let thread = (s(e, "pid"), s(e, "tid"));
            let id = if e.get("id2").is_some() {
                s(e, "id2")
            } else {
                s(e, "id")
            };
            let key = (s(e, "cat"), id);
            match e["ph"].as_str().unwrap_or("") {
                "B" => {
                    entries += 1;
                    *depth.entry(thread).or_default() += 1;
                }
                "E" => match depth.get_mut(&thread) {
                    Some(d) if *d > 0 => {
                        *d -= 1;
                        exits += 1;
                    }
                    _ => unmatched += 1,
                },
                "X" => {
                    entries += 1;
                    exits += 1;
                }
                "b" | "S" => {
                    entries += 1;
                    asyncs.entry(key).or_default().push(s(e, "name"));
                }
                "e" | "F" => {
                    let open = asyncs.entry(key).or_default();
                    let name = s(e, "name");
                    let at = if name.is_empty() || name == "\"\"" {
                        open.len().checked_sub(1)
                    } else {
                        open.iter().rposition(|n| *n == name)
                    };
                    match at {
                        Some(i) => {
                            open.remove(i);
                            exits += 1;
                        }
                        None => unmatched += 1,
                    }
                }
                "C" => {
                    values += e["args"]
                        .as_object()
                        .map_or(0, |a| a.values().filter(|v| v.is_number()).count())
                }
                "i" | "I" | "n" | "R" => instants += 1,
                "s" => {
                    let ts = e["ts"].as_f64().unwrap();
                    // The earliest finish at or after the start, if one came first.
                    let early = finishes.get_mut(&key).and_then(|f| {
                        let i = (0..f.len())
                            .filter(|&i| f[i] >= ts)
                            .min_by(|&a, &b| f[a].total_cmp(&f[b]))?;
                        Some(f.remove(i))
                    });
                    if early.is_some() {
                        messages += 1;
                    } else {
                        flows.insert(key, ts);
                    }
                }
                // A step after a start (or a step) is a message; the guard keeps it waiting
                // for its own next step either way.
                "t" if flows
                    .insert(key.clone(), e["ts"].as_f64().unwrap())
                    .is_some() =>
                {
                    messages += 1
                }
                "f" => {
                    let ts = e["ts"].as_f64().unwrap();
                    if flows.get(&key).is_some_and(|&start| start <= ts) {
                        flows.remove(&key);
                        messages += 1;
                    } else {
                        finishes.entry(key).or_default().push(ts);
                    }
                }
                _ => {}
            }
        }
        // What is still open ends at the end of the trace.
        exits += depth.values().sum::<usize>() + asyncs.values().map(Vec::len).sum::<usize>();
        let mut wanted = BTreeMap::new();
        for (key, count) in [
            ((-3, "state"), entries),
            ((-4, "state"), exits),
            ((-2, "value"), values),
            ((-2, "event"), instants),
            ((-3, "send"), messages),
            ((-4, "send"), messages),
            ((-3, "receive"), messages),
            ((-4, "receive"), messages),
        ] {
            if count > 0 {
                wanted.insert(key, count);
            }
        }
        let (records, errors) = read(&path, Format::Chrome);
        assert_eq!(errors.len(), unmatched, "{}: {errors:?}", path.display());
        assert_eq!(counts(&records), wanted, "{}", path.display());
        // Out of order in the file (each thread's buffer in turn), in order out of the reader.
        assert_in_time_order(&path, &records);
        eprintln!("{}: {} records", path.display(), records.len());
    }
}

#[test]
fn every_paraver_trace() {
    for path in shared("paraver", "prv") {
        let text = std::fs::read_to_string(&path).unwrap();
        let pcf = std::fs::read_to_string(path.with_extension("pcf")).unwrap();
        // The states' names: the lines after STATES up to the first blank line.
        let names: HashMap<i64, String> = pcf
            .split("\nSTATES\n")
            .nth(1)
            .unwrap()
            .lines()
            .take_while(|l| !l.trim().is_empty())
            .map(|l| {
                let (n, name) = l.trim().split_once(char::is_whitespace).unwrap();
                (n.parse().unwrap(), name.trim().to_string())
            })
            .collect();
        let (mut states, mut events, mut comms) = (0, 0, 0);
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split(':').collect();
            match fields[0] {
                "1" => states += 1,
                "2" => events += (fields.len() - 6) / 2,
                "3" => comms += 1,
                _ => {}
            }
        }
        let wanted: BTreeMap<(i64, &str), usize> = [
            ((-3, "state"), states),
            ((-4, "state"), states),
            ((-2, "event"), events),
            ((-3, "send"), comms),
            ((-4, "send"), comms),
            ((-3, "receive"), comms),
            ((-4, "receive"), comms),
        ]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect();
        let (records, errors) = read(&path, Format::Paraver);
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        assert_eq!(counts(&records), wanted, "{}", path.display());
        assert_in_time_order(&path, &records);
        // Every state carries its .pcf name and its value.
        for r in records.iter().filter(|r| kind(r).1 == "state") {
            let value = r.get(11).and_then(|v| v.as_i64()).unwrap();
            assert_eq!(
                r.get(10).and_then(|v| v.as_str()),
                names.get(&value).map(String::as_str)
            );
        }
        eprintln!("{}: {} records", path.display(), records.len());
    }
}
