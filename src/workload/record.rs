//! The benchmark record and its seeded generator.
//!
//! The record follows the original benchmark's schema (kokizzu-benchmark, 2016). Records and
//! the search order come from ChaCha8 seeded with `--seed`. Every draw is made here from the
//! raw 64-bit output with our own unbiased range reduction, so the same seed gives the same
//! records and the same searches on every machine and with every `rand` release.

use std::fmt;
use std::num::NonZeroU64;
use std::str::FromStr;

use chrono::{DateTime, TimeZone, Utc};
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// The table (or key prefix, collection, set) the classic suite owns; a reset drops it and
/// touches nothing else.
pub const TABLE: &str = "dbcompare_records";

/// The seed used when `--seed` is not given.
pub const DEFAULT_SEED: u64 = 2016;

/// Length of `data.name`.
pub const NAME_LEN: usize = 16;

/// Ages are drawn uniformly from `0..AGE_RANGE`.
pub const AGE_RANGE: u64 = 100;

/// The first `created_at`: 2016-03-01T00:00:00Z, the month of the original benchmark.
const EPOCH_SECONDS: i64 = 1_456_790_400;

const ALPHANUMERIC: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// One benchmark document.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Record {
    /// Sequence number over the whole run (1-based).
    pub id: i64,
    /// `"<size>-<i>"`, unique, indexed: the search key.
    pub unique_id: String,
    pub created_by: i64,
    pub updated_by: i64,
    pub deleted_by: i64,
    /// Millisecond precision, so that every store's native time type holds it exactly.
    pub created_at: DateTime<Utc>,
    pub data: Data,
}

/// The nested part of a record.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Data {
    /// 16 random alphanumerics.
    pub name: String,
    /// Random, `>= 0`.
    pub age: i64,
}

/// A workload size: a name (used in `unique_id` and in reports) and a record count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Size {
    pub name: String,
    pub records: u64,
}

impl Size {
    /// The named sizes of the blog (plus `medium`), in order.
    pub const NAMED: [(&'static str, u64); 4] = [
        ("micro", 100),
        ("tiny", 1_000),
        ("small", 10_000),
        ("medium", 100_000),
    ];

    pub fn new(name: impl Into<String>, records: NonZeroU64) -> Self {
        Size {
            name: name.into(),
            records: records.get(),
        }
    }

    /// The blog's three sizes: micro, tiny, small.
    pub fn classic() -> Vec<Size> {
        Self::NAMED[..3]
            .iter()
            .map(|&(name, n)| Size {
                name: name.to_string(),
                records: n,
            })
            .collect()
    }

    /// `unique_id` of the i-th record (1-based) of this size.
    pub fn unique_id(&self, i: u64) -> String {
        let mut id = String::new();
        self.write_unique_id(i, &mut id);
        id
    }

    /// `unique_id` of the i-th record (1-based) into `id`, reusing its buffer.
    pub fn write_unique_id(&self, i: u64, id: &mut String) {
        use std::fmt::Write;
        id.clear();
        let _ = write!(id, "{}-{i}", self.name);
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.name, self.records)
    }
}

/// Why a `--sizes` entry was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SizeError {
    #[error("a size must be a positive number of records (at least 1), not '{0}'")]
    NotPositive(String),
    #[error("'{0}' is neither a size name (micro, tiny, small, medium) nor a number of records")]
    Unknown(String),
    #[error("a size is at most {max} records, not '{0}'", max = u32::MAX)]
    TooLarge(String),
}

impl FromStr for Size {
    type Err = SizeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if let Some(&(name, n)) = Self::NAMED
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(s))
        {
            return Ok(Size {
                name: name.to_string(),
                records: n,
            });
        }
        let digits = s.replace('_', "");
        match digits.parse::<i128>() {
            Ok(n) if n >= 1 && n <= i128::from(u32::MAX) => Ok(Size {
                name: n.to_string(),
                records: n as u64,
            }),
            Ok(n) if n >= 1 => Err(SizeError::TooLarge(s.to_string())),
            Ok(_) => Err(SizeError::NotPositive(s.to_string())),
            Err(_) => Err(SizeError::Unknown(s.to_string())),
        }
    }
}

