//! The timelines: which phases get one, what each one shows, and odd time series.

use super::*;
use crate::report::chart::Chart;
use crate::report::chart::axis::time_unit;
use crate::report::chart::labels::duration_label;
use crate::report::chart::timeline::{MAX_TIMELINE_CHARTS, median_run, run_rate, timeline_points};

fn timeline_files(report: &Report) -> Vec<String> {
    file_names(report)
        .into_iter()
        .filter(|f| f.starts_with("timeline"))
        .collect()
}

#[test]
fn phases_with_a_time_series_get_a_timeline_and_old_reports_do_not() {
    let report = fixture();
    let all = charts(&report);
    let timelines: Vec<&Chart> = all
        .iter()
        .filter(|c| c.file.starts_with("timeline"))
        .collect();
    assert_eq!(timelines.len(), 6);
    let files: BTreeSet<&str> = all.iter().map(|c| c.file.as_str()).collect();
    assert_eq!(files.len(), all.len(), "file names are unique");

    let search = timelines
        .iter()
        .find(|c| c.file == "timeline-search-tiny-c1.svg")
        .unwrap();
    assert_eq!(
        search.title,
        "Throughput over time: SEARCH tiny, concurrency 1"
    );
    let svg = &search.svg;
    // 30x apart: log scale; sqlite's 3000 searches/s take a third of a second.
    assert!(svg.contains("ops/s (log scale)"));
    assert!(svg.contains("p99 latency (µs, log scale)"));
    assert!(svg.contains("time since the phase start (ms)"));
    assert!(
        svg.contains("bold line: each store&apos;s median run")
            || svg.contains("bold line: each store's median run")
    );
    assert!(svg.contains("red dot: an interval with errors"));
    assert!(svg.to_ascii_uppercase().contains("#D6001C"), "the red dot");
    // postgres' 100 inserts/s take ten seconds.
    let insert = timelines
        .iter()
        .find(|c| c.file == "timeline-insert-tiny-c1.svg")
        .unwrap();
    assert!(insert.svg.contains("time since the phase start (s)"));
    assert!(!insert.svg.contains("red dot"), "no errors there");
    assert!(!insert.svg.to_ascii_uppercase().contains("#D6001C"));

    // An old report has no series: no timeline, everything else as before.
    let mut old = fixture();
    for s in &mut old.stores {
        for p in &mut s.phases {
            p.series.clear();
        }
    }
    let before: Vec<String> = file_names(&report)
        .into_iter()
        .filter(|f| !f.starts_with("timeline"))
        .collect();
    assert_eq!(file_names(&old), before);

    // One store with series among stores without: its chart shows only that store.
    let mut one = old.clone();
    one.stores[2].phases[3].series = report.stores[2].phases[3].series.clone();
    let charts = charts(&one);
    let only: Vec<&Chart> = charts
        .iter()
        .filter(|c| c.file.starts_with("timeline"))
        .collect();
    assert_eq!(only.len(), 1);
    assert_eq!(only[0].file, "timeline-search-tiny-c1.svg");
    assert!(only[0].svg.contains(">\nredis\n</text>"));
    assert!(!only[0].svg.contains(">\nsqlite\n</text>"));
    raster_colours(&only[0].svg);
}

