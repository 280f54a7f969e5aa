//! What the benches share: a child process timed by `/usr/bin/time`, whose CPU time (every
//! thread), wall time and peak resident memory are the operating system's figures.

#![allow(dead_code)]

use std::process::{Command, Stdio};

/// CPU seconds, wall seconds and peak resident kilobytes of a child process.
#[derive(Clone, Copy, Debug)]
pub struct Cost {
    pub cpu: f64,
    pub wall: f64,
    pub peak_kb: u64,
}

/// `/usr/bin/time` ready to run `program` with the format [`cost`] reads; add its arguments.
pub fn timed(program: &str) -> Command {
    let mut command = Command::new("/usr/bin/time");
    command.args(["-f", "VOMLTIME %U %S %e %M", program]);
    command
}

/// The cost `/usr/bin/time` reported on a child's standard error.
pub fn cost(stderr: &str) -> Result<Cost, String> {
    let line = stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("VOMLTIME "))
        .ok_or_else(|| format!("no timing from /usr/bin/time:\n{stderr}"))?;
    let f: Vec<f64> = line
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    match f[..] {
        [user, system, wall, peak, ..] => Ok(Cost {
            cpu: user + system,
            wall,
            peak_kb: peak as u64,
        }),
        _ => Err(format!("a short timing line from /usr/bin/time: {line}")),
    }
}

/// Runs `args` (standard output to `/dev/null`) `times` times and keeps the cheapest run by
/// CPU time.
pub fn measure(args: &[&str], times: usize) -> Result<Cost, String> {
    let mut best: Option<Cost> = None;
    for _ in 0..times {
        let out = timed(args[0])
            .args(&args[1..])
            .stdout(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", args[0]))?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            return Err(format!("{} failed:\n{stderr}", args.join(" ")));
        }
        let cost = cost(&stderr)?;
        if best.is_none_or(|b| cost.cpu < b.cpu) {
            best = Some(cost);
        }
    }
    best.ok_or_else(|| "not run".into())
}

/// Runs `a` and `b` in turn (`a`, `b`, `a`, `b`, ...) `times` times each and keeps each one's
/// cheapest run by CPU time: a change in the machine's load during the runs weighs on both
/// alike, so their ratio moves less than when one runs all its times before the other.
pub fn measure_pair(a: &[&str], b: &[&str], times: usize) -> Result<(Cost, Cost), String> {
    let cheaper = |best: Option<Cost>, cost: Cost| match best {
        Some(best) if best.cpu <= cost.cpu => best,
        _ => cost,
    };
    let (mut best_a, mut best_b) = (None, None);
    for _ in 0..times.max(1) {
        best_a = Some(cheaper(best_a, measure(a, 1)?));
        best_b = Some(cheaper(best_b, measure(b, 1)?));
    }
    Ok((best_a.expect("run once"), best_b.expect("run once")))
}
