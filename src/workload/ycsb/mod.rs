//! YCSB's core workloads, as its `CoreWorkload` defines them: the workload's properties (from
//! YCSB's own files, [`CORE`]), its keys (`user` + the FNV-64 hash of the record number, in
//! hashed insert order), the operation sequence of a run (drawn with YCSB's generators, from
//! a seed, so that every store gets the same one), and the values: derived from key, field
//! and version, so that every read can be checked against what was last written.

pub mod generators;
mod operations;
pub mod properties;
mod values;

pub use operations::{Op, OpKind};
pub use values::{is_value, value, version_in, write_value};

/// YCSB's six core workload files (`workloads/` of this repository), by letter.
pub const CORE: [(char, &str); 6] = [
    ('a', include_str!("../../../workloads/workloada")),
    ('b', include_str!("../../../workloads/workloadb")),
    ('c', include_str!("../../../workloads/workloadc")),
    ('d', include_str!("../../../workloads/workloadd")),
    ('e', include_str!("../../../workloads/workloade")),
    ('f', include_str!("../../../workloads/workloadf")),
];

/// How a run chooses the record each operation works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distribution {
    Uniform,
    /// Scrambled zipfian (constant 0.99), over the records plus the inserts expected.
    Zipfian,
    /// Skewed towards the records inserted last.
    Latest,
    /// `hotspotopnfraction` of the operations on `hotspotdatafraction` of the records.
    Hotspot,
    /// One record after the other.
    Sequential,
}

/// How a scan's length is chosen, between `minscanlength` and `maxscanlength`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanLength {
    Uniform,
    Zipfian,
}

/// The share of each operation in a run (they sum to 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Proportions {
    pub read: f64,
    pub update: f64,
    pub insert: f64,
    pub scan: f64,
    pub read_modify_write: f64,
}

/// A workload: YCSB's `CoreWorkload` properties.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// `a` to `f`, or the file's name.
    pub name: String,
    pub record_count: u64,
    pub operation_count: u64,
    pub table: String,
    pub field_count: u16,
    pub field_length: usize,
    pub field_name_prefix: String,
    pub read_all_fields: bool,
    pub write_all_fields: bool,
    pub proportions: Proportions,
    pub distribution: Distribution,
    pub hotspot_data_fraction: f64,
    pub hotspot_opn_fraction: f64,
    pub min_scan_length: u64,
    pub max_scan_length: u64,
    pub scan_length: ScanLength,
    pub ordered_inserts: bool,
    pub insert_start: u64,
    /// Records the key choosers draw from (`recordcount - insertstart` when not given).
    pub insert_count: Option<u64>,
    pub zero_padding: usize,
}

impl Workload {
    /// YCSB's `CoreWorkload` defaults (before any file).
    pub fn defaults(name: &str) -> Self {
        Workload {
            name: name.to_string(),
            record_count: 1_000,
            operation_count: 1_000,
            table: "usertable".to_string(),
            field_count: 10,
            field_length: 100,
            field_name_prefix: "field".to_string(),
            read_all_fields: true,
            write_all_fields: false,
            proportions: Proportions {
                read: 0.95,
                update: 0.05,
                insert: 0.0,
                scan: 0.0,
                read_modify_write: 0.0,
            },
            distribution: Distribution::Uniform,
            hotspot_data_fraction: 0.2,
            hotspot_opn_fraction: 0.8,
            min_scan_length: 1,
            max_scan_length: 1_000,
            scan_length: ScanLength::Uniform,
            ordered_inserts: false,
            insert_start: 0,
            insert_count: None,
            zero_padding: 1,
        }
    }

    /// A core workload (`a` to `f`) with `overrides` on top (`--property`).
    pub fn core(letter: char, overrides: &[properties::Property]) -> Result<Self, String> {
        let (_, text) = CORE
            .iter()
            .find(|(l, _)| *l == letter.to_ascii_lowercase())
            .ok_or_else(|| {
                format!("--workload {letter}: YCSB's core workloads are a, b, c, d, e and f")
            })?;
        Self::from_text(
            &letter.to_string(),
            text,
            &format!("workloads/workload{letter}"),
            overrides,
        )
    }

    /// A workload from the text of a YCSB workload file, `source` naming it in messages.
    pub fn from_text(
        name: &str,
        text: &str,
        source: &str,
        overrides: &[properties::Property],
    ) -> Result<Self, String> {
        let mut w = Workload::defaults(name);
        w.apply(&properties::parse(text, source)?)?;
        w.apply(overrides)?;
        w.check().map_err(|why| format!("{source}: {why}"))?;
        Ok(w)
    }