#[test]
fn timelines_of_one_run_close_stores_and_other_suites() {
    // One run each, 2x apart: linear, no note about runs.
    let mut narrow = report_of(vec![
        store("sqlite", "SQLite 3.46.0", 100.0),
        store("redis", "Redis 7.0.15", 200.0),
    ]);
    for s in &mut narrow.stores {
        s.phases
            .retain(|p| p.kind == PhaseKind::Search && p.concurrency == 1);
        for p in &mut s.phases {
            p.series.truncate(1);
        }
    }
    let narrow_charts = charts(&narrow);
    let timeline = narrow_charts
        .iter()
        .find(|c| c.file == "timeline-search-micro-c1.svg")
        .unwrap();
    assert!(timeline.svg.contains("ops/s"));
    assert!(!timeline.svg.contains("ops/s (log scale)"));
    assert!(!timeline.svg.contains("median run"));
    assert!(timeline.svg.contains("a point per interval of"));
    raster_colours(&timeline.svg);

    // YCSB: the workload's total has a timeline, its operations none; pool and driver
    // tests have theirs.
    let mut report = fixture();
    for s in &mut report.stores {
        let speed = s.phases[0].ops_per_s;
        let mut total = phase(PhaseKind::Ycsb, "micro", 1, speed);
        total.size.name = "a".into();
        let mut load = total.clone();
        load.size.name = "load".into();
        let mut read = total.clone();
        read.size.name = "a READ".into();
        let mut pool = phase(PhaseKind::Pool, "micro", 50, speed);
        pool.size.name = "ConcurrentQueries".into();
        let mut driver = phase(PhaseKind::Driver, "micro", 1, speed);
        driver.size.name = "PreparedQueryRow".into();
        s.phases = vec![load, total, read, pool, driver];
    }
    report.plan.concurrency = vec![level(1)];
    let charts = charts(&report);
    let files: Vec<&str> = charts
        .iter()
        .map(|c| c.file.as_str())
        .filter(|f| f.starts_with("timeline"))
        .collect();
    assert_eq!(
        files,
        [
            "timeline-ycsb-load-c1.svg",
            "timeline-ycsb-a-c1.svg",
            "timeline-preparedqueryrow-c1.svg",
            "timeline-concurrentqueries-c50.svg",
        ]
    );
    for chart in charts.iter().filter(|c| c.file.starts_with("timeline")) {
        assert!(chart.title.starts_with("Throughput over time: "));
        raster_colours(&chart.svg);
    }
    assert!(
        charts
            .iter()
            .any(|c| c.title == "Throughput over time: YCSB a, concurrency 1")
    );
}

#[test]
fn timeline_charts_are_limited_lowest_concurrency_first() {
    let mut report = fixture();
    for s in &mut report.stores {
        let extra: Vec<PhaseResult> = (0..20)
            .map(|i| {
                let mut p = phase(PhaseKind::Search, "micro", 8, 1000.0);
                p.size.name = format!("{}", 100 + i);
                p
            })
            .collect();
        s.phases.extend(extra);
    }
    let files = timeline_files(&report);
    assert_eq!(files.len(), MAX_TIMELINE_CHARTS);
    assert_eq!(files[0], "timeline-insert-micro-c1.svg");
    assert!(files[..4].iter().all(|f| f.ends_with("-c1.svg")));
    assert!(files[4..6].iter().all(|f| f.ends_with("-c4.svg")));
    assert!(files[6..].iter().all(|f| f.ends_with("-c8.svg")));
}

#[test]
fn the_time_axis_reads_in_ms_or_s() {
    assert_eq!(time_unit(0.0), (1.0, "ms"));
    assert_eq!(time_unit(350.0), (1.0, "ms"));
    assert_eq!(time_unit(1999.0), (1.0, "ms"));
    assert_eq!(time_unit(2000.0), (1000.0, "s"));
    assert_eq!(time_unit(60_000.0), (1000.0, "s"));
    assert_eq!(time_unit(f64::NAN), (1.0, "ms"));
    assert_eq!(duration_label(1000.0 / 1024.0), "0.977 ms");
    assert_eq!(duration_label(62.5), "62.5 ms");
    assert_eq!(duration_label(1000.0), "1 s");
}

