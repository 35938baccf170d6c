//! CoDel (RFC 8289) for one flow, in passed-in microseconds, integers only.
//!
//! A flow is in one of two modes. *Not dropping*: a frame whose sojourn time (now minus
//! its enqueue time) is at or above the target starts a timer of one interval; if every
//! frame dequeued until the timer expires is still above target, the next one is dropped
//! (or CE-marked) and the flow enters *dropping*. *Dropping*: the `count`-th drop comes
//! `interval / sqrt(count)` after the previous one, so the drop rate grows until the
//! sojourn falls below target, which ends dropping. Re-entering dropping soon after
//! leaving it resumes near the old count instead of starting from 1.
//!
//! `1 / sqrt(count)` is kept in Q0.32 fixed point and updated by Newton steps for the
//! inverse square root, `x' = x (3 - count x^2) / 2`. The kernel takes one step per count
//! change; here the step is iterated until it stops improving (at most
//! [`MAX_NEWTON_STEPS`]), which costs a few multiplications per drop and makes the first
//! drops exact too (one step from `count = 1` gives `0.5` for `count = 2`, not `0.707`).

use super::{FqFrame, Queued};
use crate::Instant;

/// `1.0` in Q0.32, rounded down to fit.
pub(crate) const INV_SQRT_ONE: u32 = u32::MAX;

/// Bound on the Newton iterations of one update.
pub(crate) const MAX_NEWTON_STEPS: u32 = 32;

/// `count * x^2` in Q0.32 for `x` in Q0.32.
fn count_x_squared(x: u32, count: u32) -> u128 {
    // count * x * x < 2^32 * 2^64: exact in u128, rounded once.
    let x = u128::from(x);
    u128::from(count).wrapping_mul(x).wrapping_mul(x) >> 32
}

/// One Newton step towards `1 / sqrt(count)` (Q0.32), or `None` if `inv_sqrt` is so
/// far above the root (`count x^2 >= 3`) that the step would not be positive.
fn newton_step(inv_sqrt: u32, count: u32) -> Option<u32> {
    let three = 3u128 << 32;
    let factor = three.checked_sub(count_x_squared(inv_sqrt, count)).filter(|f| *f > 0)?;
    // x * factor < 2^32 * 3 * 2^32 fits; the result is at most the root, below 2^32.
    Some(u32::try_from(u128::from(inv_sqrt).wrapping_mul(factor) >> 33).unwrap_or(u32::MAX))
}

/// `1 / sqrt(count)` in Q0.32 for `count >= 1`, starting from the previous estimate
/// `inv_sqrt` (any value works; a near one converges in one or two steps).
pub(crate) fn inv_sqrt(inv_sqrt: u32, count: u32) -> u32 {
    if count <= 1 {
        return INV_SQRT_ONE;
    }
    // Bring the start within [root / 2, root * sqrt(2)), from where Newton converges in
    // a few steps: double while count x^2 < 1/4, halve while count x^2 > 2. (Near
    // root * sqrt(3) a step would land near 0 and climb back slowly.)
    let mut x = inv_sqrt.max(1);
    while count_x_squared(x, count) < (1u128 << 30) && x <= u32::MAX / 2 {
        x = x.wrapping_mul(2); // x <= u32::MAX / 2
    }
    while count_x_squared(x, count) > (2u128 << 32) && x > 1 {
        x /= 2;
    }
    let Some(mut x) = newton_step(x, count) else {
        return 1;
    };
    // From here the iterates rise monotonically to the root: stop when they stop rising.
    for _ in 0..MAX_NEWTON_STEPS {
        match newton_step(x, count) {
            Some(next) if next > x => x = next,
            _ => break,
        }
    }
    x.max(1)
}

/// `t + interval / sqrt(count)`, with `1 / sqrt(count)` given in Q0.32.
pub(crate) fn control_law(t: Instant, interval_us: u64, inv_sqrt: u32) -> Instant {
    // Below 2^96: exact in u128.
    let step = u128::from(interval_us).wrapping_mul(u128::from(inv_sqrt)) >> 32;
    t.add_micros(u64::try_from(step).unwrap_or(u64::MAX))
}

