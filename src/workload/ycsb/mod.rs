//! YCSB's core workloads, as its `CoreWorkload` defines them: the workload's properties (from
//! YCSB's own files, [`CORE`]), its keys (`user` + the FNV-64 hash of the record number, in
//! hashed insert order), the operation sequence of a run (drawn with YCSB's generators, from
//! a seed, so that every store gets the same one), and the values: derived from key, field
//! and version, so that every read can be checked against what was last written.

pub mod generators;
mod operations;
pub mod properties;
mod values;
mod workload;

pub use operations::{Draw, Op, OpKind};
pub use properties::CORE;
pub use values::{VERSION_CHARS, is_value, value, version_in, write_value};
pub use workload::{Distribution, Proportions, ScanLength, Workload};

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
