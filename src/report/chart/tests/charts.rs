//! Every kind of chart drawn from a whole run: which charts a run gets, what each one
//! says, its scale, its limits, and odd figures drawn without a panic.

use std::ops::Range;

use plotters::style::RGBColor;

use super::*;
use crate::report::chart::axis::{nines, wants_log};
use crate::report::chart::labels::{pack, slug, wrap_label};
use crate::report::chart::latency::{MAX_LATENCY_CHARTS, latency_points};
use crate::report::chart::palette::store_color;
use crate::report::chart::phases::{phase_label, whisker};
use crate::report::chart::throughput::chunks;
use crate::report::chart::{Chart, unique_files};
use crate::report::model::StoreStatus;

/// The run's first throughput chart.
fn throughput_chart(report: &Report) -> Chart {
    charts(report)
        .into_iter()
        .find(|c| c.file.starts_with("throughput"))
        .expect("a throughput chart")
}

#[test]
fn a_classic_run_gets_every_kind_of_chart() {
    assert_eq!(
        file_names(&fixture()),
        [
            "glance.svg",
            "throughput-classic.svg",
            "sizes.svg",
            "latency-insert-micro-c1.svg",
            "latency-insert-tiny-c1.svg",
            "latency-search-micro-c1.svg",
            "latency-search-tiny-c1.svg",
            "latency-search-micro-c4.svg",
            "latency-search-tiny-c4.svg",
            "timeline-insert-micro-c1.svg",
            "timeline-insert-tiny-c1.svg",
            "timeline-search-micro-c1.svg",
            "timeline-search-tiny-c1.svg",
            "timeline-search-micro-c4.svg",
            "timeline-search-tiny-c4.svg",
            "scaling-search-micro.svg",
            "scaling-search-tiny.svg",
        ]
    );
}

#[test]
fn every_chart_is_a_valid_svg_that_draws_something() {
    for chart in charts(&fixture()) {
        assert!(chart.svg.starts_with("<svg"), "{}", chart.file);
        let colours = raster_colours(&chart.svg);
        assert!(colours >= 4, "{}: {colours} colours", chart.file);
        assert!(
            chart
                .file
                .trim_end_matches(".svg")
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{}",
            chart.file
        );
    }
}

#[test]
fn every_chart_says_what_it_shows_and_where_it_was_measured() {
    for chart in charts(&fixture()) {
        let svg = &chart.svg;
        assert!(svg.matches("<text").count() >= 10, "{}", chart.file);
        assert!(svg.contains(&chart.title), "{}: title", chart.file);
        for name in ["sqlite", "postgres", "redis"] {
            assert!(
                svg.contains(&format!(">\n{name}\n</text>")),
                "{}: {name}",
                chart.file
            );
        }
        assert!(svg.contains("durability: durable"), "{}", chart.file);
        assert!(
            svg.contains("Example CPU @ 2.00GHz, 8 cores"),
            "{}",
            chart.file
        );
        assert!(svg.contains("SQLite 3.46.0"), "{}", chart.file);
        assert!(
            svg.contains("PostgreSQL 15.18 &lt;Debian&gt; &amp; co"),
            "{}: versions escaped",
            chart.file
        );
        let units = match chart.file.split('-').next().unwrap() {
            "glance.svg" => "ops/s over the fastest store",
            "throughput" => "ops/s",
            "sizes.svg" => "on-disk size (MB)",
            "latency" => "latency (µs, log scale)",
            "scaling" => "p99 latency (µs",
            "timeline" => "time since the phase start (",
            other => panic!("unexpected chart {other}"),
        };
        assert!(svg.contains(units), "{}: {units}", chart.file);
    }
}

#[test]
fn text_goes_into_the_svg_escaped_and_without_control_characters() {
    let mut report = fixture();
    report.stores[0].store = "a<b&c\u{7}".into();
    for chart in charts(&report) {
        assert!(chart.svg.contains("a&lt;b&amp;c"), "{}", chart.file);
        assert!(!chart.svg.contains('\u{7}'));
        raster_colours(&chart.svg);
    }
}

