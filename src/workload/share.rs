//! One load client's share of a workload run by several (`--client K/N`): the `K`-th of
//! every `N` records to insert and of every `N` searches, so that the shares are disjoint
//! and together make the whole workload, with the same seed.

use std::fmt;
use std::str::FromStr;

/// Share `index` (0-based) of `count`; `0/1` is the whole workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Share {
    index: u32,
    count: u32,
}

/// The most load clients one run may be split over.
pub const MAX_SHARES: u32 = 1024;

impl Share {
    /// The whole workload: one client.
    pub const WHOLE: Share = Share { index: 0, count: 1 };

    /// Share `k` (1-based, as on the command line) of `n`.
    pub fn new(k: u32, n: u32) -> Result<Share, String> {
        if n == 0 || n > MAX_SHARES {
            return Err(format!("{k}/{n}: the clients are 1 to {MAX_SHARES}"));
        }
        if k == 0 || k > n {
            return Err(format!("{k}/{n}: K is 1 to {n}"));
        }
        Ok(Share {
            index: k - 1,
            count: n,
        })
    }

    /// K, from 1.
    pub fn number(self) -> u32 {
        self.index + 1
    }

    /// N.
    pub fn count(self) -> u32 {
        self.count
    }

    /// Whether this is the first share (the one that resets the store and measures its
    /// size) or the whole workload.
    pub fn is_first(self) -> bool {
        self.index == 0
    }

    /// This share's items of `items`: the `K`-th, then every `N`-th after it.
    pub fn of<I: Iterator>(self, items: I) -> std::iter::StepBy<std::iter::Skip<I>> {
        items.skip(self.index as usize).step_by(self.count as usize)
    }

    /// How many of `total` items are this share's.
    pub fn len_of(self, total: u64) -> u64 {
        let (n, k) = (u64::from(self.count), u64::from(self.index));
        total / n + u64::from(total % n > k)
    }
}

impl fmt::Display for Share {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.number(), self.count)
    }
}

impl FromStr for Share {
    type Err = String;

    /// `K/N`, for example `2/4`.
    fn from_str(s: &str) -> Result<Share, String> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}`: K/N, two whole numbers, for example 2/4"))?;
        let number = |v: &str| {
            v.trim()
                .parse::<u32>()
                .map_err(|_| format!("`{s}`: K/N, two whole numbers, for example 2/4"))
        };
        Share::new(number(k)?, number(n)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn shares_read_as_k_of_n() {
        assert_eq!("2/4".parse::<Share>().unwrap().to_string(), "2/4");
        assert!("2/4".parse::<Share>().unwrap().number() == 2);
        assert!("1/1".parse::<Share>().unwrap().is_first());
        for bad in ["0/2", "3/2", "1/0", "2", "a/b", "1/2000", ""] {
            assert!(bad.parse::<Share>().is_err(), "{bad}");
        }
    }

    proptest! {
        /// The shares of a workload are disjoint and together are all of it, in order.
        #[test]
        fn shares_partition_every_workload(n in 1u32..12, total in 0u64..200) {
            let mut seen: Vec<u64> = Vec::new();
            for k in 1..=n {
                let share = Share::new(k, n).unwrap();
                let mine: Vec<u64> = share.of(0..total).collect();
                prop_assert_eq!(mine.len() as u64, share.len_of(total));
                prop_assert!(mine.windows(2).all(|w| w[0] < w[1]));
                seen.extend(mine);
            }
            seen.sort_unstable();
            prop_assert_eq!(seen, (0..total).collect::<Vec<_>>());
        }
    }
}
