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
}