/// Stable 64-bit FNV-1a, used to derive one RNG stream per size name.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A uniform draw from `0..bound` (Lemire's multiply-and-reject; no modulo bias).
fn below(rng: &mut ChaCha8Rng, bound: u64) -> u64 {
    debug_assert!(bound > 0);
    let threshold = bound.wrapping_neg() % bound;
    loop {
        let m = u128::from(rng.next_u64()) * u128::from(bound);
        if (m as u64) >= threshold {
            return (m >> 64) as u64;
        }
    }
}

fn stream(seed: u64, size: &Size, purpose: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(fnv1a(size.name.as_bytes()) ^ purpose);
    rng
}

impl Record {
    /// An empty record to [`Records::fill`].
    pub fn blank() -> Record {
        Record {
            id: 0,
            unique_id: String::new(),
            created_by: 0,
            updated_by: 0,
            deleted_by: 0,
            created_at: DateTime::UNIX_EPOCH,
            data: Data {
                name: String::new(),
                age: 0,
            },
        }
    }
}

/// Draws the record `i` (1-based) of `size` from `rng` into `r`, reusing its strings.
fn draw(rng: &mut ChaCha8Rng, size: &Size, i: u64, id: i64, r: &mut Record) {
    r.data.name.clear();
    for _ in 0..NAME_LEN {
        r.data
            .name
            .push(char::from(ALPHANUMERIC[below(rng, 62) as usize]));
    }
    r.data.age = below(rng, AGE_RANGE) as i64;
    r.created_by = 1 + below(rng, 1_000) as i64;
    r.updated_by = 1 + below(rng, 1_000) as i64;
    r.deleted_by = below(rng, 1_000) as i64;
    let offset_ms = below(rng, 86_400_000) as i64;
    r.id = id;
    r.created_at = Utc
        .timestamp_millis_opt(EPOCH_SECONDS * 1000 + id * 1000 + offset_ms)
        .single()
        .expect("generated timestamps are in range");
    size.write_unique_id(i, &mut r.unique_id);
}

/// The records of one size, in insertion order, made again from the seed whenever one is
/// needed to insert it, instead of kept: only where each record's draws start in the
/// generator's stream is kept, and the record's digest to check an answer against, 16 bytes
/// a record instead of the record, so the client's memory hardly grows with the number of
/// records. The records are the ones [`generate`] gives.
#[derive(Debug, Clone)]
pub struct Records {
    seed: u64,
    size: Size,
    first_id: i64,
    /// The generator's word position at each record's first draw.
    starts: Vec<u64>,
    /// Each record's [`digest`].
    digests: Vec<u64>,
    /// Each record's [`logical_bytes`].
    logical: Vec<u32>,
}

/// A 64-bit digest of every field of a record (foldhash's quality hasher, fixed seed): two
/// records with equal digests are taken to be equal, a chance of 2^-64 for a wrong answer to
/// pass. Checking an answer this way costs a few hundred instructions; making the record
/// again from the seed, about 1,400 (ChaCha's block function).
pub fn digest(r: &Record) -> u64 {
    use std::hash::BuildHasher;
    const STATE: foldhash::quality::FixedState = foldhash::quality::FixedState::with_seed(2016);
    STATE.hash_one(r)
}

/// The logical size of a record, the same whatever store keeps it: the bytes of its
/// compact JSON text (field names, values and punctuation), what every store is given to
/// keep. Bytes written to storage and the on-disk size are compared with it.
pub fn logical_bytes(r: &Record) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, r).expect("a record is JSON");
    count.0
}

impl Records {
    /// One pass over the stream, to find where each record starts. `first_id` is the `id`
    /// of the first record.
    pub fn new(seed: u64, size: &Size, first_id: i64) -> Self {
        let mut rng = stream(seed, size, 0);
        let mut scratch = Record::blank();
        let mut logical = Vec::with_capacity(size.records as usize);
        let (starts, digests) = (1..=size.records)
            .map(|i| {
                let start = rng.get_word_pos() as u64;
                draw(&mut rng, size, i, first_id + (i as i64 - 1), &mut scratch);
                logical.push(u32::try_from(logical_bytes(&scratch)).unwrap_or(u32::MAX));
                (start, digest(&scratch))
            })
            .unzip();
        Records {
            seed,
            size: size.clone(),
            first_id,
            starts,
            digests,
            logical,
        }
    }

