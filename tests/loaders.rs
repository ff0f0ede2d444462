//! Every loader of user input survives any input: property tests (proptest) that feed each
//! one random and half-right input and check that it never panics, that whatever it refuses
//! comes with a message saying why (and where), and that whatever it accepts is consistent.
//!
//! - `run.json` ([`json::parse`]): `tests/reports.rs` already feeds it random bytes,
//!   truncations and single-byte mutations of a real run; here the published runs in
//!   `docs/results/` get JSON values of the wrong type (or of the right type and a wrong
//!   value) at any place in their tree, and keys removed. A value of another JSON type is
//!   always refused; anything accepted renders back to the same report.
//! - YCSB workload files ([`properties::parse`], [`properties::flag`],
//!   [`Workload::from_text`], [`Workload::core`]): random text, and `key=value` lines of
//!   YCSB's keys with random values (negative, huge, NaN, empty, unicode). Every refusal
//!   names the file (or `--property`) and the line at fault; every workload accepted has
//!   proportions summing to 1, scan lengths in order and at least one key, all inside the
//!   records, and can draw its operations.
//! - URLs ([`StoreUrl::parse`], [`registry::parse_url`], [`plan::resolve_urls`]) for every
//!   store kind: random text and `scheme://user:PASSWORD@host:port/db` URLs of random parts.
//!   Neither a parsed URL's masked form or `Debug` nor any error shows the password.
//! - The command line ([`Cli::try_parse_from`]) with random values for the flags of a run,
//!   then [`RunPlan::resolve`] of every command line clap accepts, with an empty environment
//!   and no installed server (nothing on this machine matters): no panic, a non-empty error,
//!   or a plan that keeps the rules the flags state (every count as given, and no more
//!   runs or searches than a run can make).
//!
//! These tests found, and now guard against, five inputs the loaders took wrongly: a huge
//! `insertstart` with an `insertcount`, an `insertstart` leaving no record, a `--url`
//! without its `STORE=`, a `--runs` above `u32::MAX` and a huge `--searches-per-insert`.

use std::collections::{BTreeMap, HashSet};
use std::sync::OnceLock;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use clap::Parser;
use dbcompare::catalog::StoreKind;
use dbcompare::cli::{Cli, Command, ServerArgs, Suite};
use dbcompare::plan::{self, RunPlan, Target};
use dbcompare::report::json;
use dbcompare::store::registry;
use dbcompare::store::url::StoreUrl;
use dbcompare::variant::StoreId;
use dbcompare::workload::ycsb::{Workload, properties};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;

/// `cases` cases, and no regression file written next to the tests on a failure (the
/// failing input is in the test's output).
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------
// run.json
// ---------------------------------------------------------------------------------------

/// A published run with every array cut to its first two elements (still a valid run, a
/// fraction of the size), as a JSON tree, with the JSON pointer of every node in it.
struct Sample {
    tree: Value,
    pointers: Vec<String>,
}

fn samples() -> &'static [Sample] {
    static SAMPLES: OnceLock<Vec<Sample>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        ["classic", "ycsb"]
            .iter()
            .map(|suite| {
                let path = format!(
                    "{}/docs/results/{suite}/run.json",
                    env!("CARGO_MANIFEST_DIR")
                );
                let text = std::fs::read_to_string(&path).unwrap();
                let mut tree: Value = serde_json::from_str(&text).unwrap();
                shrink(&mut tree);
                let shrunk = serde_json::to_string(&tree).unwrap();
                if let Err(e) = json::parse(&shrunk) {
                    panic!("{path}, arrays cut to two elements, is refused: {e}");
                }
                let mut pointers = Vec::new();
                collect_pointers(&tree, String::new(), &mut pointers);
                Sample { tree, pointers }
            })
            .collect()
    })
}

fn shrink(v: &mut Value) {
    match v {
        Value::Array(items) => {
            items.truncate(2);
            items.iter_mut().for_each(shrink);
        }
        Value::Object(map) => map.values_mut().for_each(shrink),
        _ => {}
    }
}

