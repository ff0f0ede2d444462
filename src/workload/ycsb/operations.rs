//! The operations of a run: YCSB's `CoreWorkload` choosing each operation's type, record,
//! scan length and field with YCSB's generators, from a seed, one operation at a time over
//! the records whose insert is acknowledged.

use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

use super::generators::{
    self, Hotspot, ScrambledZipfian, Sequential, SkewedLatest, Uniform, Zipfian,
};
use super::workload::{Distribution, ScanLength, Workload};

impl Workload {
    /// The operation sequence of one run, on a store holding records `0..present` (the
    /// load's, and the inserts of the runs before), as one connection makes it:
    /// `operationcount` operations drawn with YCSB's generators from `seed`, each insert
    /// acknowledged before the next operation is drawn (see [`Draw`]).
    pub fn operations(&self, present: i64, seed: u64) -> Vec<Op> {
        let mut draw = self.draw(present, seed);
        (0..self.operation_count)
            .map(|_| {
                let last = draw.issued() - 1;
                draw.next(last)
            })
            .collect()
    }

    /// The generator of one run's operations, on a store holding records `0..present`,
    /// from `seed`: each operation is drawn when it is made (see [`Draw::next`]).
    pub fn draw(&self, present: i64, seed: u64) -> Draw {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // One stream per workload, so that two workloads of one seed differ.
        rng.set_stream(self.name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        }));
        let start = self.insert_start as i64;
        let keys = self.key_count() as i64;
        let p = self.proportions;
        let expected_inserts = (self.operation_count as f64 * p.insert * 2.0) as i64;
        let chooser = match self.distribution {
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
        let scan_length = match self.scan_length {
            ScanLength::Uniform => ScanChooser::Uniform(Uniform::new(min_scan, max_scan)),
            ScanLength::Zipfian => ScanChooser::Zipfian(Zipfian::new(min_scan, max_scan)),
        };
        Draw {
            rng,
            chooser,
            scan_length,
            fields: Uniform::new(0, i64::from(self.field_count) - 1),
            weights: [
                (p.read, OpKind::Read),
                (p.update, OpKind::Update),
                (p.insert, OpKind::Insert),
                (p.scan, OpKind::Scan),
                (p.read_modify_write, OpKind::ReadModifyWrite),
            ],
            read_all_fields: self.read_all_fields,
            write_all_fields: self.write_all_fields,
            next_insert: present,
            insert_stride: 1,
            inserts: 0,
        }
    }
}

/// The operations of one run, drawn one at a time as YCSB's `CoreWorkload` draws them: the
/// operation type, then the record among those whose insert is acknowledged (YCSB's
/// `AcknowledgedCounterGenerator`), the scan length and the field. An insert takes the next
/// record number, whether or not the inserts before it are acknowledged yet.
pub struct Draw {
    rng: ChaCha8Rng,
    chooser: Chooser,
    scan_length: ScanChooser,
    fields: Uniform,
    weights: [(f64, OpKind); 5],
    read_all_fields: bool,
    write_all_fields: bool,
    next_insert: i64,
    /// Between two record numbers this draw inserts (1, or the load clients sharing a run).
    insert_stride: i64,
    /// Inserts drawn so far.
    inserts: u64,
}

impl Draw {
    /// The same draw inserting records `first`, `first + stride`, ... (one load client's
    /// share of the record numbers, with others taking those between).
    pub fn inserting(mut self, first: i64, stride: i64) -> Self {
        self.next_insert = first;
        self.insert_stride = stride.max(1);
        self
    }

    /// The next operation; `acknowledged`: the highest record number up to which every
    /// insert is acknowledged (a read, update or scan chooses among those records alone,
    /// and so never waits for an insert).
    pub fn next(&mut self, acknowledged: i64) -> Op {
        self.next_among(acknowledged, &|_| true)
    }

    /// [`Draw::next`], drawing a record again when `usable` says it is not one to operate
    /// on (another load client's, which may not be inserted yet), as YCSB draws again a
    /// record beyond the last acknowledged one.
    pub fn next_among(&mut self, acknowledged: i64, usable: &dyn Fn(i64) -> bool) -> Op {
        let rng = &mut self.rng;
        // YCSB's DiscreteGenerator: the first kind whose share covers the draw.
        let mut draw = generators::next_f64(rng);
        let weights = &self.weights;
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
        let last = acknowledged;
        let fields = self.fields;
        let one_field = |rng: &mut ChaCha8Rng, all: bool| (!all).then(|| fields.next(rng) as u16);
        match kind {
            OpKind::Read => {
                let key = self.chooser.key(rng, last, usable);
                Op::Read {
                    key,
                    field: one_field(rng, self.read_all_fields),
                }
            }
            OpKind::Update => {
                let key = self.chooser.key(rng, last, usable);
                Op::Update {
                    key,
                    field: one_field(rng, self.write_all_fields),
                }
            }
            OpKind::Insert => {
                self.next_insert += self.insert_stride;
                self.inserts += 1;
                Op::Insert {
                    key: self.next_insert - self.insert_stride,
                }
            }
            OpKind::Scan => {
                let start = self.chooser.key(rng, last, usable);
                let len = self.scan_length.next(rng) as u32;
                Op::Scan {
                    start,
                    len,
                    field: one_field(rng, self.read_all_fields),
                }
            }
            OpKind::ReadModifyWrite => {
                let key = self.chooser.key(rng, last, usable);
                let read_field = one_field(rng, self.read_all_fields);
                Op::ReadModifyWrite {
                    key,
                    read_field,
                    write_field: one_field(rng, self.write_all_fields),
                }
            }
        }
    }

    /// The records inserted or handed out to insert: the store's records and this run's
    /// inserts so far.
    pub fn issued(&self) -> i64 {
        self.next_insert
    }

    /// The inserts drawn so far.
    pub fn inserts(&self) -> u64 {
        self.inserts
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
    /// A record number at most `last` that is `usable`.
    fn key(&mut self, rng: &mut ChaCha8Rng, last: i64, usable: &dyn Fn(i64) -> bool) -> i64 {
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
            if key <= last && usable(key) {
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
    /// This kind's share among the operations of a run of `w`.
    pub fn share_in(self, w: &Workload) -> f64 {
        let p = w.proportions;
        match self {
            OpKind::Read => p.read,
            OpKind::Update => p.update,
            OpKind::Insert => p.insert,
            OpKind::Scan => p.scan,
            OpKind::ReadModifyWrite => p.read_modify_write,
        }
    }
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