    pub fn len(&self) -> usize {
        self.starts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Makes record `index` (0-based) into `r`, reusing its strings: no allocation once `r`
    /// has held a record.
    pub fn fill(&self, index: usize, r: &mut Record) {
        let mut rng = stream(self.seed, &self.size, 0);
        rng.set_word_pos(u128::from(self.starts[index]));
        let i = index as u64 + 1;
        draw(&mut rng, &self.size, i, self.first_id + index as i64, r);
    }

    /// The `unique_id` of record `index` (0-based) into `id`, reusing its buffer: the key to
    /// search it by, without making the record.
    pub fn unique_id(&self, index: usize, id: &mut String) {
        self.size.write_unique_id(index as u64 + 1, id);
    }

    /// Whether `found` is record `index` (0-based), every field (by its [`digest`]).
    pub fn is(&self, index: usize, found: &Record) -> bool {
        digest(found) == self.digests[index]
    }

    /// The logical bytes of the records at `indexes` (0-based).
    pub fn logical_bytes(&self, indexes: impl Iterator<Item = usize>) -> u64 {
        indexes.map(|i| u64::from(self.logical[i])).sum()
    }

    /// Record `index` (0-based).
    pub fn get(&self, index: usize) -> Record {
        let mut r = Record::blank();
        self.fill(index, &mut r);
        r
    }
}

/// The records of one size, in insertion order. `first_id` is the `id` of the first one.
pub fn generate(seed: u64, size: &Size, first_id: i64) -> Vec<Record> {
    let mut rng = stream(seed, size, 0);
    (1..=size.records)
        .map(|i| {
            let mut r = Record::blank();
            draw(&mut rng, size, i, first_id + (i as i64 - 1), &mut r);
            r
        })
        .collect()
}

/// The search order of one size: `count` uniform random indexes into its records
/// (0-based), drawn as they are needed.
#[derive(Debug, Clone)]
pub struct SearchOrder {
    seed: u64,
    size: Size,
    count: u64,
}

impl SearchOrder {
    pub fn new(seed: u64, size: &Size, count: u64) -> Self {
        SearchOrder {
            seed,
            size: size.clone(),
            count,
        }
    }

    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The indexes, in order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + use<> {
        let mut rng = stream(self.seed, &self.size, 0x5ea4_c4e5);
        let records = self.size.records;
        (0..self.count).map(move |_| below(&mut rng, records) as u32)
    }
}

/// The search order of one size: `count` uniform random indexes into its records (0-based).
pub fn search_order(seed: u64, size: &Size, count: u64) -> Vec<u32> {
    SearchOrder::new(seed, size, count).iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn tiny() -> Size {
        "tiny".parse().unwrap()
    }

    #[test]
    fn a_records_logical_bytes_are_its_json_texts_and_add_up_over_a_share() {
        let size = tiny();
        let all = generate(3, &size, 1);
        let records = Records::new(3, &size, 1);
        let json = |r: &Record| serde_json::to_string(r).unwrap().len() as u64;
        assert_eq!(logical_bytes(&all[0]), json(&all[0]));
        let every_third: u64 = all.iter().step_by(3).map(json).sum();
        assert_eq!(
            records.logical_bytes((0..all.len()).step_by(3)),
            every_third
        );
        assert!(every_third > 100 * (all.len() as u64 / 3));
    }

    #[test]
    fn same_seed_same_records_and_searches() {
        assert_eq!(generate(7, &tiny(), 1), generate(7, &tiny(), 1));
        assert_eq!(search_order(7, &tiny(), 500), search_order(7, &tiny(), 500));
    }

    /// A record made again from its place in the stream is the record the one pass made,
    /// for every record, whatever order they are asked for in.
    #[test]
    fn records_made_again_are_the_generated_ones() {
        let size = tiny();
        let all = generate(9, &size, 41);
        let records = Records::new(9, &size, 41);
        assert_eq!(records.len(), all.len());
        let mut r = Record::blank();
        for index in search_order(9, &size, 3_000) {
            records.fill(index as usize, &mut r);
            assert_eq!(r, all[index as usize]);
        }
        for (index, expected) in all.iter().enumerate() {
            assert_eq!(&records.get(index), expected);
        }
    }

    /// An answer is checked by its digest: the record itself passes, and a change to any one
    /// field, or the neighbour's record, does not; the key is the record's own.
    #[test]
    fn answers_are_checked_field_by_field() {
        let size = tiny();
        let records = Records::new(9, &size, 41);
        let mut id = String::new();
        for index in [0, 1, 500, 999] {
            let right = records.get(index);
            assert!(records.is(index, &right));
            records.unique_id(index, &mut id);
            assert_eq!(id, right.unique_id);
            let mut wrong = vec![records.get(if index == 0 { 1 } else { index - 1 })];
            let edits: [fn(&mut Record); 8] = [
                |r| r.id += 1,
                |r| r.unique_id.push('0'),
                |r| r.created_by += 1,
                |r| r.updated_by += 1,
                |r| r.deleted_by += 1,
                |r| r.created_at += chrono::Duration::milliseconds(1),
                |r| r.data.name.replace_range(0..1, "_"),
                |r| r.data.age += 1,
            ];
            for edit in edits {
                let mut r = right.clone();
                edit(&mut r);
                wrong.push(r);
            }
            for r in wrong {
                assert!(!records.is(index, &r), "{r:?} passed for {right:?}");
            }
        }
    }

    #[test]
    fn different_seeds_differ() {
        let a = generate(7, &tiny(), 1);
        let b = generate(8, &tiny(), 1);
        assert_eq!(a.len(), b.len());
        let same = a.iter().zip(&b).filter(|(x, y)| x.data == y.data).count();
        assert_eq!(same, 0, "two seeds gave {same} identical data fields");
        assert_ne!(search_order(7, &tiny(), 500), search_order(8, &tiny(), 500));
    }

    #[test]
    fn unique_ids_are_unique_and_named_after_the_size() {
        let records = generate(1, &"small".parse().unwrap(), 1);
        let ids: HashSet<_> = records.iter().map(|r| r.unique_id.as_str()).collect();
        assert_eq!(ids.len(), 10_000);
        assert_eq!(records[0].unique_id, "small-1");
        assert_eq!(records[9_999].unique_id, "small-10000");
        assert_eq!(records[9_999].id, 10_000);
    }

    #[test]
    fn fields_are_in_range() {
        for r in generate(3, &tiny(), 101) {
            assert_eq!(r.data.name.len(), NAME_LEN);
            assert!(r.data.name.bytes().all(|b| b.is_ascii_alphanumeric()));
            assert!((0..AGE_RANGE as i64).contains(&r.data.age));
            assert_eq!(r.created_at.timestamp_subsec_micros() % 1000, 0);
        }
    }

    #[test]
    fn searches_cover_the_size_uniformly() {
        let size = tiny();
        let order = search_order(5, &size, 40_000);
        let mut hits = vec![0u32; 1000];
        for &i in &order {
            hits[i as usize] += 1;
        }
        // 40 expected per record; a Poisson(40) tail below 10 or above 90 means a broken draw.
        assert!(hits.iter().all(|&h| (10..=90).contains(&h)), "{hits:?}");
    }

    /// The generator's output is part of the project's contract: results are only comparable
    /// between runs (and machines) if seed 2016 still gives this record.
    #[test]
    fn generator_output_is_stable() {
        let r = &generate(DEFAULT_SEED, &"micro".parse().unwrap(), 1)[0];
        insta::assert_json_snapshot!(r);
        insta::assert_debug_snapshot!(&search_order(DEFAULT_SEED, &"micro".parse().unwrap(), 8));
    }

    #[test]
    fn sizes_parse_names_and_numbers() {
        assert_eq!("Micro".parse::<Size>().unwrap().records, 100);
        assert_eq!("medium".parse::<Size>().unwrap().records, 100_000);
        let n: Size = "2_500".parse().unwrap();
        assert_eq!((n.name.as_str(), n.records), ("2500", 2500));
        assert!(matches!(
            "0".parse::<Size>(),
            Err(SizeError::NotPositive(_))
        ));
        assert!(matches!(
            "-5".parse::<Size>(),
            Err(SizeError::NotPositive(_))
        ));
        assert!(matches!("huge".parse::<Size>(), Err(SizeError::Unknown(_))));
        assert_eq!(
            "4294967296".parse::<Size>().unwrap_err().to_string(),
            "a size is at most 4294967295 records, not '4294967296'"
        );
        assert_eq!("4294967295".parse::<Size>().unwrap().records, 4_294_967_295);
    }
}
