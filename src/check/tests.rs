use super::*;
use crate::catalog::Launcher;

#[test]
fn values_compare_as_flags_and_sizes() {
    assert!(same_value("ON", "1"));
    assert!(same_value("yes", "on"));
    assert!(!same_value("on", "off"));
    assert!(same_value("4G", "4294967296"));
    assert!(same_value("4gb", "4294967296"));
    assert!(same_value("2GB", "2GB"));
    assert!(same_value("800M", "838860800"));
    assert!(!same_value("4G", "134217728"));
    assert!(same_value("", ""));
    assert!(!same_value("always", "everysec"));
}

#[test]
fn only_what_the_store_reads_back_is_compared() {
    let redis = Launcher::Redis.config();
    let found = BTreeMap::from([
        ("maxmemory".to_string(), "0".to_string()),
        ("appendonly".to_string(), "yes".to_string()),
        ("appendfsync".to_string(), "everysec".to_string()),
        ("save".to_string(), String::new()),
    ]);
    let other = differences(&redis, &found, Setting::Other);
    assert_eq!(other, [("maxmemory".into(), "4gb".into(), "0".into())]);
    let durability = differences(&redis, &found, Setting::Durability);
    assert_eq!(
        durability,
        [("appendfsync".into(), "always".into(), "everysec".into())]
    );
}

#[test]
fn the_table_says_what_is_ready_and_every_problem_has_its_fix() {
    let mut ok = Checked::new(StoreKind::Sqlite, "embedded".into());
    ok.answers = "yes: SQLite 3".into();
    let mut bad = Checked::new(StoreKind::Redis, "url redis://h:6379/0".into());
    bad.problem(
        "maxmemory is 0; configs/redis.conf asks 4gb",
        "set maxmemory = 4gb",
    );
    let mut skipped = Checked::new(StoreKind::Mongodb, "no server".into());
    skipped.skipped = true;
    let out = render(&[ok.clone(), bad.clone(), skipped.clone()]);
    assert!(ok.ready() && !bad.ready() && !skipped.ready());
    let row = |name: &str| out.lines().find(|l| l.starts_with(name)).unwrap();
    assert!(
        out.contains("Not checked (they cannot run here):\n  mongodb: no server"),
        "{out}"
    );
    assert!(row("sqlite").trim_end().ends_with("yes"), "{out}");
    assert!(row("redis").trim_end().ends_with("no: 1 problem"), "{out}");
    assert!(row("mongodb").trim_end().ends_with("skipped"), "{out}");
    assert!(out.contains("redis:\n  problem: maxmemory is 0"), "{out}");
    assert!(out.contains("  fix:     set maxmemory = 4gb"), "{out}");
}
