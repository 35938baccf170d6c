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
    }
}
