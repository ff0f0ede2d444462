//! YCSB's number generators, as its core package defines them (`site.ycsb.generator`), over
//! a seeded ChaCha8 so that every store gets the same sequence: zipfian (Gray et al.'s
//! method, with YCSB's incremental zeta), scrambled zipfian (the popular items spread over
//! the key space by FNV-64), skewed latest, hotspot, uniform and sequential; YCSB's FNV-64
//! key hash.

use rand_chacha::ChaCha8Rng;
use rand_core::Rng;

/// YCSB's zipfian constant.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;

/// The item count of the zipfian that `ScrambledZipfianGenerator` scrambles, and its zeta
/// for [`ZIPFIAN_CONSTANT`], precomputed by YCSB.
pub const SCRAMBLED_ITEM_COUNT: i64 = 10_000_000_000;
pub const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

/// YCSB's `Utils.fnvhash64`: FNV over the 8 bytes of `val`, low byte first, then the
/// absolute value (as Java's `Math.abs`, which leaves `i64::MIN` as it is).
pub fn fnv_hash64(mut val: i64) -> i64 {
    const OFFSET_BASIS: i64 = 0xCBF2_9CE4_8422_2325_u64 as i64;
    const PRIME: i64 = 1_099_511_628_211;
    let mut hash = OFFSET_BASIS;
    for _ in 0..8 {
        let octet = val & 0xff;
        val >>= 8;
        hash ^= octet;
        hash = hash.wrapping_mul(PRIME);
    }
    hash.wrapping_abs()
}

/// A uniform double in [0, 1), as Java's `Random.nextDouble` (53 random bits).
pub fn next_f64(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform draw from `0..bound` (Lemire's multiply-and-reject; no modulo bias).
pub fn below(rng: &mut ChaCha8Rng, bound: u64) -> u64 {
    debug_assert!(bound > 0);
    let threshold = bound.wrapping_neg() % bound;
    loop {
        let m = u128::from(rng.next_u64()) * u128::from(bound);
        if (m as u64) >= threshold {
            return (m >> 64) as u64;
        }
    }
}

/// The sum of `1 / i^theta` for `i` from `st + 1` to `n`, added to `initial`.
pub fn zeta(st: i64, n: i64, theta: f64, initial: f64) -> f64 {
    (st..n).fold(initial, |sum, i| sum + 1.0 / ((i + 1) as f64).powf(theta))
}

/// YCSB's `ZipfianGenerator`: items `base..base + items`, the first the most popular.
#[derive(Debug, Clone)]
pub struct Zipfian {
    items: i64,
    base: i64,
    theta: f64,
    zeta2theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    count_for_zeta: i64,
}

impl Zipfian {
    /// Items `min..=max` with [`ZIPFIAN_CONSTANT`] (zeta computed, O(items)).
    pub fn new(min: i64, max: i64) -> Self {
        Self::with_zetan(
            min,
            max,
            ZIPFIAN_CONSTANT,
            zeta(0, max - min + 1, ZIPFIAN_CONSTANT, 0.0),
        )
    }

    /// Items `min..=max` with a precomputed zeta of their count.
    pub fn with_zetan(min: i64, max: i64, theta: f64, zetan: f64) -> Self {
        let items = max - min + 1;
        let zeta2theta = zeta(0, 2, theta, 0.0);
        Zipfian {
            items,
            base: min,
            theta,
            zeta2theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2theta / zetan),
            count_for_zeta: items,
        }
    }

    /// The next item among the first `item_count` (YCSB's `nextLong(itemcount)`: zeta is
    /// extended incrementally when the count grows, and, as in YCSB, never shrunk).
    pub fn next_of(&mut self, rng: &mut ChaCha8Rng, item_count: i64) -> i64 {
        if item_count > self.count_for_zeta {
            self.zetan = zeta(self.count_for_zeta, item_count, self.theta, self.zetan);
            self.count_for_zeta = item_count;
            self.eta = (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta))
                / (1.0 - self.zeta2theta / self.zetan);
        }
        let u = next_f64(rng);
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return self.base + 1;
        }
        self.base + (item_count as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as i64
    }

    /// The next item (YCSB's `nextValue`).
    pub fn next(&mut self, rng: &mut ChaCha8Rng) -> i64 {
        self.next_of(rng, self.items)
    }
}

/// YCSB's `ScrambledZipfianGenerator`: a zipfian over ten billion items, hashed into
/// `min..=max`, so that the popular items are spread over the key space.
#[derive(Debug, Clone)]
pub struct ScrambledZipfian {
    min: i64,
    item_count: i64,
    zipfian: Zipfian,
}