fn collect_pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect_pointers(item, format!("{at}/{i}"), out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let key = key.replace('~', "~0").replace('/', "~1");
                collect_pointers(item, format!("{at}/{key}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// The JSON type of a value: null, bool, number, string, array, object.
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Any JSON value, small, with the edge cases of each type often.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop_oneof![Just(-1i64), Just(0), Just(1), Just(2), Just(i64::MIN)].prop_map(Value::from),
        Just(Value::from(u64::MAX)),
        any::<f64>().prop_filter_map("JSON has no NaN or infinity", |f| {
            serde_json::Number::from_f64(f).map(Value::Number)
        }),
        prop_oneof![Just(0.5), Just(-0.0), Just(1e308), Just(-1.5)].prop_map(Value::from),
        prop_oneof![
            Just(String::new()),
            Just("1".to_string()),
            Just("complete".to_string()),
            Just("2026-12-01T18:05:18Z".to_string()),
            Just("sqlite".to_string()),
            "\\PC{0,12}",
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{0,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A refusal is a message; an acceptance renders back to the same report.
fn refused_or_round_trips(text: &str) -> Result<Result<(), String>, TestCaseError> {
    match json::parse(text) {
        Ok(report) => {
            let again = json::parse(&json::render(&report));
            prop_assert_eq!(again.as_ref(), Ok(&report), "accepted, but not re-read");
            Ok(Ok(()))
        }
        Err(e) => {
            prop_assert!(!e.trim().is_empty(), "an empty refusal");
            Ok(Err(e))
        }
    }
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn run_json_refuses_a_value_of_another_type_anywhere(
        sample in 0usize..2,
        at in any::<Index>(),
        replacement in any_json(),
    ) {
        let sample = &samples()[sample];
        let pointer = at.get(&sample.pointers);
        let mut tree = sample.tree.clone();
        let node = tree.pointer_mut(pointer).unwrap();
        let (was, now) = (json_type(node), json_type(&replacement));
        *node = replacement;
        let outcome = refused_or_round_trips(&serde_json::to_string_pretty(&tree).unwrap())?;
        // A struct reads from an array of its fields too (serde), and `null` is an absent
        // optional: every other change of JSON type is a wrong type.
        let wrong_type = was != now
            && was != "null"
            && now != "null"
            && !(was == "object" && now == "array");
        if wrong_type {
            prop_assert!(
                outcome.is_err(),
                "{} of {} at {:?} replaced by {}, and accepted",
                was,
                if pointer.is_empty() { "the root" } else { "the value" },
                pointer,
                now
            );
        }
    }

    #[test]
    fn run_json_without_a_key_is_refused_naming_it_or_round_trips(
        sample in 0usize..2,
        at in any::<Index>(),
    ) {
        let sample = &samples()[sample];
        let objects: Vec<&String> = sample
            .pointers
            .iter()
            .filter(|p| {
                let object = sample.tree.pointer(p).and_then(Value::as_object);
                object.is_some_and(|m| !m.is_empty())
            })
            .collect();
        let pointer = at.get(&objects);
        let mut tree = sample.tree.clone();
        let object = tree.pointer_mut(pointer).unwrap().as_object_mut().unwrap();
        let key = object.keys().nth(at.index(object.len())).unwrap().clone();
        object.remove(&key);
        if let Err(e) = refused_or_round_trips(&serde_json::to_string(&tree).unwrap())? {
            prop_assert!(e.contains(&key), "{:?} removed at {:?}: {}", key, pointer, e);
        }
    }
}

// ---------------------------------------------------------------------------------------
// YCSB workload files
// ---------------------------------------------------------------------------------------

/// YCSB's keys: the core workload's, those dbcompare refuses, and a few it does not know.
const YCSB_KEYS: &[&str] = &[
    "recordcount",
    "operationcount",
    "workload",
    "table",
    "fieldcount",
    "fieldlength",
    "fieldlengthdistribution",
    "fieldnameprefix",
    "readallfields",
    "writeallfields",
    "readallfieldsbyname",
    "dataintegrity",
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "requestdistribution",
    "hotspotdatafraction",
    "hotspotopnfraction",
    "minscanlength",
    "maxscanlength",
    "scanlengthdistribution",
    "insertorder",
    "insertstart",
    "insertcount",
    "zeropadding",
    "threadcount",
    "target",
    "exponential.percentile",
    "core_workload_insertion_retry_limit",
    "measurementtype",
    "colour",
    "RecordCount",
    "",
];

/// The values that matter to YCSB's keys, and the ones that should not get through.
fn ycsb_value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (0u64..2_000).prop_map(|n| n.to_string()),
        2 => (0.0f64..=1.0).prop_map(|f| f.to_string()),
        1 => prop_oneof![
            Just("0"), Just("1"), Just("0.5"), Just("0.05"), Just("0.95"), Just("1.0"),
            Just("-1"), Just("-0"), Just("-0.5"), Just("1.5"), Just("1e-10"),
            Just("18446744073709551615"), Just("18446744073709551616"),
            Just("9223372036854775807"), Just("9223372036854775808"),
            Just("99999999999999999999999"), Just("1e400"), Just("NaN"), Just("nan"),
            Just("inf"), Just("-inf"), Just("infinity"), Just(""), Just(" "), Just("_"),
            Just("1_000"), Just("٣"), Just("１２"), Just("²"), Just("0x10"), Just("+5"),
            Just("true"), Just("false"), Just("TRUE"), Just("uniform"), Just("zipfian"),
            Just("latest"), Just("hotspot"), Just("sequential"), Just("exponential"),
            Just("ordered"), Just("hashed"), Just("constant"), Just("usertable"),
            Just("site.ycsb.workloads.CoreWorkload"), Just("ü_table"), Just("a b"),
        ]
        .prop_map(str::to_string),
        1 => "\\PC{0,16}",
    ]
}

fn ycsb_key() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(YCSB_KEYS).prop_map(str::to_string),
        1 => "[a-z.]{1,12}",
    ]
}

/// One line of a workload file: `key=value` (or `key: value`, `key value`), a comment, a
/// blank line, a continued line or anything.
fn ycsb_line() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => (
            ycsb_key(),
            prop::sample::select(vec!["=", " = ", ":", ": ", " ", "\t"]),
            ycsb_value(),
        )
            .prop_map(|(k, sep, v)| format!("{k}{sep}{v}")),
        1 => "[#!]\\PC{0,20}",
        1 => "[ \t]{0,3}",
        1 => "[a-z]{1,8}=[a-z0-9]{0,4}\\\\",
        1 => "\\PC{0,24}",
    ]
}

fn ycsb_text() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(ycsb_line(), 0..12),
        prop::sample::select(vec!["\n", "\r\n"]),
        any::<bool>(),
    )
        .prop_map(|(lines, eol, trailing)| {
            let mut text = lines.join(eol);
            if trailing {
                text.push_str(eol);
            }
            text
        })
}

/// A `key=value`: any of YCSB's keys and any value, or a key that shapes the operations with
/// a value in its range.
fn any_property() -> impl Strategy<Value = (String, String)> {
    prop_oneof![(ycsb_key(), ycsb_value()), workload_shape()]
}

/// A workload file of keys in range and a mix that sums to 1, in any order, with comments,
/// blank lines and now and then one line of anything.
fn mostly_right_text() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(workload_shape(), 0..8),
        proportions(),
        prop::collection::vec(
            prop_oneof![ycsb_line(), "[#!].{0,10}", Just(String::new())],
            0..2,
        ),
    )
        .prop_flat_map(|(shape, mix, extra)| {
            let lines: Vec<String> = shape
                .iter()
                .chain(&mix)
                .map(|(k, v)| format!("{k}={v}"))
                .chain(extra)
                .collect();
            Just(lines).prop_shuffle()
        })
        .prop_map(|lines| lines.join("\n"))
}

/// What every workload the loader accepts holds.
fn consistent(w: &Workload) -> Result<(), TestCaseError> {
    let p = w.proportions;
    let shares = [p.read, p.update, p.insert, p.scan, p.read_modify_write];
    prop_assert!(shares.iter().all(|s| (0.0..=1.0).contains(s)), "{:?}", p);
    prop_assert!((shares.iter().sum::<f64>() - 1.0).abs() <= 1e-9, "{:?}", p);
    prop_assert!(w.record_count >= 1 && w.operation_count >= 1, "{:?}", w);
    prop_assert!(
        (1..=1_000).contains(&w.field_count) && w.field_length >= 1,
        "{:?}",
        w
    );
    prop_assert!((1..=64).contains(&w.zero_padding), "{:?}", w);
    prop_assert!(
        1 <= w.min_scan_length && w.min_scan_length <= w.max_scan_length,
        "{:?}",
        w
    );
    prop_assert!((0.0..=1.0).contains(&w.hotspot_data_fraction), "{:?}", w);
    prop_assert!((0.0..=1.0).contains(&w.hotspot_opn_fraction), "{:?}", w);
    let keys_end = w.insert_start.checked_add(w.key_count());
    prop_assert!(w.key_count() >= 1, "no key to operate on: {:?}", w);
    prop_assert!(keys_end.is_some_and(|end| end <= w.record_count), "{:?}", w);
    let word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    prop_assert!(word(&w.table) && word(&w.field_name_prefix), "{:?}", w);
    Ok(())
}

/// The lines of `text` as Java's `Properties` splits them: at `\n`, `\r\n` or `\r`.
fn java_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest.find(['\n', '\r']).unwrap_or(rest.len());
        lines.push(&rest[..end]);
        let eol = if rest[end..].starts_with("\r\n") {
            2
        } else {
            usize::from(end < rest.len())
        };
        rest = &rest[end + eol..];
    }
    lines
}