    /// What no single key can be wrong about, checked once every key is read.
    fn check(&self) -> Result<(), String> {
        let p = self.proportions;
        let sum = p.read + p.update + p.insert + p.scan + p.read_modify_write;
        if (sum - 1.0).abs() > 1e-9 {
            return Err(format!(
                "the operation proportions sum to {sum}, not 1 (readproportion \
                 {}, updateproportion {}, insertproportion {}, scanproportion {}, \
                 readmodifywriteproportion {})",
                p.read, p.update, p.insert, p.scan, p.read_modify_write
            ));
        }
        if self.min_scan_length > self.max_scan_length {
            return Err(format!(
                "minscanlength {} is above maxscanlength {}",
                self.min_scan_length, self.max_scan_length
            ));
        }
        if self.key_count() == 0 {
            return Err(format!(
                "insertstart {} leaves no record of recordcount {} to operate on",
                self.insert_start, self.record_count
            ));
        }
        if self
            .insert_start
            .checked_add(self.key_count())
            .is_none_or(|end| end > self.record_count)
        {
            return Err(format!(
                "insertstart {} + insertcount {} is above recordcount {}",
                self.insert_start,
                self.key_count(),
                self.record_count
            ));
        }
        Ok(())
    }

    /// The workload in one line: its mix, its distribution, its counts.
    pub fn brief(&self) -> String {
        let p = self.proportions;
        let mix: Vec<String> = [
            (p.read, "read"),
            (p.update, "update"),
            (p.insert, "insert"),
            (p.scan, "scan"),
            (p.read_modify_write, "read-modify-write"),
        ]
        .iter()
        .filter(|(share, _)| *share > 0.0)
        .map(|(share, name)| format!("{}% {name}", (share * 100.0 * 100.0).round() / 100.0))
        .collect();
        let distribution = match self.distribution {
            Distribution::Uniform => "uniform",
            Distribution::Zipfian => "zipfian",
            Distribution::Latest => "latest",
            Distribution::Hotspot => "hotspot",
            Distribution::Sequential => "sequential",
        };
        let scans = if p.scan > 0.0 {
            format!(
                ", scans of {} to {} records",
                self.min_scan_length, self.max_scan_length
            )
        } else {
            String::new()
        };
        format!(
            "{}: {}, {distribution}{scans}; {} operations on {} records of {} fields x {} \
             bytes",
            self.name,
            mix.join(", "),
            self.operation_count,
            self.record_count,
            self.field_count,
            self.field_length
        )
    }

    /// Whether `other` loads the same table: the same records, keys and fields.
    pub fn same_load(&self, other: &Workload) -> Result<(), String> {
        let differs = [
            ("recordcount", self.record_count != other.record_count),
            ("table", self.table != other.table),
            ("fieldcount", self.field_count != other.field_count),
            ("fieldlength", self.field_length != other.field_length),
            (
                "fieldnameprefix",
                self.field_name_prefix != other.field_name_prefix,
            ),
            ("insertorder", self.ordered_inserts != other.ordered_inserts),
            ("zeropadding", self.zero_padding != other.zero_padding),
        ];
        match differs.iter().find(|(_, d)| *d) {
            Some((key, _)) => Err(format!(
                "workloads {} and {} differ in {key}: the workloads of one run share one \
                 load (run them separately, or set it with --property {key}=...)",
                self.name, other.name
            )),
            None => Ok(()),
        }
    }

    /// The records the key choosers draw from.
    pub fn key_count(&self) -> u64 {
        self.insert_count
            .unwrap_or(self.record_count.saturating_sub(self.insert_start))
    }

    /// YCSB's `buildKeyName`: `user` + the record number, hashed unless the inserts are
    /// ordered, zero-padded to `zeropadding` digits.
    pub fn key_name(&self, keynum: i64) -> String {
        let n = if self.ordered_inserts {
            keynum
        } else {
            generators::fnv_hash64(keynum)
        };
        format!("user{n:0>width$}", width = self.zero_padding)
    }