#[test]
fn a_short_last_interval_is_left_out() {
    let point = |ops| SeriesPoint {
        ops,
        errors: 0,
        p50_us: 10.0,
        p99_us: 30.0,
        max_us: 90.0,
    };
    let series = |span_ms| Series {
        interval_ms: 10.0,
        span_ms,
        points: vec![point(100), point(100), point(100), point(1)],
    };
    // The last interval 0.5 ms wide (5% of one): left out.
    let short = timeline_points(&series(30.5));
    assert_eq!(short.len(), 3);
    assert_eq!(short[0].mid_ms, 5.0);
    assert_eq!(short[2].end_ms, 30.0);
    assert!(short.iter().all(|t| (t.ops_per_s - 10_000.0).abs() < 1e-6));
    // 1 ms wide (10%): kept, at its own width's rate and middle.
    let kept = timeline_points(&series(31.0));
    assert_eq!(kept.len(), 4);
    assert!((kept[3].ops_per_s - 1000.0).abs() < 1e-6);
    assert!((kept[3].mid_ms - 30.5).abs() < 1e-9);
    // A whole last interval.
    assert_eq!(timeline_points(&series(40.0)).len(), 4);
    // A span shorter than the intervals, or unknown: only the last one goes.
    assert_eq!(timeline_points(&series(5.0)).len(), 3);
    assert_eq!(timeline_points(&series(f64::NAN)).len(), 3);

    assert_eq!(run_rate(&series(31.0)), 301.0 / 0.031);
    assert_eq!(median_run(&[3.0, 1.0, 2.0]), Some(2));
    assert_eq!(median_run(&[3.0, 1.0]), Some(1), "the lower of two");
    assert_eq!(median_run(&[f64::NAN, 1.0, 2.0]), Some(2));
    assert_eq!(median_run(&[]), None);
}

#[test]
fn odd_time_series_do_not_panic() {
    let point = |ops, p99_us| SeriesPoint {
        ops,
        errors: ops / 2,
        p50_us: p99_us,
        p99_us,
        max_us: p99_us,
    };
    let odd = [
        Series {
            interval_ms: 10.0,
            span_ms: 25.0,
            points: Vec::new(),
        },
        Series {
            interval_ms: 10.0,
            span_ms: 0.0,
            points: vec![point(5, 1.0)],
        },
        Series {
            interval_ms: 0.0,
            span_ms: 10.0,
            points: vec![point(5, 1.0), point(5, 1.0)],
        },
        Series {
            interval_ms: f64::NAN,
            span_ms: f64::NAN,
            points: vec![point(5, f64::NAN)],
        },
        Series {
            interval_ms: -1.0,
            span_ms: f64::INFINITY,
            points: vec![point(5, 1.0)],
        },
        Series {
            interval_ms: 1.0,
            span_ms: f64::INFINITY,
            points: vec![
                point(u64::MAX, f64::INFINITY),
                point(0, 0.0),
                point(3, -1.0),
            ],
        },
        Series {
            interval_ms: 1e300,
            span_ms: 1e305,
            points: vec![point(0, 0.0), point(7, f64::NAN)],
        },
    ];
    for s in &odd {
        timeline_points(s);
        run_rate(s);
    }
    assert!(timeline_points(&odd[0]).is_empty());
    assert!(timeline_points(&odd[1]).is_empty(), "zero span");
    assert!(timeline_points(&odd[2]).is_empty(), "zero interval");
    assert!(timeline_points(&odd[3]).is_empty());

    // Each odd series in a whole report, alone and beside good ones.
    for (k, s) in odd.iter().enumerate() {
        let mut report = fixture();
        report.stores[0].phases[2].series = vec![s.clone()];
        report.stores[1].phases[2].series = vec![s.clone(), s.clone()];
        for st in &mut report.stores {
            st.phases[3].series = vec![s.clone()];
        }
        for chart in charts(&report) {
            if chart.file.starts_with("timeline") {
                raster_colours(&chart.svg);
            }
        }
        let files = timeline_files(&report);
        assert!(
            files.contains(&"timeline-search-micro-c1.svg".to_string()),
            "{k}"
        );
    }

    // Every series empty or idle: no timeline.
    let mut idle = fixture();
    for s in &mut idle.stores {
        for p in &mut s.phases {
            for r in &mut p.series {
                for pt in &mut r.points {
                    pt.ops = 0;
                }
            }
        }
    }
    assert!(timeline_files(&idle).is_empty());
}