/// A line without the whitespace Java's `Properties` skips before a key (space, tab, form
/// feed; no other).
fn java_trim(line: &str) -> &str {
    line.trim_start_matches([' ', '\t', '\u{c}'])
}

/// The line a `SOURCE line N: ...` message names, if it names one.
fn named_line<'t>(message: &str, source: &str, text: &'t str) -> Option<Option<&'t str>> {
    let rest = message.strip_prefix(&format!("{source} line "))?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let n: usize = digits.parse().ok()?;
    Some(
        n.checked_sub(1)
            .and_then(|i| java_lines(text).get(i).copied()),
    )
}

const SOURCE: &str = "my.workload";

proptest! {
    #![proptest_config(config(600))]

    #[test]
    fn properties_split_any_text_or_name_the_line_at_fault(
        text in prop_oneof![ycsb_text(), "\\PC{0,200}", ".{0,200}"],
    ) {
        match properties::parse(&text, SOURCE) {
            Ok(props) => {
                let mut last = 0;
                for p in &props {
                    prop_assert!(!p.key.is_empty(), "{:?}", p);
                    let properties::Origin::Line { source, line } = &p.origin else {
                        return Err(TestCaseError::fail(format!("{p:?} not from a line")));
                    };
                    prop_assert_eq!(source.as_str(), SOURCE);
                    prop_assert!(*line > last, "lines out of order: {:?}", props);
                    last = *line;
                    let raw = java_lines(&text).get(line - 1).copied().unwrap_or_default();
                    let first = java_trim(raw);
                    prop_assert!(
                        !first.is_empty() && !first.starts_with(['#', '!']),
                        "{:?} from a blank or comment line {:?}", p, raw
                    );
                    // Without escapes or continuations, the key is the line's first word and
                    // the value the rest, as it is (trailing spaces kept).
                    if !raw.contains('\\') {
                        let split = |c: char| matches!(c, ' ' | '\t' | '\u{c}' | '=' | ':');
                        prop_assert!(!p.key.contains(split), "{:?}", p);
                        prop_assert!(first.starts_with(p.key.as_str()), "{:?} on {:?}", p, raw);
                        prop_assert!(raw.ends_with(p.value.as_str()), "{:?} on {:?}", p, raw);
                    }
                }
            }
            Err(e) => {
                let line = named_line(&e, SOURCE, &text);
                prop_assert!(line.is_some(), "the refusal names no line: {}", e);
                let line = line.flatten().map(java_trim);
                prop_assert!(
                    line.is_some_and(|l| !l.is_empty() && !l.starts_with(['#', '!'])),
                    "{} names a blank or comment line {:?}", e, line
                );
            }
        }
    }

    #[test]
    fn a_property_flag_is_key_equals_value_or_refused(
        entry in prop_oneof![
            "\\PC{0,30}",
            (ycsb_key(), ycsb_value()).prop_map(|(k, v)| format!("{k}={v}")),
        ],
    ) {
        match properties::flag(&entry) {
            Ok(p) => {
                // As YCSB's -p: the key before the first =, the value after it, as given.
                prop_assert_eq!(&p.origin, &properties::Origin::Flag);
                prop_assert!(!p.key.contains('='), "{:?}", p);
                prop_assert_eq!(format!("{}={}", p.key, p.value), entry);
            }
            Err(e) => {
                prop_assert!(!entry.contains('='), "{:?} refused: {}", entry, e);
                prop_assert!(e.starts_with("--property"), "{}", e);
            }
        }
    }

    #[test]
    fn a_workload_file_is_refused_naming_where_or_is_consistent(
        text in prop_oneof![ycsb_text(), mostly_right_text()],
        flags in prop::collection::vec(any_property(), 0..4),
    ) {
        let overrides: Vec<properties::Property> = flags
            .iter()
            .map(|(k, v)| properties::flag(&format!("{k}={v}")).unwrap())
            .collect();
        match Workload::from_text("mine", &text, SOURCE, &overrides) {
            Ok(w) => {
                consistent(&w)?;
                prop_assert_eq!(w.name.as_str(), "mine");
                prop_assert!(!w.brief().is_empty());
            }
            Err(e) => {
                prop_assert!(
                    e.starts_with(SOURCE) || e.starts_with("--property: "),
                    "the refusal names neither the file nor --property: {}", e
                );
                if let Some(line) = named_line(&e, SOURCE, &text) {
                    let line = line.map(java_trim);
                    prop_assert!(
                        line.is_some_and(|l| !l.is_empty() && !l.starts_with(['#', '!'])),
                        "{} names a blank or comment line {:?}", e, line
                    );
                }
            }
        }
    }

    #[test]
    fn a_core_workload_with_random_properties_is_refused_or_consistent(
        letter in prop_oneof![
            prop::sample::select(vec!['a', 'b', 'c', 'd', 'e', 'f', 'A', 'F']),
            any::<char>(),
        ],
        flags in prop::collection::vec(any_property(), 0..6),
    ) {
        let overrides: Vec<properties::Property> = flags
            .iter()
            .map(|(k, v)| properties::flag(&format!("{k}={v}")).unwrap())
            .collect();
        match Workload::core(letter, &overrides) {
            Ok(w) => {
                prop_assert!("abcdef".contains(letter.to_ascii_lowercase()));
                consistent(&w)?;
            }
            Err(e) => {
                prop_assert!(!e.is_empty());
                if !"abcdefABCDEF".contains(letter) {
                    prop_assert!(e.contains("a, b, c, d, e and f"), "{}", e);
                }
            }
        }
    }

    /// A workload the loader accepts is one a run can use: its operations can be drawn (at
    /// sizes small enough for the test).
    #[test]
    fn an_accepted_workload_draws_its_operations(
        letter in prop::sample::select(vec!['a', 'b', 'c', 'd', 'e', 'f']),
        flags in prop::collection::vec(workload_shape(), 0..8),
        mix in prop::option::of(proportions()),
        seed in any::<u64>(),
    ) {
        let mut overrides: Vec<properties::Property> = flags
            .iter()
            .chain(mix.iter().flatten())
            .map(|(k, v)| properties::flag(&format!("{k}={v}")).unwrap())
            .collect();
        overrides.push(properties::flag("operationcount=200").unwrap());
        // Refused shapes (insertstart at or past the records, scans of min > max) are the
        // tests above's; this one is about what is accepted.
        let Ok(w) = Workload::core(letter, &overrides) else {
            return Ok(());
        };
        consistent(&w)?;
        let drawn = operations_within(&w, w.record_count as i64, seed, Duration::from_secs(10));
        prop_assert_eq!(drawn, Ok(200), "{:?}", w);
    }
}

/// A count for the insert range: small, or near `u64::MAX`.
fn insert_number(min: u64) -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => min..3_000u64,
        1 => Just(min),
        1 => Just(u64::MAX),
        1 => (u64::MAX - 3_000)..=u64::MAX,
        1 => any::<u64>().prop_map(move |n| n.max(min)),
    ]
}

