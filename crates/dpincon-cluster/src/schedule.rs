//! Booking time slots in K lanes: the whole schedule is a function of when
//! jobs were accepted and of public settings (K, each dataset's
//! `job-deadline`), never of how long any job ran.
//!
//! A coordinator runs at most K jobs at once (`[limits] slots`). Each lane
//! holds back-to-back slots; an accepted job books the lane that frees
//! first (the lowest index on a tie), from the later of its acceptance
//! time and that lane's last booked end, for its dataset's deadline. A
//! booking is never given back: a job that ends early, fails or is
//! cancelled leaves its slot empty, so no later job's slot moves with it
//! (the cluster README, "What a client observes").

/// The K lanes' booked ends, in Unix milliseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lanes {
    free_at: Vec<i64>,
}

/// One booking: which lane, from when to when (Unix ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Booking {
    /// The lane (0-based).
    pub lane: usize,
    /// The slot's start: the job's process starts then, never earlier.
    pub start_ms: i64,
    /// The slot's end: the job is stopped and its end shown then.
    pub end_ms: i64,
}

impl Lanes {
    /// `k` empty lanes (`k` ≥ 1).
    pub fn new(k: usize) -> Self {
        assert!(k >= 1, "a schedule needs at least one lane");
        Lanes { free_at: vec![0; k] }
    }

    /// The slot a job accepted at `now_ms` with a slot of `length_ms` gets;
    /// the lane is booked until its end.
    pub fn book(&mut self, now_ms: i64, length_ms: i64) -> Booking {
        let (lane, free_at) = self
            .free_at
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|&(i, t)| (t, i))
            .expect("at least one lane");
        let start_ms = now_ms.max(free_at);
        let end_ms = start_ms.saturating_add(length_ms.max(0));
        self.free_at[lane] = end_ms;
        Booking { lane, start_ms, end_ms }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_lane_books_slots_back_to_back_from_acceptance() {
        let mut lanes = Lanes::new(1);
        assert_eq!(lanes.book(1000, 500), Booking { lane: 0, start_ms: 1000, end_ms: 1500 });
        // Accepted while the first slot runs: starts at its end.
        assert_eq!(lanes.book(1200, 300), Booking { lane: 0, start_ms: 1500, end_ms: 1800 });
        // Accepted after every slot ended: starts at acceptance.
        assert_eq!(lanes.book(5000, 100), Booking { lane: 0, start_ms: 5000, end_ms: 5100 });
        assert_eq!(lanes.clone().book(5050, 1).start_ms, 5100);
        assert_eq!(lanes.clone().book(9000, 1).start_ms, 9000);
    }

    #[test]
    fn k_lanes_never_hold_more_than_k_slots_at_once_and_fill_the_earliest_lane() {
        // Pseudo-random acceptance times and lengths (a fixed LCG: no seed to
        // choose), the property checked on every instant where a slot starts.
        for k in 1..=5 {
            let mut lanes = Lanes::new(k);
            let mut state: u64 = 0x9e37_79b9_7f4a_7c15 ^ k as u64;
            let mut next = |m: u64| {
                state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                (state >> 33) % m
            };
            let mut now = 0i64;
            let mut booked = Vec::new();
            for _ in 0..300 {
                now += next(400) as i64;
                let length = 100 + next(2000) as i64;
                let before = lanes.clone();
                let b = lanes.book(now, length);
                assert!(b.start_ms >= now, "never before acceptance");
                assert_eq!(b.end_ms - b.start_ms, length);
                let earliest = before.free_at.iter().copied().min().unwrap().max(now);
                assert_eq!(b.start_ms, earliest, "the earliest free lane");
                booked.push(b);
            }
            for b in &booked {
                let at = b.start_ms;
                let running = booked.iter().filter(|o| o.start_ms <= at && at < o.end_ms).count();
                assert!(running <= k, "{running} slots at {at} with k = {k}");
                // Slots in one lane do not overlap.
                assert!(booked.iter().all(|o| o == b
                    || o.lane != b.lane
                    || o.end_ms <= b.start_ms
                    || b.end_ms <= o.start_ms));
            }
        }
    }

    #[test]
    fn the_schedule_depends_on_acceptance_times_and_lengths_only() {
        // The same acceptances give the same slots, whatever happened in
        // between (Lanes has no input for how a job ran).
        let accept = [(0, 60_000), (10, 60_000), (20, 5_000), (30, 60_000), (40, 1_000)];
        let run = || {
            let mut lanes = Lanes::new(2);
            accept.iter().map(|&(t, l)| lanes.book(t, l)).collect::<Vec<_>>()
        };
        let slots = run();
        assert_eq!(slots, run());
        let starts: Vec<i64> = slots.iter().map(|b| b.start_ms).collect();
        assert_eq!(starts, [0, 10, 60_000, 60_010, 65_000]);
    }
}
