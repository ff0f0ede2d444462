use super::*;

#[test]
fn lines_split_as_java_properties_do() {
    let p = parse("# c\n! c\n\na=1\nb : two words\nc 3\n", "f").unwrap();
    let pairs: Vec<(&str, &str)> = p
        .iter()
        .map(|p| (p.key.as_str(), p.value.as_str()))
        .collect();
    assert_eq!(pairs, [("a", "1"), ("b", "two words"), ("c", "3")]);
    assert_eq!(
        p[1].origin,
        Origin::Line {
            source: "f".into(),
            line: 5
        }
    );
    // Continued lines, escapes, trailing spaces kept, `\r` and `\r\n` line ends, a key
    // with no value, a separator after whitespace.
    let text = "x = 1\\\n   2 \r\ny\\u0041\\:b\\tc  \rlonely\nk v=w\na\\\\\n";
    let p = parse(text, "f").unwrap();
    let pairs: Vec<(&str, &str, usize)> = p
        .iter()
        .map(|p| match p.origin {
            Origin::Line { line, .. } => (p.key.as_str(), p.value.as_str(), line),
            Origin::Flag => unreachable!("a file's"),
        })
        .collect();
    assert_eq!(
        pairs,
        [
            ("x", "12 ", 1),
            ("yA:b\tc", "", 3),
            ("lonely", "", 4),
            ("k", "v=w", 5),
            ("a\\", "", 6)
        ]
    );
    assert!(parse("=1\n", "f").unwrap_err().contains("f line 1"));
    let e = parse("\n\nk=\\u00g1\n", "f").unwrap_err();
    assert!(e.contains("f line 3") && e.contains("malformed"), "{e}");
    // A flag is YCSB's -p: split at the first =, nothing trimmed.
    let f = flag("a= b =c ").unwrap();
    assert_eq!((f.key.as_str(), f.value.as_str()), ("a", " b =c "));
}

#[test]
fn every_key_is_honoured_refused_or_some_of_its_values_taken() {
    // A value each key that is not refused takes.
    let takes = |key: &str| match key {
        "workload" => "site.ycsb.workloads.CoreWorkload",
        "table" | "fieldnameprefix" => "t",
        "fieldlengthdistribution" => "constant",
        "readallfields" | "writeallfields" | "readallfieldsbyname" | "dataintegrity" => "TRUE",
        "requestdistribution" => "latest",
        "scanlengthdistribution" => "zipfian",
        "insertorder" => "ordered",
        k if k.ends_with("proportion") || k.ends_with("fraction") => " 0.5d",
        _ => "+7",
    };
    let set = |key: &str, value: &str| {
        Workload::defaults("x").apply(&[flag(&format!("{key}={value}")).unwrap()])
    };
    for &(key, handling) in KEYS {
        match handling {
            Handling::Refused(why) => {
                let e = set(key, "1").unwrap_err();
                assert!(e.ends_with(why), "{key}: {e}");
            }
            Handling::Honoured | Handling::Only(_) => {
                set(key, takes(key)).unwrap_or_else(|e| panic!("{key}: {e}"));
            }
        }
        if let Handling::Only(values) = handling {
            let e = set(key, "other").unwrap_err();
            let named = e.contains(values) || e.contains("neither");
            assert!(named, "{e}");
        }
    }
    assert!(
        set("colour", "1")
            .unwrap_err()
            .contains("not a key of YCSB's")
    );
    // A binding's setting, from a workload file made for YCSB: where dbcompare takes it.
    let e = set("mongodb.url", "mongodb://h/db").unwrap_err();
    assert!(e.contains("given to dbcompare's store with --url"), "{e}");
    // YCSB's client's own keys are its, not unknown.
    for key in [
        "hdrhistogram.percentiles",
        "measurement.histogram.verbose",
        "status",
    ] {
        let e = set(key, "1").unwrap_err();
        assert!(e.contains("a setting of YCSB's client"), "{key}: {e}");
    }
    // Values as YCSB's Java parses them, and the ranges named.
    for (key, value, refusal) in [
        ("recordcount", "1000 ", "\"1000 \" is not a whole number"),
        ("recordcount", "1_000", "is not a whole number"),
        ("recordcount", "0", "must be at least 1"),
        ("fieldcount", "1001", "must be between 1 and 1000"),
        ("zeropadding", "65", "must be between 1 and 64"),
        ("readallfields", "yes", "neither true nor false"),
        ("readallfields", "true ", "neither true nor false"),
        ("requestdistribution", "zipfian ", "not one of YCSB's"),
        ("readproportion", "1.5", "must be between 0 and 1"),
        ("dataintegrity", "false", "cannot be told not to"),
    ] {
        let e = set(key, value).unwrap_err();
        assert!(e.contains(refusal), "{key}={value}: {e}");
    }
}

#[test]
fn a_file_without_its_counts_is_refused_naming_the_key() {
    let e = Workload::from_text("x", "operationcount=5\n", "x.p", &[]).unwrap_err();
    assert!(e.starts_with("x.p: recordcount is not set"), "{e}");
    let e = Workload::from_text("x", "recordcount=5\n", "x.p", &[]).unwrap_err();
    assert!(e.contains("operationcount is not set"), "{e}");
    let given = flag("operationcount=3").unwrap();
    let w = Workload::from_text("x", "recordcount=5\n", "x.p", &[given]).unwrap();
    assert_eq!((w.record_count, w.operation_count), (5, 3));
}