#[test]
fn a_30x_spread_is_drawn_on_a_log_scale_and_a_2x_spread_is_not() {
    let throughput = &throughput_chart(&fixture());
    assert!(throughput.svg.contains("ops/s (log scale)"));

    let narrow = report_of(vec![
        store("sqlite", "SQLite 3.46.0", 100.0),
        store("redis", "Redis 7.0.15", 200.0),
    ]);
    let mut narrow = narrow;
    for s in &mut narrow.stores {
        s.phases
            .retain(|p| p.kind == PhaseKind::Search && p.concurrency == 1);
    }
    let throughput = &throughput_chart(&narrow);
    assert_eq!(throughput.file, "throughput-classic.svg");
    assert!(throughput.svg.contains("ops/s"));
    assert!(!throughput.svg.contains("log scale"));

    assert!(wants_log(&[100.0, 3000.0]));
    assert!(!wants_log(&[100.0, 200.0, 0.0, f64::NAN]));
    assert!(!wants_log(&[100.0, 1000.0]), "10x exactly stays linear");
    assert!(!wants_log(&[]));
}

#[test]
fn client_bound_figures_are_starred_and_the_title_says_so() {
    let mut report = report_of(vec![
        store("sqlite", "SQLite 3.46.0", 100.0),
        store("redis", "Redis 7.0.15", 200.0),
    ]);
    let plain = &throughput_chart(&report);
    assert!(!plain.title.contains("client-bound"), "{}", plain.title);
    report.stores[1].phases[0].client_bound = Some("client CPU 95% of 1 loop".into());
    let marked = &throughput_chart(&report);
    assert!(
        marked.title.ends_with("; * = client-bound)"),
        "{}",
        marked.title
    );
    assert!(marked.svg.contains("client-bound"));
    let starred = marked.svg.lines().filter(|l| l.trim() == "200*").count();
    assert_eq!(starred, 1, "one starred figure");
}

#[test]
fn whiskers_span_the_runs() {
    let mut p = phase(PhaseKind::Search, "tiny", 1, 1000.0);
    assert_eq!(whisker(&p), Some((900.0, 1100.0)));
    p.runs.truncate(1);
    assert_eq!(whisker(&p), None, "one run has no spread");
    p.runs.clear();
    assert_eq!(whisker(&p), None);

    // Drawn: each whisker is three more lines than the same chart without runs.
    let with = fixture();
    let mut without = fixture();
    for s in &mut without.stores {
        for p in &mut s.phases {
            p.runs.clear();
        }
    }
    let lines = |r: &Report| throughput_chart(r).svg.matches("<polyline").count();
    // 3 stores x 6 phases, 3 lines each.
    assert_eq!(lines(&with), lines(&without) + 3 * 18);
}

#[test]
fn latency_curves_come_from_the_histogram_else_the_percentiles() {
    let report = fixture();
    let from_histogram = latency_points(&report.stores[0].phases[3]);
    assert_eq!(from_histogram.len(), 81);
    assert!(
        from_histogram.windows(2).all(|w| w[0].1 <= w[1].1),
        "monotone"
    );
    assert!(
        (from_histogram[0].1 - 20.0).abs() < 0.1,
        "{:?}",
        from_histogram[0]
    );
    assert!((from_histogram[80].0 - 4.0).abs() < 1e-9);

    let mut p = phase(PhaseKind::Search, "tiny", 1, 1000.0);
    let fallback = latency_points(&p);
    assert_eq!(fallback.len(), 7, "max left out");
    assert_eq!(fallback[1], (nines(0.5), 1000.0));
    p.latency_us.p95 = 0.0;
    p.histogram = Some("not a histogram".into());
    assert_eq!(
        latency_points(&p).len(),
        6,
        "zeros and bad histograms left out"
    );
    p.latency_us = Latency::default();
    assert!(latency_points(&p).is_empty());
}

