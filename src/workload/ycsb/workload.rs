//! A YCSB workload as `CoreWorkload` holds it: its properties with their defaults, what no
//! single key can be wrong about, its one-line summary, and its keys and field names.

use super::generators;

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

    /// What no single key can be wrong about, checked once every key is read.
    pub(super) fn check(&self) -> Result<(), String> {
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

    /// The logical bytes of the records numbered `keys`: each one's key, its field names
    /// and values (YCSB's own measure of a record, without any store's encoding).
    pub fn logical_bytes(&self, keys: impl Iterator<Item = i64>) -> u64 {
        let fields: usize = self
            .field_names()
            .iter()
            .map(|f| f.len() + self.field_length)
            .sum();
        keys.map(|k| (self.key_name(k).len() + fields) as u64).sum()
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

    #[test]
    fn a_records_logical_bytes_are_its_key_field_names_and_values() {
        let w = Workload::defaults("a");
        let one = w.key_name(7).len() + 10 * ("field0".len() + 100);
        assert_eq!(w.logical_bytes([7].into_iter()), one as u64);
        assert_eq!(
            w.logical_bytes(0..3),
            (0..3)
                .map(|k| w.logical_bytes([k].into_iter()))
                .sum::<u64>()
        );
    }
}
