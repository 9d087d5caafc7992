//! Latency statistics: nearest-rank percentiles over recorded samples (pure).

use serde::{Deserialize, Serialize};

/// The `p`-th percentile (0 < p ≤ 100) of `sorted` by the nearest-rank method: the smallest
/// sample such that at least p % of the samples are ≤ it. `None` for no samples.
///
/// Nearest rank always returns a value that was observed, so a p99 over few samples is the
/// slowest real call rather than an interpolation nobody measured.
pub(crate) fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() || !(p > 0.0 && p <= 100.0) {
        return None;
    }
    let n = sorted.len();
    // The rank is computed in f64, where 99.9 % of 1000 comes out a hair above 999: the
    // tolerance keeps an exact rank exact, and the clamp keeps p = 100 inside the slice.
    let rank = ((p / 100.0) * n as f64 - 1e-9).ceil() as usize;
    Some(sorted[rank.clamp(1, n) - 1])
}

/// Latency percentiles by nearest rank over the successful requests, microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Latency {
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub p999_us: Option<f64>,
    pub max_us: Option<f64>,
}

impl Latency {
    /// Summarises nanosecond samples (any order).
    pub(crate) fn from_nanos(mut samples: Vec<u64>) -> Self {
        samples.sort_unstable();
        let us = |p: f64| percentile(&samples, p).map(|ns| ns as f64 / 1000.0);
        Latency {
            p50_us: us(50.0),
            p99_us: us(99.0),
            p999_us: us(99.9),
            max_us: us(100.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Latency, percentile};

    #[test]
    fn latency_in_microseconds_by_nearest_rank() {
        let l = Latency::from_nanos((1..=1000).map(|i| i * 1000).collect());
        assert_eq!(l.p50_us, Some(500.0));
        assert_eq!(l.p99_us, Some(990.0));
        assert_eq!(l.p999_us, Some(999.0));
        assert_eq!(l.max_us, Some(1000.0));
        assert_eq!(Latency::from_nanos(Vec::new()), Latency::default());
    }

    #[test]
    fn empty_and_out_of_range_give_none() {
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&[1, 2], 0.0), None);
        assert_eq!(percentile(&[1, 2], 101.0), None);
        assert_eq!(percentile(&[1, 2], f64::NAN), None);
    }

    #[test]
    fn nearest_rank_on_hundred_samples() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), Some(50));
        assert_eq!(percentile(&v, 99.0), Some(99));
        assert_eq!(percentile(&v, 100.0), Some(100));
        assert_eq!(percentile(&v, 1.0), Some(1));
    }

    #[test]
    fn exact_ranks_survive_float_rounding() {
        let v: Vec<u64> = (1..=1000).collect();
        assert_eq!(percentile(&v, 99.9), Some(999));
        let v: Vec<u64> = (1..=10_000).collect();
        assert_eq!(percentile(&v, 99.9), Some(9990));
        assert_eq!(percentile(&v, 99.99), Some(9999));
    }

    #[test]
    fn small_samples_pick_observed_values() {
        assert_eq!(percentile(&[7], 50.0), Some(7));
        assert_eq!(percentile(&[7], 99.0), Some(7));
        // Four samples: p50 is the 2nd, p99 the 4th (the slowest).
        assert_eq!(percentile(&[10, 20, 30, 40], 50.0), Some(20));
        assert_eq!(percentile(&[10, 20, 30, 40], 99.0), Some(40));
        assert_eq!(percentile(&[10, 20, 30], 50.0), Some(20));
    }
}