impl ScrambledZipfian {
    pub fn new(min: i64, max: i64) -> Self {
        ScrambledZipfian {
            min,
            item_count: max - min + 1,
            zipfian: Zipfian::with_zetan(
                0,
                SCRAMBLED_ITEM_COUNT,
                ZIPFIAN_CONSTANT,
                SCRAMBLED_ZETAN,
            ),
        }
    }

    pub fn next(&mut self, rng: &mut ChaCha8Rng) -> i64 {
        let item = self.zipfian.next(rng);
        self.min + fnv_hash64(item) % self.item_count
    }
}

/// YCSB's `SkewedLatestGenerator`: the most recently inserted items the most popular.
#[derive(Debug, Clone)]
pub struct SkewedLatest {
    zipfian: Zipfian,
}

impl SkewedLatest {
    /// For a key sequence whose last value is `last`.
    pub fn new(last: i64) -> Self {
        SkewedLatest {
            zipfian: Zipfian::new(0, last - 1),
        }
    }

    /// The next item, `last` being the key sequence's last value now.
    pub fn next(&mut self, rng: &mut ChaCha8Rng, last: i64) -> i64 {
        last - self.zipfian.next_of(rng, last)
    }
}

/// YCSB's `HotspotIntegerGenerator`: a fraction of the operations on a fraction of the items
/// (the hot set, the lowest items), both uniform.
#[derive(Debug, Clone)]
pub struct Hotspot {
    lower: i64,
    hot_interval: i64,
    cold_interval: i64,
    hot_opn_fraction: f64,
}

impl Hotspot {
    pub fn new(lower: i64, upper: i64, hot_set_fraction: f64, hot_opn_fraction: f64) -> Self {
        let interval = upper - lower + 1;
        let hot_interval = (interval as f64 * hot_set_fraction) as i32 as i64;
        Hotspot {
            lower,
            hot_interval,
            cold_interval: interval - hot_interval,
            hot_opn_fraction,
        }
    }

    pub fn next(&mut self, rng: &mut ChaCha8Rng) -> i64 {
        let hot = next_f64(rng) < self.hot_opn_fraction && self.hot_interval > 0;
        if hot || self.cold_interval == 0 {
            self.lower + below(rng, self.hot_interval.max(1) as u64) as i64
        } else {
            self.lower + self.hot_interval + below(rng, self.cold_interval as u64) as i64
        }
    }
}

/// YCSB's `UniformLongGenerator`: items `lower..=upper`, each as likely.
#[derive(Debug, Clone, Copy)]
pub struct Uniform {
    lower: i64,
    count: u64,
}

impl Uniform {
    pub fn new(lower: i64, upper: i64) -> Self {
        Uniform {
            lower,
            count: (upper - lower + 1) as u64,
        }
    }

    pub fn next(&self, rng: &mut ChaCha8Rng) -> i64 {
        self.lower + below(rng, self.count) as i64
    }
}

/// YCSB's `SequentialGenerator`: `start`, `start + 1`, ... `end`, then `start` again.
#[derive(Debug, Clone, Copy)]
pub struct Sequential {
    start: i64,
    interval: i64,
    counter: i64,
}

impl Sequential {
    pub fn new(start: i64, end: i64) -> Self {
        Sequential {
            start,
            interval: end - start + 1,
            counter: 0,
        }
    }

    pub fn next_value(&mut self) -> i64 {
        let value = self.start + self.counter % self.interval;
        self.counter += 1;
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use std::collections::HashMap;

    fn rng() -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(99)
    }

    /// Draws `n` items and counts them.
    fn counts(n: usize, mut draw: impl FnMut() -> i64) -> HashMap<i64, usize> {
        let mut counts = HashMap::new();
        for _ in 0..n {
            *counts.entry(draw()).or_default() += 1;
        }
        counts
    }

    #[test]
    fn fnv_is_ycsbs() {
        // Every YCSB load in hashed order starts with the keys user6284781860667377211 and
        // user8517097267634966620 (records 0 and 1), as its logs show.
        assert_eq!(fnv_hash64(0), 6_284_781_860_667_377_211);
        assert_eq!(fnv_hash64(1), 8_517_097_267_634_966_620);
        assert!((0..10_000).all(|k| fnv_hash64(k) >= 0));
    }

    #[test]
    fn zeta_is_the_sum_of_its_definition() {
        assert_eq!(zeta(0, 1, 0.99, 0.0), 1.0);
        let direct: f64 = (1..=1000).map(|i| 1.0 / (i as f64).powf(0.99)).sum();
        assert!((zeta(0, 1000, 0.99, 0.0) - direct).abs() < 1e-12);
        // Incrementally the same.
        let half = zeta(0, 500, 0.99, 0.0);
        assert!((zeta(500, 1000, 0.99, half) - direct).abs() < 1e-9);
    }

