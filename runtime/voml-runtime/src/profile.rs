//! Where a run's time goes, for `voml run --profile`: per part of each component, how often it
//! ran and the wall time it took, the drawing and sound it asked for included, and what
//! loading the visual object took.
//!
//! Timing is off unless asked for: it reads the clock twice per call of VO code.

use std::collections::HashMap;
use std::time::Duration;

/// One line of a profile.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileRow {
    /// `EP component `name``, `IR component `name``, `view `name``, or what ran outside
    /// components (the program's top level, loading).
    pub component: String,
    /// `input ^0`, `phase 1`, ...
    pub part: String,
    /// How many times it ran.
    pub calls: u64,
    /// Wall time in all.
    pub time: Duration,
}

/// Calls and time per part, keyed as the runtime names its parts.
pub(crate) struct Profile<K> {
    tallies: HashMap<K, (u64, Duration)>,
}

impl<K: std::hash::Hash + Eq + Clone> Profile<K> {
    pub(crate) fn new() -> Profile<K> {
        Profile {
            tallies: HashMap::new(),
        }
    }

    pub(crate) fn add(&mut self, key: &K, time: Duration) {
        if let Some(t) = self.tallies.get_mut(key) {
            t.0 += 1;
            t.1 += time;
        } else {
            self.tallies.insert(key.clone(), (1, time));
        }
    }

    /// Every part that ran, the longest first, named by `name`.
    pub(crate) fn rows(&self, name: impl Fn(&K) -> (String, String)) -> Vec<ProfileRow> {
        let mut rows: Vec<ProfileRow> = self
            .tallies
            .iter()
            .map(|(k, &(calls, time))| {
                let (component, part) = name(k);
                ProfileRow {
                    component,
                    part,
                    calls,
                    time,
                }
            })
            .collect();
        rows.sort_by(|a, b| {
            b.time
                .cmp(&a.time)
                .then_with(|| a.component.cmp(&b.component))
                .then_with(|| a.part.cmp(&b.part))
        });
        rows
    }
}

/// The profile as a table for a terminal: each part's calls, time, time per call and share
/// of `total` (the run's wall time), and the time outside the parts listed.
pub fn table(rows: &[ProfileRow], total: Duration) -> Vec<String> {
    let total_s = total.as_secs_f64().max(1e-9);
    let width = rows
        .iter()
        .map(|r| r.component.chars().count() + r.part.chars().count() + 1)
        .max()
        .unwrap_or(0)
        .max(9);
    let mut lines = vec![format!(
        "{:<width$} {:>10} {:>10} {:>12} {:>6}",
        "part", "calls", "time", "per call", "share"
    )];
    let mut listed = Duration::ZERO;
    for r in rows {
        listed += r.time;
        let per_call = r.time.as_secs_f64() / r.calls.max(1) as f64;
        lines.push(format!(
            "{:<width$} {:>10} {:>10} {:>12} {:>5.1}%",
            format!("{} {}", r.component, r.part),
            r.calls,
            seconds(r.time.as_secs_f64()),
            seconds(per_call),
            100.0 * r.time.as_secs_f64() / total_s
        ));
    }
    let rest = total.saturating_sub(listed);
    lines.push(format!(
        "{:<width$} {:>10} {:>10} {:>12} {:>5.1}%",
        "everything else",
        "",
        seconds(rest.as_secs_f64()),
        "",
        100.0 * rest.as_secs_f64() / total_s
    ));
    lines
}

/// A duration in the unit that reads best.
fn seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_tallied_and_ordered_by_time() {
        let mut p: Profile<u32> = Profile::new();
        p.add(&1, Duration::from_millis(2));
        p.add(&2, Duration::from_millis(5));
        p.add(&1, Duration::from_millis(4));
        let rows = p.rows(|k| (format!("c{k}"), "phase 1".into()));
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].component.as_str(), rows[0].calls), ("c1", 2));
        assert_eq!(rows[0].time, Duration::from_millis(6));
        assert_eq!((rows[1].component.as_str(), rows[1].calls), ("c2", 1));
    }

    #[test]
    fn the_table_shows_shares_and_what_is_left() {
        let rows = vec![ProfileRow {
            component: "IR component `plot`".into(),
            part: "phase 1".into(),
            calls: 4,
            time: Duration::from_millis(750),
        }];
        let lines = table(&rows, Duration::from_secs(1));
        assert!(
            lines[1].contains("IR component `plot` phase 1"),
            "{lines:?}"
        );
        assert!(lines[1].contains("750.0 ms") && lines[1].contains("187.5 ms"));
        assert!(lines[1].ends_with("75.0%"), "{lines:?}");
        assert!(lines[2].starts_with("everything else") && lines[2].ends_with("25.0%"));
    }
}
