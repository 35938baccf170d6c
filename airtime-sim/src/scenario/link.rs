//! A station's channel keys (`rate_schedule`, `walk_away`, `frame_error_rate`,
//! `rate_control`) checked and resolved into what [`crate::wifi::link::Link`] is built
//! from. A station that sets none of them keeps the ideal link.

use super::{Scenario, ScenarioError, ScenarioErrorKind, line_of, rate};
use crate::engine::Nanos;
use crate::wifi::link::{self, RateControl};
use airtime_est::Rate;

/// The highest frame error probability accepted: above it a frame needs more attempts
/// on average than the retry limit allows, and the link is a dead one.
pub const MAX_FRAME_ERROR_RATE: f64 = 0.9;

/// A station's link as a scenario describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    /// The channel's rate changes: `(time, rate)`, sorted by time.
    pub steps: Vec<(Nanos, Rate)>,
    /// Subframe error probability at or below the channel's rate.
    pub frame_error_rate: f64,
    /// Rate control.
    pub control: RateControl,
    /// Whether the rate changes (a schedule or a rate control): the driver then reports
    /// the rate it picks, else the station's `reported_rate` stands.
    pub dynamic: bool,
}

fn secs_to_ns(s: f64) -> Nanos {
    (s * 1e9) as Nanos
}

/// Every station's link, `None` where it sets none of the channel keys.
pub fn resolve(
    spec: &Scenario,
    rates: &[Rate],
    text: &str,
    origin: &str,
) -> Result<Vec<Option<LinkSpec>>, ScenarioError> {
    let mut out = Vec::with_capacity(spec.stations.len());
    for (i, (s, &base)) in spec.stations.iter().zip(rates).enumerate() {
        let line = Some(line_of(text, s.rate.span().start));
        let bad = |k: &str, m: String| {
            ScenarioError::new(origin, ScenarioErrorKind::BadValue, m).at(format!("stations[{i}].{k}"), line)
        };
        let lossy = s.frame_error_rate != 0.0;
        let dynamic = !s.rate_schedule.is_empty() || s.walk_away.is_some() || s.rate_control != RateControl::Fixed;
        if !lossy && !dynamic {
            out.push(None);
            continue;
        }
        if !(0.0..=MAX_FRAME_ERROR_RATE).contains(&s.frame_error_rate) {
            return Err(bad(
                "frame_error_rate",
                format!("{} is not a probability from 0 to {MAX_FRAME_ERROR_RATE}", s.frame_error_rate),
            ));
        }
        if dynamic && s.reported_rate.is_some() {
            return Err(bad(
                "reported_rate",
                "a station whose rate changes reports the rate its rate control picks; remove `reported_rate`".into(),
            ));
        }
        let mut steps = Vec::new();
        for (k, (t, r)) in s.rate_schedule.iter().enumerate() {
            if !(*t >= 0.0 && t.is_finite()) {
                return Err(bad("rate_schedule", format!("entry {k}: time {t} is not >= 0")));
            }
            let r = rate::parse_rate(r).map_err(|e| bad("rate_schedule", format!("entry {k}: {e}")))?;
            if r.encoding() != base.encoding() || r.nss() != base.nss() || r.bandwidth() != base.bandwidth() {
                return Err(bad(
                    "rate_schedule",
                    format!("entry {k}: the channel's rates keep the station's family, streams and width"),
                ));
            }
            steps.push((secs_to_ns(*t), r));
        }
        if let Some((from, to, mcs)) = s.walk_away {
            if !(from >= 0.0 && to > from && to.is_finite()) {
                return Err(bad("walk_away", format!("[{from}, {to}, ..] is not a span from >= 0 to a later time")));
            }
            let floor = link::rate_set(base).first().and_then(|r| r.mcs()).unwrap_or(0);
            if base.mcs().is_none_or(|top| mcs >= top) || mcs < floor {
                return Err(bad(
                    "walk_away",
                    format!("MCS {mcs} is not below the station's rate, within its streams (from MCS {floor})"),
                ));
            }
            if !s.rate_schedule.is_empty() {
                return Err(bad("walk_away", "give either `rate_schedule` or `walk_away`, not both".into()));
            }
            steps = link::walk_away(base, secs_to_ns(from), secs_to_ns(to), mcs);
        }
        steps.sort_by_key(|st| st.0);
        out.push(Some(LinkSpec { steps, frame_error_rate: s.frame_error_rate, control: s.rate_control, dynamic }));
    }
    Ok(out)
}