#[test]
fn names_are_file_safe_and_labels_fit() {
    assert_eq!(slug("SEARCH tiny"), "search-tiny");
    assert_eq!(slug("YCSB f READ-MODIFY-WRITE"), "ycsb-f-read-modify-write");
    assert_eq!(slug("<&>"), "x");
    assert_eq!(
        phase_label(PhaseKind::Search, "tiny", level(4)),
        "SEARCH tiny c=4"
    );
    assert_eq!(
        phase_label(PhaseKind::Insert, "micro", level(1)),
        "INSERT micro"
    );
    assert_eq!(
        phase_label(PhaseKind::Driver, "PreparedExecConcurrent16", level(16)),
        "PreparedExecConcurrent16"
    );
    assert_eq!(
        phase_label(PhaseKind::Pool, "ConcurrentQueries", level(50)),
        "ConcurrentQueries c=50"
    );
    assert_eq!(phase_label(PhaseKind::Ycsb, "a", level(1)), "a total");
    assert_eq!(
        wrap_label("SelectPreparedLargeString", 16, 3),
        ["SelectPrepared", "LargeString"]
    );
    assert_eq!(wrap_label("SEARCH tiny c=4", 16, 3), ["SEARCH tiny c=4"]);
    assert_eq!(
        wrap_label("f READ-MODIFY-WRITE", 10, 3),
        ["f READ-", "MODIFY-", "WRITE"]
    );
    let cut = wrap_label("Averyveryverylongname", 8, 2);
    assert_eq!(cut, ["Averyve…"]);
    assert!(wrap_label("a b c d e f", 3, 2).len() <= 2);
    assert_eq!(chunks(22, 8), [0..8, 8..16, 16..22]);
    assert_eq!(chunks(16, 8), [0..8, 8..16]);
    assert_eq!(chunks(3, 8), vec![Range { start: 0, end: 3 }]);
    assert!(chunks(0, 8).is_empty());
    assert_eq!(
        pack(&["aaaa".into(), "bb".into(), "cccccc".into()], 10),
        ["aaaa · bb", "cccccc"]
    );
}

#[test]
fn many_phases_are_split_into_charts_of_at_most_eight() {
    let mut report = fixture();
    report.plan.suite = Suite::Driver;
    report.plan.concurrency = vec![level(1)];
    for (k, s) in report.stores.iter_mut().enumerate() {
        s.initial_size_bytes = None;
        s.final_size_bytes = None;
        s.phases = (0..22)
            .map(|i| {
                let mut p = phase(PhaseKind::Driver, "micro", 1, 1000.0 * (k + 1) as f64);
                p.size.name = format!("SelectPreparedLargeString{i}");
                p.runs.clear();
                p.series.clear();
                p
            })
            .collect();
    }
    let charts = charts(&report);
    let files: Vec<&str> = charts.iter().map(|c| c.file.as_str()).collect();
    assert_eq!(
        files,
        [
            "glance.svg",
            "throughput-driver-1.svg",
            "throughput-driver-2.svg",
            "throughput-driver-3.svg"
        ]
    );
    assert!(charts[3].title.contains("part 3 of 3"));
    for chart in &charts {
        raster_colours(&chart.svg);
    }
}

#[test]
fn odd_reports_give_fewer_charts_and_no_panic() {
    // Nothing ran.
    let empty = report_of(Vec::new());
    assert!(charts(&empty).is_empty());

    // A failed store with no phases and no sizes: no chart at all.
    let mut failed = StoreResult::new("postgres");
    failed.status = StoreStatus::Failed;
    failed.error = Some("connection refused".into());
    let only_failed = report_of(vec![failed.clone()]);
    assert!(charts(&only_failed).is_empty());

    // Beside a working store it adds nothing (not in any legend).
    let mut report = fixture();
    report.stores.insert(1, failed);
    for chart in charts(&report) {
        assert!(!chart.svg.contains(">\npostgres\n</text>") || chart.svg.contains("redis"));
        raster_colours(&chart.svg);
    }

    // Zero, NaN and infinite figures, a broken histogram, no info, no runs.
    let mut odd = fixture();
    let s = &mut odd.stores[0];
    s.info = None;
    s.initial_size_bytes = Some(0);
    s.final_size_bytes = None;
    s.phases[0].ops_per_s = 0.0;
    s.phases[1].ops_per_s = f64::NAN;
    s.phases[2].ops_per_s = f64::INFINITY;
    s.phases[3].histogram = Some("AAAA".into());
    s.phases[4].latency_us = Latency::default();
    s.phases[4].runs[0].ops_per_s = f64::NAN;
    odd.machine.cpu_model = String::new();
    odd.machine.cores = 0;
    for chart in charts(&odd) {
        raster_colours(&chart.svg);
    }

    // Every figure zero: no throughput, latency or scaling chart; sizes stay.
    let mut zero = fixture();
    for s in &mut zero.stores {
        for p in &mut s.phases {
            p.ops_per_s = 0.0;
            p.latency_us = Latency::default();
            p.histogram = None;
            p.runs.clear();
            p.series.clear();
        }
    }
    assert_eq!(file_names(&zero), ["sizes.svg"]);

    // One concurrency level: no scaling chart.
    let mut single = fixture();
    single.plan.concurrency = vec![level(1)];
    for s in &mut single.stores {
        s.phases.retain(|p| p.concurrency == 1);
    }
    assert!(
        file_names(&single)
            .iter()
            .all(|f| !f.starts_with("scaling"))
    );
}

