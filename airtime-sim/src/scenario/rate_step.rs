//! One rate step per station: between two times the station's frames go out (and are
//! reported) at another rate, then at its own again. The least a scenario needs to show
//! how a scheduler follows a link that degrades and recovers (adaptive AQL's rate-drop
//! arm); general rate schedules belong in the rate model.

use super::{StationSpec, rate};
use airtime_est::Rate;

/// A station's rate step, resolved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateStep {
    /// When the step rate starts, in s of simulated time.
    pub from_s: f64,
    /// When the station's own rate comes back, in s.
    pub until_s: f64,
    /// The rate meanwhile, on the air and as reported.
    pub rate: Rate,
}

/// Station `i`'s step from its `step_rate` and `step_s` keys: both or neither, and
/// `0 <= from < until <= duration_s`. The error names the key and what is wrong.
pub fn resolve(i: usize, s: &StationSpec, duration_s: f64) -> Result<Option<RateStep>, (String, String)> {
    let key = |k: &str| format!("stations[{i}].{k}");
    match (&s.step_rate, s.step_s) {
        (None, None) => Ok(None),
        (Some(_), None) => Err((key("step_s"), "`step_rate` needs `step_s = [from, until]`".into())),
        (None, Some(_)) => Err((key("step_rate"), "`step_s` needs a `step_rate`".into())),
        (Some(r), Some([from_s, until_s])) => {
            let rate = rate::parse_rate(r).map_err(|e| (key("step_rate"), e))?;
            if !(from_s >= 0.0 && from_s < until_s && until_s <= duration_s) {
                return Err((
                    key("step_s"),
                    format!("needs 0 <= from < until <= duration_s, not [{from_s}, {until_s}]"),
                ));
            }
            Ok(Some(RateStep { from_s, until_s, rate }))
        }
    }
}