proptest! {
    #![proptest_config(config(400))]

    /// `recordcount`, `insertstart` and `insertcount` (each in the file or as `--property`)
    /// are accepted exactly when they leave at least one key, all inside the records (the
    /// sum computed without overflow); else refused naming `insertstart`. An accepted one of
    /// few records draws its operations with any distribution.
    #[test]
    fn the_insert_range_is_inside_the_records_or_refused_naming_insertstart(
        records in prop_oneof![3 => 1..3_000u64, 1 => insert_number(1)],
        start in insert_number(0),
        count in prop::option::of(insert_number(1)),
        as_flag in any::<[bool; 3]>(),
        distribution in prop::sample::select(
            vec!["uniform", "zipfian", "latest", "hotspot", "sequential"],
        ),
        seed in any::<u64>(),
    ) {
        let mut lines = vec![format!("requestdistribution={distribution}")];
        let mut overrides = vec![properties::flag("operationcount=50").unwrap()];
        let given = [
            ("recordcount", Some(records)),
            ("insertstart", Some(start)),
            ("insertcount", count),
        ];
        for ((key, value), flag) in given.into_iter().zip(as_flag) {
            let Some(value) = value else { continue };
            if flag {
                overrides.push(properties::flag(&format!("{key}={value}")).unwrap());
            } else {
                lines.push(format!("{key}={value}"));
            }
        }
        let text = lines.join("\n");
        let keys = count.unwrap_or(records.saturating_sub(start));
        let inside = keys >= 1 && u128::from(start) + u128::from(keys) <= u128::from(records);
        match Workload::from_text("mine", &text, SOURCE, &overrides) {
            Ok(w) => {
                prop_assert!(inside, "{:?} and {:?} accepted", text, overrides);
                consistent(&w)?;
                prop_assert_eq!((w.record_count, w.insert_start), (records, start));
                prop_assert_eq!(w.key_count(), keys);
                if records <= 3_000 {
                    let limit = Duration::from_secs(10);
                    let drawn = operations_within(&w, records as i64, seed, limit);
                    prop_assert_eq!(drawn, Ok(50), "{:?}", w);
                }
            }
            Err(e) => {
                prop_assert!(!inside, "{:?} and {:?} refused: {}", text, overrides, e);
                let named = format!("{SOURCE}: insertstart {start}");
                prop_assert!(e.starts_with(&named), "{}", e);
            }
        }
    }
}

/// `w.operations(present, seed)` on a thread of its own: how many, or why none (a panic, or
/// no answer within `limit`: a loop that does not end, whose thread is left spinning).
fn operations_within(
    w: &Workload,
    present: i64,
    seed: u64,
    limit: Duration,
) -> Result<usize, String> {
    let w = w.clone();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(w.operations(present, seed).len());
    });
    rx.recv_timeout(limit).map_err(|e| match e {
        RecvTimeoutError::Timeout => format!("no operations within {limit:?}"),
        RecvTimeoutError::Disconnected => "the operations panicked (see above)".to_string(),
    })
}

/// A key that shapes the operations, with a value mostly in its range (edges included),
/// records kept few enough for the test's time; now and then an `insertstart` or an
/// `insertcount` near `u64::MAX`, whose sum overflows.
fn workload_shape() -> impl Strategy<Value = (String, String)> {
    let count = |max: u64| prop_oneof![Just(1u64), Just(max), 1..=max].prop_map(|n| n.to_string());
    let huge = || prop_oneof![Just(u64::MAX), (u64::MAX - 2_000)..=u64::MAX];
    let fraction =
        || prop_oneof![Just(0.0f64), Just(1.0), 0.0f64..=1.0].prop_map(|f| f.to_string());
    let one_of =
        |values: &'static [&'static str]| prop::sample::select(values).prop_map(str::to_string);
    let pair = |key: &'static str, value: BoxedStrategy<String>| {
        value.prop_map(move |v| (key.to_string(), v))
    };
    prop_oneof![
        pair("recordcount", count(2_000).boxed()),
        pair(
            "insertstart",
            prop_oneof![2 => Just(0u64), 2 => 0..2_000u64, 1 => huge()]
                .prop_map(|n| n.to_string())
                .boxed()
        ),
        pair(
            "insertcount",
            prop_oneof![4 => count(2_000), 1 => huge().prop_map(|n| n.to_string())].boxed()
        ),
        pair(
            "requestdistribution",
            one_of(&["uniform", "zipfian", "latest", "hotspot", "sequential"]).boxed()
        ),
        pair("hotspotdatafraction", fraction().boxed()),
        pair("hotspotopnfraction", fraction().boxed()),
        pair("minscanlength", count(100).boxed()),
        pair("maxscanlength", count(100).boxed()),
        pair(
            "scanlengthdistribution",
            one_of(&["uniform", "zipfian"]).boxed()
        ),
        pair("insertorder", one_of(&["hashed", "ordered"]).boxed()),
        pair("fieldcount", count(20).boxed()),
        pair("readallfields", one_of(&["true", "false"]).boxed()),
        pair("writeallfields", one_of(&["true", "false"]).boxed()),
        pair("zeropadding", count(30).boxed()),
    ]
}

/// The five operation proportions, summing to 1 (some of them 0).
fn proportions() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::vec(prop_oneof![Just(0.0f64), Just(1.0), 0.0f64..1.0], 5)
        .prop_filter("a mix of nothing", |w| w.iter().sum::<f64>() > 0.0)
        .prop_map(|weights| {
            let sum: f64 = weights.iter().sum();
            let mut shares: Vec<f64> = weights.iter().map(|w| w / sum).collect();
            // The last share takes the rounding, so that the five sum to 1.
            let rest: f64 = shares[..4].iter().sum();
            shares[4] = (1.0 - rest).max(0.0);
            [
                "readproportion",
                "updateproportion",
                "insertproportion",
                "scanproportion",
                "readmodifywriteproportion",
            ]
            .iter()
            .zip(shares)
            .map(|(k, f)| (k.to_string(), f.to_string()))
            .collect()
        })
}

/// An `insertstart` near `u64::MAX` with an `insertcount` (or the other way round), in the
/// file or as `--property`, is refused naming `insertstart`: the sum is not wrapped, nor a
/// panic.
#[test]
fn a_huge_insertstart_with_an_insertcount_is_refused() {
    let max = u64::MAX;
    for (start, count) in [(max, 1), (max, max), (1, max), (max - 1, 2)] {
        let text = format!("insertstart={start}\ninsertcount={count}\n");
        let e = Workload::from_text("x", &text, SOURCE, &[]).unwrap_err();
        assert!(
            e.starts_with(&format!("{SOURCE}: insertstart {start}")),
            "{e}"
        );
        let overrides = [
            properties::flag(&format!("insertstart={start}")).unwrap(),
            properties::flag(&format!("insertcount={count}")).unwrap(),
        ];
        let e = Workload::core('a', &overrides).unwrap_err();
        assert!(
            e.starts_with(&format!("workloads/workloada: insertstart {start}")),
            "{e}"
        );
    }
    // Up to the last record is no overflow.
    let text = format!(
        "recordcount={max}\noperationcount=1\ninsertstart={}\ninsertcount=1\n",
        max - 1
    );
    let w = Workload::from_text("x", &text, SOURCE, &[]).unwrap();
    assert_eq!((w.insert_start, w.key_count()), (max - 1, 1));
}

