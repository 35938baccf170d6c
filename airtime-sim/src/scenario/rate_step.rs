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

#[cfg(test)]
mod tests {
    use crate::scenario::parse;

    fn station(extra: &str) -> String {
        format!(
            "name = \"t\"\nduration_s = 10.0\n[ap]\ndesign = \"ath11k_adapter\"\n[[stations]]\nname = \"a\"\n\
             rate = \"vht80-1ss-mcs9-sgi\"\n{extra}\n[[flows]]\nstation = \"a\"\n"
        )
    }

    #[test]
    fn a_step_resolves_and_bad_ones_say_which_key() {
        let r = parse(&station("step_rate = \"vht80-1ss-mcs0-lgi\"\nstep_s = [2.0, 4.0]"), "t.toml").unwrap();
        let step = r.rate_steps[0].unwrap();
        assert_eq!((step.from_s, step.until_s, step.rate.mcs()), (2.0, 4.0, Some(0)));
        assert_eq!(parse(&station(""), "t.toml").unwrap().rate_steps, vec![None]);
        for (extra, key) in [
            ("step_rate = \"vht80-1ss-mcs0-lgi\"", "step_s"),
            ("step_s = [1.0, 2.0]", "step_rate"),
            ("step_rate = \"vht80-1ss-mcs0-lgi\"\nstep_s = [4.0, 2.0]", "step_s"),
            ("step_rate = \"vht80-1ss-mcs0-lgi\"\nstep_s = [1.0, 20.0]", "step_s"),
            ("step_rate = \"vht80-1ss\"\nstep_s = [1.0, 2.0]", "step_rate"),
        ] {
            let e = parse(&station(extra), "t.toml").unwrap_err().to_string();
            assert!(e.contains(&format!("stations[0].{key}")), "{extra}: {e}");
        }
    }
}