/// CoDel parameters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CodelParams {
    pub(crate) target_us: u64,
    pub(crate) interval_us: u64,
    pub(crate) ecn: bool,
}

/// CoDel state of one flow.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CodelVars {
    /// Drops (and marks) since dropping was entered, possibly resumed.
    count: u32,
    /// `count` when dropping was last entered.
    last_count: u32,
    dropping: bool,
    /// `1 / sqrt(count)` in Q0.32.
    inv_sqrt: u32,
    /// When the sojourn will have been above target for an interval; `None` while below.
    first_above: Option<Instant>,
    /// When the next drop is due in dropping mode.
    drop_next: Instant,
}

impl CodelVars {
    /// What a dequeue that finds the flow empty does: it leaves dropping mode (as
    /// mainline's `codel_dequeue`) and forgets when the sojourn went above target
    /// (mainline keeps that stamp; `count` stays in both, for the re-entry rule).
    pub(crate) fn on_empty(&mut self) {
        self.dropping = false;
        self.first_above = None;
    }

    pub(crate) const fn new() -> Self {
        CodelVars {
            count: 0,
            last_count: 0,
            dropping: false,
            inv_sqrt: INV_SQRT_ONE,
            first_above: None,
            drop_next: Instant::ZERO,
        }
    }

    /// Drops and marks counted since dropping was (re-)entered.
    #[cfg(test)]
    pub(crate) fn count(&self) -> u32 {
        self.count
    }

    /// Whether the flow is in dropping mode.
    #[cfg(test)]
    pub(crate) fn dropping(&self) -> bool {
        self.dropping
    }

    /// When the next drop is due (meaningful while dropping).
    #[cfg(test)]
    pub(crate) fn drop_next(&self) -> Instant {
        self.drop_next
    }

    /// Whether `head` (just popped, leaving `backlog_after` bytes in the flow) may be
    /// dropped: its sojourn has stayed at or above target for a whole interval. A flow
    /// that this frame empties is never in trouble (mac80211's MTU of 0).
    fn should_drop<F>(
        &mut self,
        head: Option<&Queued<F>>,
        backlog_after: u64,
        params: &CodelParams,
        now: Instant,
    ) -> bool {
        let Some(head) = head else {
            self.first_above = None;
            return false;
        };
        let sojourn = now.micros_since(head.enqueued);
        if sojourn < params.target_us || backlog_after == 0 {
            self.first_above = None;
            return false;
        }
        match self.first_above {
            None => {
                self.first_above = Some(now.add_micros(params.interval_us));
                false
            }
            Some(t) => now > t,
        }
    }

    fn advance_count(&mut self) {
        self.count = self.count.saturating_add(1);
        self.inv_sqrt = inv_sqrt(self.inv_sqrt, self.count);
    }
}

/// What CoDel needs from the flow it manages.
pub(crate) trait CodelQueue<F> {
    /// Takes the head frame and returns it with the flow's backlog in bytes left after it.
    fn pop(&mut self) -> Option<(Queued<F>, u64)>;
    /// Consumes a frame CoDel dropped.
    fn drop_frame(&mut self, frame: Queued<F>);
    /// Counts a frame CoDel marked CE instead of dropping it.
    fn count_mark(&mut self);
}

fn try_mark<F: FqFrame>(params: &CodelParams, q: &mut Queued<F>) -> bool {
    params.ecn && q.frame.ecn_capable() && q.frame.set_ce()
}