/// An `insertstart` at or past the `recordcount` (no `insertcount`) leaves no record to
/// choose from: refused naming `insertstart`, with every distribution (the operations of
/// such a workload used to loop for ever or panic). One record short of it is a workload
/// that draws its operations.
#[test]
fn an_insertstart_at_the_recordcount_is_refused() {
    for distribution in ["zipfian", "hotspot", "uniform", "sequential", "latest"] {
        let overrides = |start: u64| {
            [
                properties::flag(&format!("insertstart={start}")).unwrap(),
                properties::flag(&format!("requestdistribution={distribution}")).unwrap(),
            ]
        };
        for start in [1_000, 1_001, u64::MAX] {
            let e = Workload::core('c', &overrides(start)).unwrap_err();
            let named = format!("workloads/workloadc: insertstart {start} leaves no record");
            assert!(e.starts_with(&named), "{distribution}: {e}");
        }
        let w = Workload::core('c', &overrides(999)).unwrap();
        assert_eq!(w.key_count(), 1, "{distribution}");
        let drawn = operations_within(&w, 1000, 1, Duration::from_secs(5));
        assert_eq!(drawn, Ok(1000), "{distribution}");
    }
}

/// The plan of a command line, or why there is none (clap's message or the plan's).
fn resolve(argv: &[&str]) -> Result<RunPlan, String> {
    let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
    RunPlan::resolve(&cli.run, &|_| None, &|_| None).map_err(|e| e.0)
}

/// `dbcompare` run with `args` (SQLite only, micro only, no warm-up, its output in a
/// directory of its own): its exit code and what it wrote to stderr.
fn dbcompare(args: &[&str]) -> (Option<i32>, String) {
    let out = tempfile::tempdir().unwrap();
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_dbcompare"))
        .args([
            "--store",
            "sqlite",
            "--sizes",
            "micro",
            "--warmup-runs",
            "0",
        ])
        .args(["--no-floor", "--quiet"])
        .args(args)
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    (run.status.code(), stderr)
}

/// A `--runs` above `u32::MAX` is refused, not cut to its low 32 bits (4294967296 was a plan
/// of 0 measured runs): a usage error, exit code 2, before anything runs.
#[test]
fn a_run_count_above_u32_max_is_refused() {
    let max = u32::MAX;
    let plan = resolve(&["dbcompare", "--runs", &max.to_string()]).unwrap();
    assert_eq!(plan.classic.repetitions.measured.get(), max);
    for runs in [u64::from(max) + 1, u64::MAX] {
        let e = resolve(&["dbcompare", "--runs", &runs.to_string()]).unwrap_err();
        assert!(
            e.starts_with(&format!("--runs: at most {max}")),
            "{runs}: {e}"
        );
    }
    let (code, stderr) = dbcompare(&["--runs", "4294967296"]);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("--runs: at most"), "{stderr}");
    assert_eq!(code, Some(2), "{stderr}");
}

/// A `--searches-per-insert` whose searches for a size's records overflow, or are more than
/// a run can make (16 x `u32::MAX`), is refused: a usage error, exit code 2, not a panic
/// once the run starts.
#[test]
fn a_huge_searches_per_insert_is_refused_not_a_panic() {
    let most = 16 * u64::from(u32::MAX);
    let searches = |sizes: &str, n: u64| {
        resolve(&[
            "dbcompare",
            "--sizes",
            sizes,
            "--searches-per-insert",
            &n.to_string(),
        ])
    };
    assert_eq!(
        searches("1", most).unwrap().classic.searches_per_insert,
        most
    );
    for (sizes, n) in [
        ("1", most + 1),
        ("1", u64::MAX),
        ("micro", most / 100 + 1),
        ("micro", u64::MAX),
        ("1,micro", most),
    ] {
        let e = searches(sizes, n).unwrap_err();
        assert!(
            e.starts_with("--searches-per-insert: "),
            "{sizes} x {n}: {e}"
        );
    }
    let (code, stderr) = dbcompare(&[
        "--runs",
        "1",
        "--searches-per-insert",
        "18446744073709551615",
    ]);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("--searches-per-insert: "), "{stderr}");
    assert_eq!(code, Some(2), "{stderr}");
}

// ---------------------------------------------------------------------------------------
// URLs
// ---------------------------------------------------------------------------------------

/// Every scheme of every store, and a few of none.
fn any_scheme() -> impl Strategy<Value = String> {
    let mut schemes: Vec<&'static str> = StoreKind::all()
        .iter()
        .flat_map(|k| k.schemes().iter().copied())
        .collect();
    schemes.extend([
        "http",
        "file",
        "sqlite",
        "unix",
        "redis+unix",
        "rediss",
        "x",
    ]);
    prop_oneof![
        6 => prop::sample::select(schemes).prop_map(str::to_string),
        1 => "[a-z][a-z0-9+.-]{0,8}",
    ]
}

/// A password that cannot turn up in a message by chance: six characters or more, with a
/// capital (every other part of the URLs below is lower case).
fn password() -> impl Strategy<Value = String> {
    "[A-Z][A-Za-z0-9]{5,15}"
}

/// Mostly one of `kind`'s schemes, else any.
fn scheme_for(kind: StoreKind) -> BoxedStrategy<String> {
    if kind.schemes().is_empty() {
        return any_scheme().boxed();
    }
    prop_oneof![
        3 => prop::sample::select(kind.schemes()).prop_map(str::to_string),
        1 => any_scheme(),
    ]
    .boxed()
}

/// A store kind and a URL with a password, mostly of that kind's scheme.
fn kind_and_url() -> impl Strategy<Value = (StoreKind, (String, String))> {
    kinds().prop_flat_map(|kind| (Just(kind), url_with_password(scheme_for(kind))))
}

