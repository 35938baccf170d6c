//! Small statistics helpers.

/// The `q` quantile (0..=1) of `v` by nearest rank; 0 for an empty slice.
pub fn quantile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let idx = ((q * (v.len() - 1) as f64).round() as usize).min(v.len() - 1);
    v[idx]
}

/// The `q` quantile (0..=1) by nearest rank of `zeros` zeros and the non-negative
/// values `v`, as [`quantile`] of them all would give; 0 when there is nothing.
pub fn quantile_above_zeros(v: &mut [f64], zeros: usize, q: f64) -> f64 {
    let n = v.len() + zeros;
    if n == 0 {
        return 0.0;
    }
    let idx = ((q * (n - 1) as f64).round() as usize).min(n - 1);
    if idx < zeros {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[idx - zeros]
}

/// Mean of `v`; 0 for an empty slice.
pub fn mean(v: &[f64]) -> f64 {
    if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 }
}

/// Sample standard deviation of `v` (n - 1 in the denominator); 0 below two values.
pub fn std_dev(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = mean(v);
    (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

/// Two-sided 95 % quantiles of Student's t for 1..=30 degrees of freedom (any
/// statistics table, e.g. NIST/SEMATECH e-Handbook of Statistical Methods, table 1.3.6.7.2).
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
    2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/// Half-width of the t-based 95 % confidence interval of the mean of `v` (the runs of
/// an arm, each its own seed); `None` below two values.
pub fn ci95_half_width(v: &[f64]) -> Option<f64> {
    let n = v.len();
    if n < 2 {
        return None;
    }
    let t = T_975.get(n - 2).copied().unwrap_or_else(|| t_975_expansion((n - 1) as f64));
    Some(t * std_dev(v) / (n as f64).sqrt())
}

/// Student's t 97.5 % quantile for `df` degrees of freedom by its Cornish-Fisher
/// expansion about the normal quantile to the `df^-3` term (Abramowitz and Stegun
/// 26.7.5): within 0.0005 of the table from 31 up (2.040 at 31, 2.000 at 60, 1.980 at
/// 120), where the normal quantile alone (1.960) is 4 % short at 31.
fn t_975_expansion(df: f64) -> f64 {
    let z: f64 = 1.959_963_985;
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    z + (z3 + z) / (4.0 * df)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * df * df)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * df.powi(3))
}

/// Jain's fairness index of `v`: (sum x)^2 / (n sum x^2), 1 for equal shares and 1/n
/// when one takes all (R. Jain, D. Chiu, W. Hawe, "A Quantitative Measure of Fairness
/// and Discrimination for Resource Allocation in Shared Computer Systems", DEC-TR-301,
/// 1984); `None` for no values or all zero.
pub fn jain_index(v: &[f64]) -> Option<f64> {
    let sum: f64 = v.iter().sum();
    let sq: f64 = v.iter().map(|x| x * x).sum();
    (sq > 0.0).then(|| sum * sum / (v.len() as f64 * sq))
}

/// Keeps at most `n` evenly spaced elements.
pub fn thin<T: Copy>(v: &[T], n: usize) -> Vec<T> {
    if v.len() <= n || n == 0 {
        return v.to_vec();
    }
    (0..n).map(|i| v[i * v.len() / n]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_by_nearest_rank() {
        let mut v = vec![5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(quantile(&mut v, 0.5), 3.0);
        assert_eq!(quantile(&mut v, 1.0), 5.0);
        assert_eq!(quantile(&mut [], 0.5), 0.0);
        assert_eq!(mean(&[1.0, 3.0]), 2.0);
        assert_eq!(thin(&[1, 2, 3, 4], 2), vec![1, 3]);
        for zeros in 0..5 {
            let mut all: Vec<f64> = vec![0.0; zeros];
            all.extend([4.0, 1.0, 3.0]);
            for q in [0.0, 0.5, 0.99, 1.0] {
                assert_eq!(quantile_above_zeros(&mut [4.0, 1.0, 3.0], zeros, q), quantile(&mut all, q), "{zeros} {q}");
            }
        }
        assert_eq!(quantile_above_zeros(&mut [], 0, 0.5), 0.0);
    }

    #[test]
    fn beyond_the_table_t_follows_its_expansion_not_the_normal_quantile() {
        // Tabulated t(0.975): df 31 2.0395, 40 2.0211, 60 2.0003, 120 1.9799.
        for (df, t) in [(30.0, 2.0423), (31.0, 2.0395), (40.0, 2.0211), (60.0, 2.0003), (120.0, 1.9799)] {
            assert!((t_975_expansion(df) - t).abs() < 5e-4, "df {df}: {}", t_975_expansion(df));
        }
        // 32 runs: 31 degrees of freedom, no longer 1.96.
        let v: Vec<f64> = (0..32).map(f64::from).collect();
        let want = 2.0395 * std_dev(&v) / 32f64.sqrt();
        assert!((ci95_half_width(&v).unwrap() - want).abs() < 1e-3 * want);
    }

    #[test]
    fn jain_is_one_for_equal_shares_and_one_over_n_when_one_takes_all() {
        assert_eq!(jain_index(&[25.0; 4]), Some(1.0));
        assert_eq!(jain_index(&[100.0, 0.0, 0.0, 0.0]), Some(0.25));
        let two = jain_index(&[60.0, 40.0]).unwrap();
        assert!((two - 100.0 * 100.0 / (2.0 * (3600.0 + 1600.0))).abs() < 1e-12);
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[0.0, 0.0]), None);
    }

    #[test]
    fn the_95_percent_interval_uses_students_t() {
        assert_eq!(ci95_half_width(&[1.0]), None);
        // Three runs: t(2) = 4.303, s = 1, n = 3.
        let h = ci95_half_width(&[1.0, 2.0, 3.0]).unwrap();
        assert!((h - 4.303 / 3f64.sqrt()).abs() < 1e-9, "{h}");
        assert_eq!(ci95_half_width(&[5.0, 5.0, 5.0]), Some(0.0));
        let many: Vec<f64> = (0..100).map(f64::from).collect();
        let h = ci95_half_width(&many).unwrap();
        // 99 degrees of freedom: t = 1.9842 (the normal 1.960 was used here before).
        assert!((h - 1.9842 * std_dev(&many) / 10.0).abs() < 5e-4 * h, "{h}");
    }
}