/// Dequeues the next frame of a flow through CoDel: drops (or marks) as the state
/// machine says, and returns the first frame that is to be sent, if any.
// Always inlined into its one caller, the txq's dequeue: left to the compiler, whether it
// was inlined depended on how the codegen units happened to be split (an unrelated edit
// flipped it, costing 29 instructions a frame).
#[inline(always)]
pub(crate) fn codel_dequeue<F: FqFrame, Q: CodelQueue<F>>(
    vars: &mut CodelVars,
    params: &CodelParams,
    now: Instant,
    queue: &mut Q,
) -> Option<Queued<F>> {
    let Some((mut head, backlog)) = queue.pop() else {
        vars.on_empty();
        return None;
    };
    let ok_to_drop = vars.should_drop(Some(&head), backlog, params, now);

    if vars.dropping {
        if !ok_to_drop {
            // Sojourn went below target (or the flow is nearly empty): leave dropping.
            vars.dropping = false;
            return Some(head);
        }
        while vars.dropping && now >= vars.drop_next {
            vars.advance_count();
            if try_mark(params, &mut head) {
                queue.count_mark();
                vars.drop_next = control_law(vars.drop_next, params.interval_us, vars.inv_sqrt);
                return Some(head);
            }
            queue.drop_frame(head);
            match queue.pop() {
                None => {
                    vars.should_drop::<F>(None, 0, params, now);
                    vars.dropping = false;
                    return None;
                }
                Some((next, backlog)) => {
                    head = next;
                    if vars.should_drop(Some(&head), backlog, params, now) {
                        vars.drop_next = control_law(vars.drop_next, params.interval_us, vars.inv_sqrt);
                    } else {
                        vars.dropping = false;
                    }
                }
            }
        }
        return Some(head);
    }

    if !ok_to_drop {
        return Some(head);
    }

    // Enter dropping: drop (or mark) this frame now.
    let out = if try_mark(params, &mut head) {
        queue.count_mark();
        Some(head)
    } else {
        queue.drop_frame(head);
        match queue.pop() {
            Some((next, backlog)) => {
                vars.should_drop(Some(&next), backlog, params, now);
                Some(next)
            }
            None => {
                vars.should_drop::<F>(None, 0, params, now);
                None
            }
        }
    };
    vars.dropping = true;
    // Re-entering soon after the last drop episode: resume near the old rate.
    let delta = vars.count.wrapping_sub(vars.last_count);
    let recent = now.micros() < vars.drop_next.micros().saturating_add(params.interval_us.saturating_mul(16));
    if delta > 1 && recent {
        vars.count = delta;
        vars.inv_sqrt = inv_sqrt(vars.inv_sqrt, vars.count);
    } else {
        vars.count = 1;
        vars.inv_sqrt = INV_SQRT_ONE;
    }
    vars.last_count = vars.count;
    vars.drop_next = control_law(now, params.interval_us, vars.inv_sqrt);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Frame;
    use alloc::collections::VecDeque;
    use alloc::vec::Vec;

    /// Independent `2^32 / sqrt(count)`, by integer square root of `2^64 / count`.
    fn reference_inv_sqrt(count: u32) -> u64 {
        let target = (1u128 << 64) / u128::from(count);
        // Largest r with r*r <= target, by bisection.
        let (mut lo, mut hi) = (0u128, 1u128 << 33);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if mid * mid <= target {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        u64::try_from(lo).unwrap()
    }

    #[test]
    fn inv_sqrt_matches_an_integer_square_root_for_counts_up_to_100000() {
        let mut x = INV_SQRT_ONE;
        for count in 1..=100_000u32 {
            x = inv_sqrt(x, count);
            let want = reference_inv_sqrt(count).min(u64::from(u32::MAX));
            let err = u64::from(x).abs_diff(want);
            // Within 2 units of 2^-32.
            assert!(err <= 2, "count {count}: {x} vs {want}");
        }
    }

    #[test]
    fn inv_sqrt_converges_from_any_start() {
        for start in [0u32, 1, 7, 1 << 16, 1 << 31, u32::MAX] {
            for count in [2u32, 3, 17, 1000, u32::MAX] {
                let x = inv_sqrt(start, count);
                let want = reference_inv_sqrt(count);
                assert!(u64::from(x).abs_diff(want) <= 2, "start {start} count {count}: {x} vs {want}");
            }
        }
    }

    #[test]
    fn control_law_spaces_by_interval_over_sqrt_count() {
        let t = Instant::from_micros(5);
        assert_eq!(control_law(t, 100_000, INV_SQRT_ONE).micros(), 5 + 99_999);
        let x4 = inv_sqrt(INV_SQRT_ONE, 4);
        assert_eq!(control_law(t, 100_000, x4).micros(), 5 + 50_000 - 1);
        assert_eq!(control_law(Instant::from_micros(u64::MAX), u64::MAX, u32::MAX).micros(), u64::MAX);
    }

    struct Pkt {
        len: u32,
        ect: bool,
        ce: bool,
    }

    impl Frame for Pkt {
        fn len_bytes(&self) -> u32 {
            self.len
        }
    }

    impl FqFrame for Pkt {
        fn flow_hash(&self) -> u32 {
            0
        }
        fn ecn_capable(&self) -> bool {
            self.ect
        }
        fn set_ce(&mut self) -> bool {
            self.ce = self.ect;
            self.ect
        }
    }

    #[derive(Default)]
    struct TestQueue {
        frames: VecDeque<Queued<Pkt>>,
        dropped: Vec<Queued<Pkt>>,
        marks: u32,
    }

    impl TestQueue {
        fn push(&mut self, at: u64, ect: bool) {
            let frame = Pkt { len: 1000, ect, ce: false };
            self.frames.push_back(Queued { frame, enqueued: Instant::from_micros(at), len: 1000, truesize: 1000 });
        }
    }

    impl CodelQueue<Pkt> for TestQueue {
        fn pop(&mut self) -> Option<(Queued<Pkt>, u64)> {
            let q = self.frames.pop_front()?;
            let backlog = self.frames.iter().map(|q| u64::from(q.len)).sum();
            Some((q, backlog))
        }
        fn drop_frame(&mut self, frame: Queued<Pkt>) {
            self.dropped.push(frame);
        }
        fn count_mark(&mut self) {
            self.marks += 1;
        }
    }

    const PARAMS: CodelParams = CodelParams { target_us: 20_000, interval_us: 100_000, ecn: true };

    #[test]
    fn first_drop_comes_one_interval_after_sojourn_first_exceeds_target() {
        let mut vars = CodelVars::new();
        let mut q = TestQueue::default();
        for _ in 0..100 {
            q.push(0, false);
        }
        // 30 ms sojourn at t = 30 ms: above target, timer starts (expires at 130 ms).
        assert!(codel_dequeue(&mut vars, &PARAMS, Instant::from_micros(30_000), &mut q).is_some());
        assert!(codel_dequeue(&mut vars, &PARAMS, Instant::from_micros(130_000), &mut q).is_some());
        assert!(q.dropped.is_empty() && !vars.dropping());
        assert!(codel_dequeue(&mut vars, &PARAMS, Instant::from_micros(130_001), &mut q).is_some());
        assert_eq!(q.dropped.len(), 1);
        assert!(vars.dropping());
        assert_eq!(vars.count(), 1);
        assert_eq!(vars.drop_next().micros(), 130_001 + 99_999);
    }

    #[test]
    fn ect_frames_are_marked_not_dropped_when_ecn_is_on() {
        let mut vars = CodelVars::new();
        let mut q = TestQueue::default();
        for _ in 0..10 {
            q.push(0, true);
        }
        codel_dequeue(&mut vars, &PARAMS, Instant::from_micros(30_000), &mut q);
        let out = codel_dequeue(&mut vars, &PARAMS, Instant::from_micros(130_001), &mut q).unwrap();
        assert!(out.frame.ce);
        assert_eq!((q.dropped.len(), q.marks), (0, 1));
        let no_ecn = CodelParams { ecn: false, ..PARAMS };
        let out = codel_dequeue(&mut vars, &no_ecn, Instant::from_micros(330_000), &mut q).unwrap();
        assert!(!out.frame.ce);
        assert!(!q.dropped.is_empty());
    }

    #[test]
    fn sojourn_below_target_leaves_dropping() {
        let mut vars = CodelVars::new();
        let mut q = TestQueue::default();
        for _ in 0..10 {
            q.push(0, false);
        }
        codel_dequeue(&mut vars, &PARAMS, Instant::from_micros(30_000), &mut q);
        codel_dequeue(&mut vars, &PARAMS, Instant::from_micros(130_001), &mut q);
        assert!(vars.dropping());
        q.frames.clear();
        q.push(140_000, false);
        q.push(140_000, false);
        let before = q.dropped.len();
        assert!(codel_dequeue(&mut vars, &PARAMS, Instant::from_micros(150_000), &mut q).is_some());
        assert!(!vars.dropping());
        assert_eq!(q.dropped.len(), before);
    }
}