/// `scheme://user:PASSWORD@host:port/db?query`, each part random (an empty host, a port out
/// of range, a path of several segments, no database...).
fn url_with_password(scheme: BoxedStrategy<String>) -> impl Strategy<Value = (String, String)> {
    let host = prop_oneof![
        12 => "[a-z][a-z0-9-]{0,10}(\\.[a-z]{2,5})?",
        1 => Just("127.0.0.1".to_string()),
        1 => Just("[::1]".to_string()),
        1 => Just(String::new()),
        1 => Just("h%20st".to_string()),
        1 => Just("[zz]".to_string()),
        1 => Just("a,b".to_string()),
    ];
    let port = prop_oneof![
        4 => Just(String::new()),
        4 => any::<u16>().prop_map(|p| format!(":{p}")),
        1 => Just(":".to_string()),
        1 => Just(":99999".to_string()),
        1 => Just(":x".to_string()),
    ];
    let path = prop_oneof![
        1 => Just(String::new()),
        1 => Just("/".to_string()),
        6 => "/[a-z0-9]{1,8}",
        1 => "/[a-z]{1,4}/[a-z]{1,4}/[a-z]{1,4}",
        1 => "/[a-z0-9/%.]{0,12}",
    ];
    let query = prop_oneof![
        3 => Just(String::new()),
        1 => prop::sample::select(vec![
            "?sslmode=disable", "?set=s", "?management=http://m:8091",
            "?management=nope", "?x", "?pool_min=-1", "?authSource=admin",
            "?connect_timeout=abc", "?protocol=resp3",
            "?sslmode=verify-full&sslrootcert=/no/ca.pem", "?sslmode=verify-ca",
            "?sslmode=bogus", "?sslrootcert=%2Fca.pem", "?require_ssl=true&ssl_ca=/no/ca.pem",
            "?ssl_ca=/no/ca.pem", "?cacert=/no/ca.pem", "?cacert", "?tls=true&tlsCAFile=/no/ca.pem",
            "?tlsInsecure=true", "#insecure",
        ]).prop_map(str::to_string),
    ];
    (
        scheme,
        "[a-z0-9_]{0,8}",
        password(),
        host,
        port,
        path,
        query,
    )
        .prop_map(|(scheme, user, password, host, port, path, query)| {
            (
                format!("{scheme}://{user}:{password}@{host}{port}{path}{query}"),
                password,
            )
        })
}

/// A `--url` entry without its `STORE=`: no `=` at all, or a first `=` inside the URL (its
/// query), after a part holding `://` (and the password) that is no store's name.
fn without_store(entry: &str) -> bool {
    entry
        .split_once('=')
        .is_none_or(|(name, _)| name.contains("://"))
}

/// The message refusing a `--url` entry without its `STORE=`.
const EXPECTED_STORE_URL: &str = "--url: expected STORE=URL";

/// A `--url` without its `STORE=` is refused as such, its password masked (it was refused as
/// an unknown store named by the URL up to the `=` of its query, password shown).
#[test]
fn a_url_without_its_store_does_not_show_its_password() {
    for entry in [
        "postgres://bob:Secret42@db.example/app?sslmode=disable",
        "postgres:postgres://bob:Secret42@db.example/app?sslmode=disable",
        "postgrespostgres://bob:Secret42@db.example/app?sslmode=disable",
        "couchbase://bob:Secret42@db.example?management=http://m:8091",
        "redis://bob:Secret42@db.example:6379/0",
    ] {
        assert!(without_store(entry), "{entry}");
        let args = ServerArgs {
            urls: vec![entry.to_string()],
            ..Default::default()
        };
        let e = plan::resolve_urls(&args, &|_| None).unwrap_err().0;
        assert!(!e.contains("Secret42"), "{e}");
        assert!(e.starts_with(EXPECTED_STORE_URL), "{e}");
        assert!(e.contains("://bob:***@db.example"), "{e}");
    }
}

/// `text` does not show `password`.
fn hides(text: &str, password: &str, what: &str) -> Result<(), TestCaseError> {
    prop_assert!(
        !text.contains(password),
        "{} shows the password {:?}: {}",
        what,
        password,
        text
    );
    Ok(())
}

fn kinds() -> impl Strategy<Value = StoreKind> {
    prop::sample::select(StoreKind::all())
}

/// One `--url`: `STORE=URL` of a store and a URL mostly of its scheme, now and then another
/// name (`all`, unknown, odd case or spaces) or another separator; and the URL's password.
fn url_entry() -> impl Strategy<Value = (String, &'static str, (String, String))> {
    let other_name = prop::sample::select(vec!["all", "ALL", "Postgres", " redis", "", "nosuch"]);
    (
        kind_and_url(),
        prop_oneof![6 => Just(None), 1 => other_name.prop_map(Some)],
        prop_oneof![6 => Just("="), 1 => Just(":"), 1 => Just("")],
    )
        .prop_map(|((kind, url), name, sep)| {
            let name = name.map_or_else(|| kind.name().to_string(), str::to_string);
            (name, sep, url)
        })
}