#[test]
fn latency_charts_are_limited() {
    let mut report = fixture();
    for s in &mut report.stores {
        let extra: Vec<PhaseResult> = (0..20)
            .map(|i| {
                let mut p = phase(PhaseKind::Search, "micro", 1, 1000.0);
                p.size.name = format!("{}", 100 + i);
                p
            })
            .collect();
        s.phases.extend(extra);
    }
    let latency = file_names(&report)
        .into_iter()
        .filter(|f| f.starts_with("latency"))
        .count();
    assert_eq!(latency, MAX_LATENCY_CHARTS);
}

#[test]
fn file_names_stay_unique() {
    let mut charts = vec![
        Chart {
            file: "a.svg".into(),
            title: String::new(),
            svg: String::new(),
        },
        Chart {
            file: "a.svg".into(),
            title: String::new(),
            svg: String::new(),
        },
    ];
    unique_files(&mut charts);
    assert_eq!(charts[1].file, "a-2.svg");
}

#[test]
fn cpu_per_operation_is_stacked_client_under_server_where_the_server_was_read() {
    use crate::report::model::{CostSource, ServerCost};
    let mut report = fixture();
    assert!(!file_names(&report).contains(&"cpu-per-op.svg".to_string()));
    let cost = |source, server_us: Option<f64>| ServerCost {
        source,
        cpu_user_us_per_op: server_us,
        cpu_system_us_per_op: server_us.map(|_| 0.0),
        write_bytes_per_op: None,
        read_bytes_per_op: None,
        peak_memory_bytes: None,
        end_memory_bytes: None,
        logical_bytes: None,
        write_amplification: None,
        syncs_per_op: None,
        reported_per_op: Default::default(),
        series: Vec::new(),
    };
    report.stores[0].phases[0].server = Some(cost(CostSource::ClientProcess, None));
    report.stores[1].phases[0].server = Some(cost(CostSource::Processes, Some(30.0)));
    let chart = charts(&report)
        .into_iter()
        .find(|c| c.file == "cpu-per-op.svg")
        .expect("a cost chart");
    // The client's 10 us under the server's 30: 40 in all; the embedded store's own 10.
    assert!(chart.svg.contains("\n40.0\n"), "{}", chart.svg);
    assert!(chart.svg.contains("\n10.0\n"), "{}", chart.svg);
    assert!(raster_colours(&chart.svg) >= 4);
}

#[test]
fn every_store_of_a_run_has_a_colour_of_its_own_and_a_kind_keeps_its_own() {
    let named = |names: &[&str]| report_of(names.iter().map(|n| store(n, "1", 100.0)).collect());
    let colours = |report: &Report| -> Vec<RGBColor> {
        (0..report.stores.len())
            .map(|i| store_color(report, i))
            .collect()
    };
    let plain = named(&["sqlite", "postgres", "mysql", "redis"]);
    let [sqlite, postgres, mysql, redis] = colours(&plain)[..] else {
        panic!("four stores, four colours")
    };

    let variants = named(&[
        "sqlite",
        "postgres@sync",
        "postgres@async",
        "postgres@off",
        "mysql@a",
        "mysql@b",
        "redis",
    ]);
    let got = colours(&variants);
    for (i, a) in got.iter().enumerate() {
        for (j, b) in got.iter().enumerate().skip(i + 1) {
            assert_ne!(
                a, b,
                "{} and {} share a colour",
                variants.stores[i].store, variants.stores[j].store
            );
        }
    }
    // A kind's colour is the same with variants beside it; the first variant of a kind run
    // only as variants wears its kind's.
    assert_eq!((got[0], got[6]), (sqlite, redis));
    assert_eq!((got[1], got[4]), (postgres, mysql));

    // Beside the kind itself, a variant takes a colour of its own.
    let both = colours(&named(&["postgres", "postgres@async"]));
    assert_eq!(both[0], postgres);
    assert_ne!(both[1], postgres);
}
