//! Trace time to wall time: a replay at a speed factor holds each record back until its
//! moment (trace seconds since the first record, divided by the speed, after the wall time the
//! first record was seen), and says what trace time it is while it waits. Without a speed,
//! records go as fast as they come.

use std::time::{Duration, Instant};

/// The map between trace time and wall time of one run.
#[derive(Clone, Debug)]
pub struct Pacer {
    speed: Option<f64>,
    /// The first record's timestamp and the instant it was seen.
    origin: Option<(f64, Instant)>,
}

impl Pacer {
    /// `speed` trace seconds per wall second; `None` (or a speed that is not a positive
    /// finite number) = as fast as possible.
    pub fn new(speed: Option<f64>) -> Pacer {
        Pacer {
            speed: speed.filter(|s| s.is_finite() && *s > 0.0),
            origin: None,
        }
    }

    /// Goes on from trace time `ts` at wall time `now`, at `speed`: after a pause or a change
    /// of speed, the records to come keep their spacing from where the replay stands. Before
    /// any record (`ts` unknown), the next record sets the origin, as for a new pacer.
    pub fn resume(&mut self, speed: Option<f64>, ts: Option<f64>, now: Instant) {
        *self = Pacer::new(speed);
        if self.speed.is_some() {
            self.origin = ts.filter(|t| t.is_finite()).map(|t| (t, now));
        }
    }

    /// The speed, when paced.
    pub fn speed(&self) -> Option<f64> {
        self.speed
    }

    /// When a record stamped `ts` is due: `None` when not paced (at once). The first record
    /// sets the origin.
    pub fn due(&mut self, ts: f64, now: Instant) -> Option<Instant> {
        let speed = self.speed?;
        let (t0, w0) = *self.origin.get_or_insert((ts, now));
        let ahead = (ts - t0) / speed;
        // Not later than the origin (or not a number): at once.
        if ahead.is_nan() || ahead <= 0.0 {
            return Some(w0);
        }
        // Far futures (a timestamp of 1e300) are clamped rather than overflowing the clock:
        // such a record waits a year, or until the user quits.
        Some(w0 + Duration::from_secs_f64(ahead.min(3.15e7)))
    }

    /// The trace time at wall time `now`, once the first record has set the origin.
    pub fn trace_time(&self, now: Instant) -> Option<f64> {
        let speed = self.speed?;
        let (t0, w0) = self.origin?;
        Some(t0 + now.saturating_duration_since(w0).as_secs_f64() * speed)
    }

    /// The wall time at which trace time `ts` comes, once paced and started.
    pub fn wall_time(&self, ts: f64) -> Option<Instant> {
        let speed = self.speed?;
        let (t0, w0) = self.origin?;
        let ahead = ((ts - t0) / speed).clamp(0.0, 3.15e7);
        if ahead.is_nan() {
            return None;
        }
        Some(w0 + Duration::from_secs_f64(ahead))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resumed_replay_keeps_the_spacing_from_where_it_stands() {
        let start = Instant::now();
        let mut pacer = Pacer::new(Some(1.0));
        assert_eq!(pacer.due(10.0, start), Some(start));
        // Paused at 10 s for a while, then resumed twice as fast: 11 s is half a second on.
        let later = start + Duration::from_secs(30);
        pacer.resume(Some(2.0), Some(10.0), later);
        assert_eq!(
            pacer.due(11.0, later),
            Some(later + Duration::from_millis(500))
        );
        assert_eq!(pacer.trace_time(later + Duration::from_secs(1)), Some(12.0));
        // As fast as possible: nothing is held.
        pacer.resume(None, Some(11.0), later);
        assert_eq!(pacer.due(100.0, later), None);
    }

    #[test]
    fn records_are_due_at_their_trace_time_over_the_speed() {
        let start = Instant::now();
        let mut p = Pacer::new(Some(2.0));
        assert_eq!(p.due(10.0, start), Some(start));
        assert_eq!(p.due(11.0, start), Some(start + Duration::from_millis(500)));
        // Earlier than the origin: at once.
        assert_eq!(p.due(9.0, start), Some(start));
        let later = start + Duration::from_secs(3);
        assert_eq!(p.trace_time(later), Some(16.0));
        assert_eq!(p.wall_time(12.0), Some(start + Duration::from_secs(1)));
        assert_eq!(
            p.due(1e300, start),
            Some(start + Duration::from_secs_f64(3.15e7))
        );
    }

    #[test]
    fn unpaced_runs_never_wait() {
        let mut p = Pacer::new(None);
        assert_eq!(p.due(5.0, Instant::now()), None);
        assert_eq!(p.trace_time(Instant::now()), None);
        assert_eq!(Pacer::new(Some(0.0)).speed(), None);
        assert_eq!(Pacer::new(Some(f64::NAN)).speed(), None);
    }
}