    /// `field0` to `field9` (with the workload's prefix and count).
    pub fn field_names(&self) -> Vec<String> {
        (0..self.field_count)
            .map(|i| format!("{}{i}", self.field_name_prefix))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn core(letter: char) -> Workload {
        Workload::core(letter, &[]).unwrap()
    }

    #[test]
    fn the_six_core_files_read_as_ycsb_defines_them() {
        let a = core('a');
        assert_eq!((a.record_count, a.operation_count), (1000, 1000));
        assert_eq!((a.field_count, a.field_length), (10, 100));
        assert_eq!((a.proportions.read, a.proportions.update), (0.5, 0.5));
        assert_eq!(a.distribution, Distribution::Zipfian);
        assert!(a.read_all_fields && !a.write_all_fields);
        assert_eq!(core('b').proportions.update, 0.05);
        assert_eq!(core('c').proportions.read, 1.0);
        let d = core('d');
        assert_eq!(
            (d.proportions.insert, d.distribution),
            (0.05, Distribution::Latest)
        );
        let e = core('e');
        assert_eq!((e.proportions.scan, e.max_scan_length), (0.95, 100));
        assert_eq!(e.scan_length, ScanLength::Uniform);
        assert_eq!(core('f').proportions.read_modify_write, 0.5);
        assert!(
            Workload::core('g', &[])
                .unwrap_err()
                .contains("a, b, c, d, e and f")
        );
    }

    #[test]
    fn bad_files_are_refused_with_the_line() {
        let refuse = |text: &str| Workload::from_text("x", text, "x.properties", &[]).unwrap_err();
        let e = refuse("recordcount=1000\nreadproportion=0.5\nupdateproportion=0.4\n");
        assert!(e.contains("sum to") && e.contains("x.properties"), "{e}");
        let e = refuse("recordcount=0\n");
        assert!(e.contains("x.properties line 1: recordcount=0"), "{e}");
        let e = refuse("# c\nrequestdistribution=pareto\n");
        assert!(
            e.contains("line 2") && e.contains("not one of YCSB's"),
            "{e}"
        );
        let e = refuse("requestdistribution=exponential\n");
        assert!(e.contains("not supported"), "{e}");
        let e = refuse("threadcount=8\n");
        assert!(e.contains("--concurrency"), "{e}");
        let e = refuse("colour=blue\n");
        assert!(e.contains("not a key of YCSB's core workload"), "{e}");
        let e = refuse("fieldlengthdistribution=zipfian\n");
        assert!(e.contains("only constant"), "{e}");
        let flag = properties::flag("recordcount=50").unwrap();
        assert_eq!(Workload::core('a', &[flag]).unwrap().record_count, 50);
        let e = Workload::core('a', &[properties::flag("maxscanlength=x").unwrap()]).unwrap_err();
        assert!(e.starts_with("--property: maxscanlength=x"), "{e}");
    }

    #[test]
    fn keys_are_ycsbs() {
        let a = core('a');
        assert_eq!(a.key_name(0), "user6284781860667377211");
        assert_eq!(a.key_name(1), "user8517097267634966620");
        let mut ordered = a.clone();
        ordered.ordered_inserts = true;
        ordered.zero_padding = 6;
        assert_eq!(ordered.key_name(42), "user000042");
        assert_eq!(a.field_names()[9], "field9");
    }

    #[test]
    fn a_run_has_the_workloads_mix_and_is_the_same_for_a_seed() {
        let a = core('a');
        let ops = a.operations(1000, 7);
        assert_eq!(ops, a.operations(1000, 7));
        assert_ne!(ops, a.operations(1000, 8));
        let mut by_kind: HashMap<OpKind, usize> = HashMap::new();
        for op in &ops {
            *by_kind.entry(op.kind()).or_default() += 1;
        }
        let reads = by_kind[&OpKind::Read];
        assert!((440..=560).contains(&reads), "{by_kind:?}");
        assert_eq!(reads + by_kind[&OpKind::Update], 1000);
        for op in &ops {
            match *op {
                Op::Read { key, field } => assert!((0..1000).contains(&key) && field.is_none()),
                Op::Update { key, field } => {
                    assert!((0..1000).contains(&key) && field.is_some_and(|f| f < 10))
                }
                other => panic!("{other:?} in workload A"),
            }
        }
    }

    #[test]
    fn inserts_take_the_next_records_and_reads_only_inserted_ones() {
        for letter in ['d', 'e'] {
            let w = core(letter);
            let ops = w.operations(1000, 3);
            let mut next = 1000;
            for op in ops {
                match op {
                    Op::Insert { key } => {
                        assert_eq!(key, next);
                        next += 1;
                    }
                    Op::Read { key, .. } => assert!(key < next, "{letter}: {key} >= {next}"),
                    Op::Scan { start, len, .. } => {
                        assert!(start < next && (1..=100).contains(&len))
                    }
                    other => panic!("{other:?} in workload {letter}"),
                }
            }
            assert!(next > 1000, "{letter} inserted nothing");
        }
        // Workload D reads mostly the newest records.
        let ops = core('d').operations(1000, 3);
        let recent = ops
            .iter()
            .filter(|op| matches!(op, Op::Read { key, .. } if *key >= 900))
            .count();
        assert!(
            recent > 600,
            "{recent} of ~950 reads among the newest tenth"
        );
    }

    #[test]
    fn a_brief_line_and_the_shared_load() {
        assert_eq!(
            core('a').brief(),
            "a: 50% read, 50% update, zipfian; 1000 operations on 1000 records of 10 fields x \
             100 bytes"
        );
        assert!(
            core('e')
                .brief()
                .contains("5% insert, 95% scan, zipfian, scans of 1 to 100 records")
        );
        assert!(core('a').same_load(&core('e')).is_ok());
        let mut other = core('b');
        other.record_count = 5;
        let e = core('a').same_load(&other).unwrap_err();
        assert!(e.contains("differ in recordcount"), "{e}");
    }
}
