//! Look-ahead peak limiter: the last stage of the mix, which guarantees that no output sample
//! exceeds the ceiling while changing gain smoothly.
//!
//! For every incoming frame the gain that would bring it to the ceiling is computed. The signal
//! is delayed by `L` frames; the gain applied to a delayed frame is the average, over the `L+1`
//! most recent frames, of a released running minimum of those gains taken over a hold window of
//! `H ≥ L` frames. Every term of that average covers the frame being output, so the average is
//! at most that frame's own required gain: the ceiling holds exactly, not approximately, and
//! gain reduction starts `L` frames early as a straight ramp instead of a step. A final clamp
//! only catches rounding.
//!
//! The hold window is longer than a period of the lowest notes, so a steady overloaded chord
//! gets a steady gain instead of one that breathes with each cycle (which would be distortion),
//! and the gain then recovers at a fixed rate in decibels per second.

pub(crate) struct Limiter {
    lookahead: usize,
    hold: u64,
    ceiling: f32,
    /// Gain factor of recovery per frame.
    release: f32,
    delay: Vec<[f32; 2]>,
    delay_pos: usize,
    /// Monotonic queue of (frame, required gain) for the running minimum.
    queue: Vec<(u64, f32)>,
    queue_head: usize,
    queue_len: usize,
    window: Vec<f32>,
    window_pos: usize,
    window_sum: f64,
    held: f32,
    /// Consecutive frames whose released gain was exactly 1.
    unity_run: usize,
    frame: u64,
}

impl Limiter {
    /// `lookahead` frames of delay, a minimum held for `hold` frames, a `ceiling` in full-scale
    /// units and a recovery of `release_db_per_frame` decibels per frame.
    pub(crate) fn new(
        lookahead: usize,
        hold: usize,
        ceiling: f32,
        release_db_per_frame: f64,
    ) -> Self {
        let lookahead = lookahead.max(1);
        let hold = hold.max(lookahead);
        let w = lookahead + 1;
        Limiter {
            lookahead,
            hold: hold as u64,
            ceiling,
            release: 10f64.powf(release_db_per_frame / 20.0) as f32,
            delay: vec![[0.0; 2]; lookahead],
            delay_pos: 0,
            queue: vec![(0, 1.0); hold + 2],
            queue_head: 0,
            queue_len: 0,
            window: vec![1.0; w],
            window_pos: 0,
            window_sum: w as f64,
            held: 1.0,
            unity_run: usize::MAX,
            frame: 0,
        }
    }

    pub(crate) fn lookahead(&self) -> usize {
        self.lookahead
    }

    /// The gain currently applied (1 when not limiting).
    pub(crate) fn gain(&self) -> f32 {
        (self.window_sum / self.window.len() as f64) as f32
    }

    /// Feed one frame, get the frame from `lookahead` frames ago, limited.
    #[inline]
    pub(crate) fn process(&mut self, l: f32, r: f32) -> [f32; 2] {
        // A non-finite sample would poison the gain computation for a whole window.
        let l = if l.is_finite() { l } else { 0.0 };
        let r = if r.is_finite() { r } else { 0.0 };
        let peak = l.abs().max(r.abs());
        let need = if peak > self.ceiling {
            self.ceiling / peak
        } else {
            1.0
        };

        let w = self.window.len();
        if need == 1.0 && self.queue_len == 0 && self.unity_run >= w {
            // Nothing to limit anywhere in the window: the gain is exactly 1 and every window
            // entry already is 1, so only the delay line moves.
            self.window_pos += 1;
            if self.window_pos == w {
                self.window_pos = 0;
                self.window_sum = w as f64;
            }
            return self.delay_out(l, r, 1.0);
        }

        // Only gains below 1 are queued; an empty queue means a minimum of 1.
        let cap = self.queue.len();
        let wrap = |i: usize| if i >= cap { i - cap } else { i };
        while self.queue_len > 0 {
            let back = wrap(self.queue_head + self.queue_len - 1);
            if self.queue[back].1 >= need {
                self.queue_len -= 1;
            } else {
                break;
            }
        }
        if need < 1.0 {
            let slot = wrap(self.queue_head + self.queue_len);
            self.queue[slot] = (self.frame, need);
            self.queue_len += 1;
        }
        while self.queue_len > 0 && self.queue[self.queue_head].0 + self.hold < self.frame {
            self.queue_head = wrap(self.queue_head + 1);
            self.queue_len -= 1;
        }
        let min_need = if self.queue_len > 0 {
            self.queue[self.queue_head].1
        } else {
            1.0
        };

        self.held = min_need.min(self.held * self.release).min(1.0);
        if self.held == 1.0 {
            self.unity_run = self.unity_run.saturating_add(1);
        } else {
            self.unity_run = 0;
        }

        self.window_sum += f64::from(self.held) - f64::from(self.window[self.window_pos]);
        self.window[self.window_pos] = self.held;
        self.window_pos += 1;
        if self.window_pos == w {
            self.window_pos = 0;
            // Re-add from scratch once per window so rounding cannot drift over hours.
            self.window_sum = self.window.iter().map(|&x| f64::from(x)).sum();
        }
        let gain = (self.window_sum / w as f64) as f32;
        self.delay_out(l, r, gain)
    }

    #[inline]
    fn delay_out(&mut self, l: f32, r: f32, gain: f32) -> [f32; 2] {
        let [dl, dr] = self.delay[self.delay_pos];
        self.delay[self.delay_pos] = [l, r];
        self.delay_pos += 1;
        if self.delay_pos == self.lookahead {
            self.delay_pos = 0;
        }
        self.frame += 1;
        let c = self.ceiling;
        [(dl * gain).clamp(-c, c), (dr * gain).clamp(-c, c)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_signal_passes_unchanged_after_delay() {
        let mut lim = Limiter::new(8, 20, 0.98, 0.01);
        let input: Vec<f32> = (0..100).map(|i| (i as f32 * 0.1).sin() * 0.5).collect();
        let out: Vec<f32> = input.iter().map(|&x| lim.process(x, -x)[0]).collect();
        for i in 8..100 {
            assert!((out[i] - input[i - 8]).abs() < 1e-7);
        }
    }

    #[test]
    fn loud_signal_never_exceeds_ceiling_and_ramps() {
        let mut lim = Limiter::new(16, 100, 0.9, 0.01);
        let mut prev_gain = 1.0f32;
        for i in 0..2000 {
            let x = if (500..900).contains(&i) { 20.0 } else { 0.5 };
            let [l, r] = lim.process(x, -x);
            assert!(l.abs() <= 0.9 && r.abs() <= 0.9);
            // Gain moves at most one window's worth per frame: no steps.
            let g = lim.gain();
            assert!((g - prev_gain).abs() <= 1.0 / 17.0 + 1e-6);
            prev_gain = g;
        }
        let [l, _] = lim.process(f32::NAN, 0.0);
        assert!(l.is_finite());
    }
}
