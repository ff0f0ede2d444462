//! The operation sequence of a run: YCSB's `CoreWorkload` choosing each operation's type,
//! record, scan length and field with YCSB's generators, from a seed.

use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

use super::generators::{
    self, Hotspot, ScrambledZipfian, Sequential, SkewedLatest, Uniform, Zipfian,
};
use super::workload::{Distribution, ScanLength, Workload};

impl Workload {
    /// The operation sequence of one run, on a store holding records `0..present` (the
    /// load's, and the inserts of the runs before): `operationcount` operations drawn with
    /// YCSB's generators from `seed`. Reads, updates and scans only name records already
    /// inserted, as YCSB's acknowledged counter has them; inserts take the next numbers.
    pub fn operations(&self, present: i64, seed: u64) -> Vec<Op> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // One stream per workload, so that two workloads of one seed differ.
        rng.set_stream(self.name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        }));
        let start = self.insert_start as i64;
        let keys = self.key_count() as i64;
        let p = self.proportions;
        let expected_inserts = (self.operation_count as f64 * p.insert * 2.0) as i64;
        let mut chooser = match self.distribution {
            Distribution::Uniform => Chooser::Uniform(Uniform::new(start, start + keys - 1)),
            Distribution::Zipfian => Chooser::Zipfian(ScrambledZipfian::new(
                start,
                start + keys + expected_inserts,
            )),
            Distribution::Latest => Chooser::Latest(SkewedLatest::new(present - 1)),
            Distribution::Hotspot => Chooser::Hotspot(Hotspot::new(
                start,
                start + keys - 1,
                self.hotspot_data_fraction,
                self.hotspot_opn_fraction,
            )),
            Distribution::Sequential => {
                Chooser::Sequential(Sequential::new(start, start + keys - 1))
            }
        };
        let (min_scan, max_scan) = (self.min_scan_length as i64, self.max_scan_length as i64);
        let mut scan_length = match self.scan_length {
            ScanLength::Uniform => ScanChooser::Uniform(Uniform::new(min_scan, max_scan)),
            ScanLength::Zipfian => ScanChooser::Zipfian(Zipfian::new(min_scan, max_scan)),
        };
        let fields = Uniform::new(0, i64::from(self.field_count) - 1);
        let weights = [
            (p.read, OpKind::Read),
            (p.update, OpKind::Update),
            (p.insert, OpKind::Insert),
            (p.scan, OpKind::Scan),
            (p.read_modify_write, OpKind::ReadModifyWrite),
        ];
        let mut next_insert = present;
        let mut ops = Vec::with_capacity(self.operation_count as usize);
        for _ in 0..self.operation_count {
            // YCSB's DiscreteGenerator: the first kind whose share covers the draw.
            let mut draw = generators::next_f64(&mut rng);
            let kind = weights
                .iter()
                .filter(|(w, _)| *w > 0.0)
                .find(|(w, _)| {
                    let hit = draw < *w;
                    draw -= *w;
                    hit
                })
                .or_else(|| weights.iter().rev().find(|(w, _)| *w > 0.0))
                .map(|&(_, k)| k)
                .expect("the proportions sum to 1");
            let last = next_insert - 1;
            let one_field =
                |rng: &mut ChaCha8Rng, all: bool| (!all).then(|| fields.next(rng) as u16);
            let op = match kind {
                OpKind::Read => {
                    let key = chooser.key(&mut rng, last);
                    Op::Read {
                        key,
                        field: one_field(&mut rng, self.read_all_fields),
                    }
                }
                OpKind::Update => {
                    let key = chooser.key(&mut rng, last);
                    Op::Update {
                        key,
                        field: one_field(&mut rng, self.write_all_fields),
                    }
                }
                OpKind::Insert => {
                    next_insert += 1;
                    Op::Insert { key: last + 1 }
                }
                OpKind::Scan => {
                    let start = chooser.key(&mut rng, last);
                    let len = scan_length.next(&mut rng) as u32;
                    Op::Scan {
                        start,
                        len,
                        field: one_field(&mut rng, self.read_all_fields),
                    }
                }
                OpKind::ReadModifyWrite => {
                    let key = chooser.key(&mut rng, last);
                    let read_field = one_field(&mut rng, self.read_all_fields);
                    Op::ReadModifyWrite {
                        key,
                        read_field,
                        write_field: one_field(&mut rng, self.write_all_fields),
                    }
                }
            };
            ops.push(op);
        }
        ops
    }
}

/// The record chooser of a run, with YCSB's rule that a record not inserted yet is drawn
/// again.
enum Chooser {
    Uniform(Uniform),
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
    Hotspot(Hotspot),
    Sequential(Sequential),
}

impl Chooser {
    /// A record number at most `last`.
    fn key(&mut self, rng: &mut ChaCha8Rng, last: i64) -> i64 {
        loop {
            let key = match self {
                Chooser::Uniform(g) => g.next(rng),
                Chooser::Zipfian(g) => g.next(rng),
                Chooser::Latest(g) => g.next(rng, last),
                Chooser::Hotspot(g) => g.next(rng),
                Chooser::Sequential(g) => g.next_value(),
            };
            // YCSB truncates to an int, then refuses numbers beyond the last insert.
            let key = i64::from(key as i32);
            if key <= last {
                return key;
            }
        }
    }
}

enum ScanChooser {
    Uniform(Uniform),
    Zipfian(Zipfian),
}

impl ScanChooser {
    fn next(&mut self, rng: &mut ChaCha8Rng) -> i64 {
        match self {
            ScanChooser::Uniform(g) => g.next(rng),
            ScanChooser::Zipfian(g) => g.next(rng),
        }
    }
}

/// The kinds of operation, as YCSB names them in its reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpKind {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
}

impl OpKind {
    pub const ALL: [OpKind; 5] = [
        OpKind::Read,
        OpKind::Update,
        OpKind::Insert,
        OpKind::Scan,
        OpKind::ReadModifyWrite,
    ];

    /// YCSB's name (`READ`, `READ-MODIFY-WRITE`).
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "READ",
            OpKind::Update => "UPDATE",
            OpKind::Insert => "INSERT",
            OpKind::Scan => "SCAN",
            OpKind::ReadModifyWrite => "READ-MODIFY-WRITE",
        }
    }
}

/// One operation of a run, on record numbers (the key is [`Workload::key_name`]). A field
/// of `None` is every field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read {
        key: i64,
        field: Option<u16>,
    },
    Update {
        key: i64,
        field: Option<u16>,
    },
    Insert {
        key: i64,
    },
    Scan {
        start: i64,
        len: u32,
        field: Option<u16>,
    },
    ReadModifyWrite {
        key: i64,
        read_field: Option<u16>,
        write_field: Option<u16>,
    },
}

impl Op {
    pub fn kind(self) -> OpKind {
        match self {
            Op::Read { .. } => OpKind::Read,
            Op::Update { .. } => OpKind::Update,
            Op::Insert { .. } => OpKind::Insert,
            Op::Scan { .. } => OpKind::Scan,
            Op::ReadModifyWrite { .. } => OpKind::ReadModifyWrite,
        }
    }
}