    /// Items 0 and 1 are drawn with their zipf probability exactly, (1/(i+1)^0.99) /
    /// zeta(n, 0.99); beyond them Gray et al.'s method follows the zipf curve
    /// approximately: popularity falls with rank, by about rank^-0.99.
    #[test]
    fn zipfian_frequencies_follow_their_definition() {
        let n = 1000;
        let mut r = rng();
        let mut z = Zipfian::new(0, n - 1);
        let draws = 400_000;
        let c = counts(draws, || z.next(&mut r));
        let freq = |item: i64| c.get(&item).copied().unwrap_or(0) as f64 / draws as f64;
        let zetan = zeta(0, n, ZIPFIAN_CONSTANT, 0.0);
        for item in [0_i64, 1] {
            let expected = 1.0 / ((item + 1) as f64).powf(ZIPFIAN_CONSTANT) / zetan;
            let got = freq(item);
            assert!(
                (got - expected).abs() < expected * 0.03,
                "item {item}: {got} against {expected}"
            );
        }
        // The share of items 10..100 over items 100..1000: for a zipf of 0.99 about 1.
        let share = |a: i64, b: i64| (a..b).map(freq).sum::<f64>();
        let ratio = share(10, 100) / share(100, 1000);
        assert!((0.8..1.25).contains(&ratio), "{ratio}");
        assert!(freq(2) > freq(20) && freq(20) > freq(200));
        assert!(c.keys().all(|&k| (0..n).contains(&k)));
    }

    /// The scrambled zipfian's most popular item is drawn 1/zeta(10^10, 0.99) of the time
    /// (3.78%), and the popular items are spread over the whole range, not clustered.
    #[test]
    fn scrambled_zipfian_keeps_the_skew_and_spreads_it() {
        let (min, max) = (0_i64, 99_999);
        let mut r = rng();
        let mut z = ScrambledZipfian::new(min, max);
        let draws = 400_000;
        let c = counts(draws, || z.next(&mut r));
        let mut by_count: Vec<(i64, usize)> = c.into_iter().collect();
        by_count.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
        let top = by_count[0].1 as f64 / draws as f64;
        let expected = 1.0 / SCRAMBLED_ZETAN;
        assert!(
            (top - expected).abs() < expected * 0.05,
            "top item {top} against {expected}"
        );
        assert_eq!(by_count[0].0, min + fnv_hash64(0) % (max - min + 1));
        // The ten most popular items fall in at least five of the range's ten tenths.
        let tenths: std::collections::HashSet<i64> = by_count[..10]
            .iter()
            .map(|&(k, _)| k * 10 / (max + 1))
            .collect();
        assert!(
            tenths.len() >= 5,
            "popular items clustered: {:?}",
            &by_count[..10]
        );
        assert!(by_count.iter().all(|&(k, _)| (min..=max).contains(&k)));
    }

    #[test]
    fn latest_favours_the_newest_items_and_follows_the_sequence() {
        let mut r = rng();
        let mut latest = SkewedLatest::new(1000);
        let c = counts(100_000, || latest.next(&mut r, 1000));
        let newest = c.get(&1000).copied().unwrap_or(0);
        let old = c.get(&500).copied().unwrap_or(0);
        assert!(newest > 3_000 && newest > 20 * old.max(1), "{newest} {old}");
        assert!(c.keys().all(|&k| (1..=1000).contains(&k)));
        // The sequence grew: the newest item is the new last one.
        let c = counts(50_000, || latest.next(&mut r, 1100));
        assert!(c.get(&1100).copied().unwrap_or(0) > 1_500);
    }

    #[test]
    fn hotspot_sends_its_fraction_to_the_hot_set() {
        let mut r = rng();
        let mut h = Hotspot::new(0, 999, 0.2, 0.8);
        let draws = 100_000;
        let hot = counts(draws, || h.next(&mut r))
            .into_iter()
            .filter(|&(k, _)| k < 200)
            .map(|(_, n)| n)
            .sum::<usize>();
        let share = hot as f64 / draws as f64;
        assert!((share - 0.8).abs() < 0.01, "{share}");
    }

    #[test]
    fn uniform_and_sequential_cover_their_range() {
        let mut r = rng();
        let u = Uniform::new(10, 19);
        let c = counts(50_000, || u.next(&mut r));
        assert_eq!(c.len(), 10);
        assert!(c.values().all(|&n| (4_500..5_500).contains(&n)), "{c:?}");
        let mut s = Sequential::new(5, 7);
        let drawn: Vec<i64> = (0..7).map(|_| s.next_value()).collect();
        assert_eq!(drawn, [5, 6, 7, 5, 6, 7, 5]);
    }
}