proptest! {
    #![proptest_config(config(400))]

    #[test]
    fn any_text_is_a_url_of_the_stores_scheme_or_refused(
        kind in kinds(),
        raw in prop_oneof![
            "\\PC{0,40}",
            (any_scheme(), "\\PC{0,30}").prop_map(|(s, rest)| format!("{s}://{rest}")),
        ],
    ) {
        for parsed in [StoreUrl::parse(kind, &raw), registry::parse_url(kind, &raw)] {
            match parsed {
                Ok(url) => {
                    prop_assert!(!kind.is_embedded());
                    let scheme = raw.split(':').next().unwrap_or_default().to_ascii_lowercase();
                    let ours = kind.schemes().contains(&scheme.as_str());
                    prop_assert!(ours, "{} accepted {:?}", kind, raw);
                    prop_assert_eq!(url.expose(), raw.as_str());
                    let address = url.address();
                    let port = address.rsplit(':').next().unwrap_or_default();
                    prop_assert!(port.parse::<u16>().is_ok(), "{} from {:?}", address, raw);
                    prop_assert!(!url.masked().is_empty());
                }
                Err(e) => {
                    let message = e.to_string();
                    let prefix = format!("--url {kind}=...: ");
                    prop_assert!(message.starts_with(&prefix), "{}", message);
                    prop_assert!(message.len() > prefix.len(), "{}", message);
                }
            }
        }
    }

    #[test]
    fn no_parsed_url_or_refusal_shows_its_password(
        (kind, (raw, password)) in kind_and_url(),
    ) {
        for (what, parsed) in [
            ("StoreUrl::parse", StoreUrl::parse(kind, &raw)),
            ("registry::parse_url", registry::parse_url(kind, &raw)),
        ] {
            match parsed {
                Ok(url) => {
                    hides(url.masked(), &password, "masked()")?;
                    hides(&format!("{url:?}"), &password, "Debug")?;
                    hides(&url.address(), &password, "address()")?;
                    prop_assert_eq!(url.password(), Some(password.as_str()), "{}: {:?}", what, raw);
                }
                Err(e) => {
                    hides(&e.to_string(), &password, what)?;
                    hides(&format!("{e:?}"), &password, what)?;
                }
            }
        }
    }

    #[test]
    fn url_flags_and_variables_resolve_without_showing_a_password(
        entries in prop::collection::vec(url_entry(), 0..4),
        variables in prop::collection::vec(kind_and_url(), 0..3),
    ) {
        let args = ServerArgs {
            urls: entries
                .iter()
                .map(|(store, sep, (url, _))| format!("{store}{sep}{url}"))
                .collect(),
            ..Default::default()
        };
        let env: BTreeMap<String, String> = variables
            .iter()
            .map(|(kind, (url, _))| (kind.url_env(), url.clone()))
            .collect();
        let passwords: Vec<&String> = entries
            .iter()
            .map(|(_, _, (_, p))| p)
            .chain(variables.iter().map(|(_, (_, p))| p))
            .collect();
        let resolved = plan::resolve_urls(&args, &|name| env.get(name).cloned());
        // An entry without its STORE= is refused; as such if it is the first thing wrong
        // (the variables are read before the entries).
        if args.urls.iter().any(|entry| without_store(entry)) {
            prop_assert!(resolved.is_err(), "{:?} accepted", args.urls);
        }
        let variables_parse = StoreKind::all().iter().filter(|k| !k.is_embedded()).all(|k| {
            env.get(&k.url_env()).is_none_or(|raw| registry::parse_url(*k, raw).is_ok())
        });
        if variables_parse && args.urls.first().is_some_and(|entry| without_store(entry)) {
            let e = resolved.as_ref().err().map(|e| e.0.as_str()).unwrap_or_default();
            prop_assert!(e.starts_with(EXPECTED_STORE_URL), "{:?}: {}", args.urls, e);
        }
        match resolved {
            Ok(urls) => {
                for url in urls.values() {
                    for p in &passwords {
                        hides(url.masked(), p, "masked()")?;
                        hides(&format!("{url:?}"), p, "Debug")?;
                    }
                }
                // The last --url of a store wins over the ones before and its variable.
                let mut last: BTreeMap<StoreKind, &str> = BTreeMap::new();
                for (store, _, (url, _)) in &entries {
                    let named = |k: &&StoreKind| k.name().eq_ignore_ascii_case(store.trim());
                    let kind = StoreKind::all().iter().find(named);
                    prop_assert!(kind.is_some(), "--url {}=... accepted", store);
                    last.insert(*kind.unwrap(), url);
                }
                for (kind, url) in last {
                    prop_assert_eq!(urls.get(&StoreId::of(kind)).map(StoreUrl::expose), Some(url));
                }
                for id in urls.keys() {
                    prop_assert!(!id.kind.is_embedded());
                }
            }
            Err(e) => {
                prop_assert!(!e.0.is_empty());
                for p in &passwords {
                    hides(&e.0, p, "the refusal")?;
                }
                // No URL is taken for the name of a store.
                let unknown = e.0.strip_prefix("--url: unknown store ");
                prop_assert!(unknown.is_none_or(|rest| !rest.contains("://")), "{}", e);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The command line
// ---------------------------------------------------------------------------------------

/// Values for any flag: numbers of every size and sign, lists, names, and garbage.
fn flag_value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (0u64..10).prop_map(|n| n.to_string()),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        3 => prop::sample::select(vec![
            "0", "1", "-1", "-0", "", " ", ",", "1,2,2", "1,,2", "8,1", "1_000", "1.5",
            "1e3", "NaN", "inf", "4294967295", "4294967296", "18446744073709551615",
            "18446744073709551616", "99999999999999999999999", "٣", "１", "micro", "tiny",
            "small", "medium", "micro,micro", "micro,100", "100,micro", "MICRO", "huge",
            "all", "sqlite", "SQLite", "redis,all", "sqlite,postgres", "sqlite,sqlite",
            "mongodb", "durable", "relaxed", "classic", "driver", "pool", "ycsb", "a",
            "a,b,c,f,d,e", "a,a", "g", "ab", "", "0.1", "100", "101", "-0.5",
            "recordcount=10", "recordcount=0", "insertstart=5", "x", "=", "readproportion=2",
        ]).prop_map(str::to_string),
        1 => (ycsb_key(), ycsb_value()).prop_map(|(k, v)| format!("{k}={v}")),
        1 => "\\PC{0,12}",
    ]
}

/// The flags of a run that take a value (none that reads or writes a file), each with values
/// of its own: in range, at the edges, just past them.
#[rustfmt::skip]
const VALUE_FLAGS: &[(&str, &[&str])] = &[
    ("--sizes", &[
        "micro", "tiny,small", "micro,micro", "100", "micro,100", "100,100", "MICRO", "medium",
        "0", "-5", "4294967295", "4294967296", "1_000", "huge", ",", "",
    ]),
    ("--concurrency", &[
        "1", "1,8", "8,1,8", "0", "1,,2", "4294967295", "4294967296", "18446744073709551615",
        "-1",
    ]),
    ("--rate", &["1", "1000", "0", "18446744073709551615", "1.5"]),
    ("--runs", &["1", "3", "0", "-1", "4294967296", "18446744073709551615"]),
    ("--retries", &["0", "3", "4294967295", "4294967296", "-1"]),
    ("--searches-per-insert", &["1", "40", "0", "18446744073709551615"]),
    ("--seed", &["0", "2016", "18446744073709551615", "18446744073709551616", "-1"]),
    ("--store", &[
        "all", "sqlite", "sqlite,postgres", "redis,all", "SQLite", " sqlite ", "sqlite,sqlite",
        "nosuch", "",
    ]),
    ("--durability", &["durable", "relaxed", "Durable", ""]),
    ("--workload", &["a", "a,b", "a,a", "c,f", "g", "ab", "A", "a,e", " a", ""]),
    ("-p", &[]),
    ("--property", &[]),
    ("--suite", &["classic", "driver", "pool", "ycsb", "YCSB"]),
    ("--client-threads", &["1", "2", "0", "18446744073709551615"]),
    ("--warmup-runs", &["0", "1", "4294967295", "4294967296"]),
    ("--stall-timeout", &["0", "1", "300", "18446744073709551615"]),
    ("--connect-timeout", &["1", "0", "18446744073709551615"]),
    ("--scale", &["0.1", "100", "100.0001", "0", "-1", "NaN", "inf", "1e-300"]),
    ("--mongodb-transactions", &["auto", "always", "never", "sometimes"]),
    ("--url", &[
        "postgres=postgres://u:Pw1234@h/db", "redis=redis://h:6379/0", "mysql=mysql://root@h/db",
        "sqlite=x", "nosuch=redis://h", "redis",
    ]),
];

/// The password of the `--url` values above.
const CLI_PASSWORD: &str = "Pw1234";

/// A flag and a value: mostly one of its own (a `-p` of YCSB's keys), else any.
fn flag_and_value() -> impl Strategy<Value = (&'static str, String)> {
    prop::sample::select(VALUE_FLAGS).prop_flat_map(|(flag, own)| {
        let own: BoxedStrategy<String> = if own.is_empty() {
            prop_oneof![workload_shape(), (ycsb_key(), ycsb_value())]
                .prop_map(|(k, v)| format!("{k}={v}"))
                .boxed()
        } else {
            prop::sample::select(own).prop_map(str::to_string).boxed()
        };
        (Just(flag), prop_oneof![3 => own, 1 => flag_value()])
    })
}

fn argv() -> impl Strategy<Value = Vec<String>> {
    (
        prop::sample::select(vec!["", "run"]),
        prop::option::of(prop::sample::select(vec![
            "classic", "driver", "pool", "ycsb",
        ])),
        prop::collection::vec((flag_and_value(), any::<bool>()), 0..8),
        prop::collection::vec(
            prop::sample::select(vec![
                "--quiet",
                "--verbose",
                "--no-floor",
                "--keep-data",
                "--nosuch",
            ]),
            0..2,
        ),
    )
        .prop_map(|(command, suite, flags, switches)| {
            let mut argv = vec!["dbcompare".to_string()];
            if !command.is_empty() {
                argv.push(command.to_string());
            }
            if let Some(suite) = suite {
                argv.extend(["--suite".to_string(), suite.to_string()]);
            }
            for ((flag, value), joined) in flags {
                if joined && flag.starts_with("--") {
                    argv.push(format!("{flag}={value}"));
                } else {
                    argv.push(flag.to_string());
                    argv.push(value);
                }
            }
            argv.extend(switches.iter().map(|s| s.to_string()));
            argv
        })
}

proptest! {
    #![proptest_config(config(600))]

    #[test]
    fn any_command_line_parses_or_is_refused_and_resolves_or_is_refused(argv in argv()) {
        let cli = match Cli::try_parse_from(&argv) {
            Ok(cli) => cli,
            Err(e) => {
                prop_assert!(!e.to_string().trim().is_empty(), "{:?}", argv);
                return Ok(());
            }
        };
        let args = match cli.command {
            None => cli.run,
            Some(Command::Run(args)) => args,
            Some(other) => {
                return Err(TestCaseError::fail(format!("{argv:?} parsed as {other:?}")));
            }
        };
        match RunPlan::resolve(&args, &|_| None, &|_| None) {
            Ok(plan) => {
                // Stores (a kind, or its variants), sizes and concurrency levels: at least
                // one each, each once.
                let stores = &plan.stores;
                let ids: HashSet<&StoreId> = stores.iter().map(|s| &s.id).collect();
                prop_assert!(!ids.is_empty() && ids.len() == stores.len(), "{:?}", stores);
                let sizes = &plan.classic.sizes;
                let names: HashSet<&str> = sizes.iter().map(|s| s.name.as_str()).collect();
                prop_assert!(!names.is_empty() && names.len() == sizes.len(), "{:?}", sizes);
                prop_assert!(plan.classic.sizes.iter().all(|s| s.records >= 1));
                let levels: HashSet<u32> = plan.classic.concurrency.iter().map(|l| l.get()).collect();
                prop_assert!(!levels.is_empty() && levels.len() == plan.classic.concurrency.len());
                prop_assert!(!levels.contains(&0));
                // Every count as given, and no more runs or searches than a run can make.
                prop_assert_eq!(u64::from(plan.classic.repetitions.measured.get()), args.runs.get());
                prop_assert_eq!(plan.driver.repetitions, plan.classic.repetitions);
                prop_assert_eq!(plan.pool.repetitions, plan.classic.repetitions);
                prop_assert_eq!(plan.ycsb.repetitions, plan.classic.repetitions);
                let searches = args.searches_per_insert.get();
                prop_assert_eq!(plan.classic.searches_per_insert, searches);
                for size in &plan.classic.sizes {
                    let all = size.records.checked_mul(searches);
                    let most = 16 * u64::from(u32::MAX);
                    prop_assert!(all.is_some_and(|n| n <= most), "{} x {}", searches, size.name);
                }
                prop_assert_eq!(plan.classic.seed, args.seed);
                prop_assert_eq!(plan.classic.repetitions.warmup, args.warmup_runs);
                prop_assert_eq!(plan.classic.retries, args.retries);
                prop_assert_eq!(plan.stall_timeout.is_none(), args.stall_timeout == 0);
                prop_assert!(plan.classic.rate.is_none_or(|r| r >= 1.0));
                for s in &plan.stores {
                    let threads = plan.client_threads(s.id.kind);
                    prop_assert!(threads >= 1);
                    if plan.suite == Suite::Pool {
                        prop_assert_eq!(threads, 1);
                    }
                }
                if plan.suite != Suite::Classic {
                    prop_assert_eq!(plan.classic.retries, 0);
                }
                if plan.suite == Suite::Ycsb {
                    prop_assert!(!plan.ycsb.workloads.is_empty());
                    for w in &plan.ycsb.workloads {
                        consistent(w)?;
                    }
                } else {
                    prop_assert!(plan.ycsb.workloads.is_empty());
                }
                let summary = serde_json::to_string(&plan.summary()).unwrap();
                prop_assert!(!summary.contains(CLI_PASSWORD), "{}", summary);
                for store in &plan.stores {
                    hides(&format!("{:?}", store.target), CLI_PASSWORD, "a store's target")?;
                }
                // The password of every URL used is a secret to scrub, and nothing else is.
                let used: Vec<String> = plan
                    .stores
                    .iter()
                    .filter_map(|s| match &s.target {
                        Target::Url(u) => u.password().map(str::to_string),
                        _ => None,
                    })
                    .collect();
                prop_assert_eq!(plan.secrets(), used);
                let secrets = plan.secrets();
                prop_assert!(secrets.iter().all(|s| s == CLI_PASSWORD), "{:?}", secrets);
            }
            Err(e) => {
                prop_assert!(!e.0.trim().is_empty(), "{:?}", argv);
                hides(&e.0, CLI_PASSWORD, "the refusal")?;
            }
        }
    }
}

/// `--quiet` prints no figures, but still what a reader must know before trusting them: the
/// run's warnings, and a store that failed, counted apart.
#[test]
fn a_quiet_run_still_says_what_went_wrong() {
    let (code, stderr) = dbcompare(&["--runs", "1", "--rate", "100000000"]);
    assert_eq!(code, Some(0), "{stderr}");
    // The schedule falls behind; on a busy machine the throughput may also drift.
    let heading = stderr.lines().next().unwrap_or_default();
    let counted = |n: &str| format!("{n} warning{}: sqlite {n}", if n == "1" { "" } else { "s" });
    assert!(
        ["1", "2", "3"].iter().any(|n| heading == counted(n)),
        "{stderr}"
    );
    assert!(
        stderr.contains("sqlite: SEARCH micro (open loop): the schedule fell behind"),
        "{stderr}"
    );

    // A file that is no SQLite database: the store fails once it opens it.
    let garbage = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(garbage.path(), vec![b'x'; 4096]).unwrap();
    let path = garbage.path().to_str().unwrap();
    let (code, stderr) = dbcompare(&["--runs", "1", "--sqlite-path", path]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.starts_with("1 failure: sqlite 1\nsqlite: failed: "),
        "{stderr}"
    );
}
