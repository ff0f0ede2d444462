//! The outputs of a real SQLite run: run.json against the published schema, every output
//! re-rendered from it by `dbcompare report` without a database, `dbcompare compare` on
//! two real runs, report.html opened in headless Chromium (and a real SQLite and
//! PostgreSQL run's first screen as a reader sees it), and the loaders fed random and
//! truncated bytes.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use dbcompare::report::model::{Report, SCHEMA_VERSION};
use dbcompare::report::{chart, json, notices, verdict};
use proptest::prelude::*;

/// One real run (SQLite, micro, two measured runs, concurrency 1 and 2), made once for
/// every test here; its directory lives as long as the test process.
fn real_run() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let status = dbcompare()
            .args([
                "--store",
                "sqlite",
                "--sizes",
                "micro",
                "--warmup-runs",
                "0",
            ])
            .args(["--runs", "3", "--concurrency", "1,2", "--quiet", "--out"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(status.success(), "the SQLite run failed: {status}");
        dir
    })
    .path()
}

fn dbcompare() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin("dbcompare"))
}

fn validator() -> jsonschema::Validator {
    common::schema_validator()
}

#[test]
fn a_real_run_writes_every_output_and_validates_against_the_schema() {
    let dir = real_run();
    for file in ["run.json", "results.md", "report.html", "results.csv"] {
        assert!(dir.join(file).is_file(), "{file} not written");
    }
    let text = std::fs::read_to_string(dir.join("run.json")).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let errors: Vec<String> = validator()
        .iter_errors(&value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");

    // Every chart is written and embedded in results.md.
    let report = json::parse(&text).unwrap();
    let charts = chart::charts(&report);
    assert!(charts.len() >= 3, "only {} charts", charts.len());
    let md = std::fs::read_to_string(dir.join("results.md")).unwrap();
    for c in &charts {
        let file = format!("charts/{}", c.file);
        assert!(dir.join(&file).is_file(), "{file} not written");
        assert!(
            md.contains(&format!("]({file})")),
            "{file} not in results.md"
        );
    }
    // Readable by others: reports get served and shared.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir.join("report.html"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644);
}

#[test]
fn report_re_renders_every_output_without_a_database() {
    let run = real_run().join("run.json");
    let out = tempfile::tempdir().unwrap();
    let output = dbcompare()
        .arg("report")
        .arg(&run)
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    // The same files as the run wrote, with the same contents.
    let list = |dir: &Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| !n.starts_with('.'))
            .collect()
    };
    let mut names: Vec<String> = list(real_run())
        .into_iter()
        .filter(|n| n != "charts")
        .chain(
            list(&real_run().join("charts"))
                .into_iter()
                .map(|n| format!("charts/{n}")),
        )
        .collect();
    names.sort();
    assert!(names.len() > 8, "{names:?}");
    for name in &names {
        let original = std::fs::read_to_string(real_run().join(name)).unwrap();
        let rendered = std::fs::read_to_string(out.path().join(name))
            .unwrap_or_else(|e| panic!("{name} not re-rendered: {e}"));
        assert_eq!(original, rendered, "{name} differs");
    }

    // One format on stdout.
    let csv = dbcompare()
        .arg("report")
        .arg(&run)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    assert!(csv.status.success());
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert!(csv.starts_with("suite,store,store_status,"), "{csv}");
    assert!(csv.lines().any(|l| l.starts_with("classic,sqlite,ok,")));

    // `--series` alone is the series' CSV: series.csv alone with --out.
    let series = tempfile::tempdir().unwrap();
    let output = dbcompare()
        .arg("report")
        .arg(&run)
        .arg("--series")
        .arg("--out")
        .arg(series.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let written = std::fs::read_to_string(series.path().join("series.csv")).unwrap();
    assert_eq!(
        written,
        std::fs::read_to_string(real_run().join("series.csv")).unwrap()
    );
    assert!(!series.path().join("run.json").exists());
    // Beside another format only, it is refused.
    let refused = dbcompare()
        .arg("report")
        .arg(&run)
        .args(["--series", "--format", "md"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
}

/// `dbcompare schema` prints the published file as it is, in a build with or without the
/// stores built on request.
#[test]
fn the_schema_command_prints_the_published_schema() {
    let out = dbcompare().arg("schema").output().unwrap();
    assert!(out.status.success());
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/run.schema.json");
    let published = std::fs::read_to_string(path).unwrap();
    let printed = String::from_utf8(out.stdout).unwrap();
    assert_eq!(printed.trim_end(), published.trim_end());
}

#[test]
fn report_and_compare_refuse_bad_files_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(real_run().join("run.json")).unwrap();
    let write = |name: &str, text: &str| -> PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let future = format!("schema_version {}", SCHEMA_VERSION + 1);
    let cases = [
        (write("empty.json", ""), "is empty"),
        (
            write("truncated.json", &good[..good.len() / 2]),
            "ends early",
        ),
        (write("text.json", "hello"), "not JSON"),
        (
            write("shape.json", r#"{"schema_version": 1, "stores": 3}"#),
            "not the layout",
        ),
        (
            write(
                "future.json",
                &good.replacen(
                    &format!("\"schema_version\": {SCHEMA_VERSION}"),
                    &format!("\"schema_version\": {}", SCHEMA_VERSION + 1),
                    1,
                ),
            ),
            future.as_str(),
        ),
        (dir.path().join("absent.json"), "cannot read it"),
    ];
    for (path, expected) in &cases {
        for args in [vec!["report"], vec!["compare"]] {
            let mut cmd = dbcompare();
            cmd.args(&args).arg(path);
            if args[0] == "compare" {
                cmd.arg(real_run().join("run.json"));
            }
            let output = cmd.output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{args:?} {path:?}: {stderr}");
            assert!(
                stderr.contains(&path.display().to_string()) && stderr.contains(expected),
                "{args:?} {path:?}: {stderr}"
            );
            assert!(!stderr.contains("panicked"), "{stderr}");
        }
    }
    // An unwritable --out: exit 2 before anything is read.
    let file = write("file", "x");
    let output = dbcompare()
        .arg("report")
        .arg(real_run().join("run.json"))
        .arg("--out")
        .arg(file.join("sub"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--out"));
}

#[test]
fn compare_of_two_real_runs() {
    let run = real_run().join("run.json");
    let output = dbcompare()
        .arg("compare")
        .arg(&run)
        .arg(&run)
        .args(["--fail-if-slower", "1"])
        .output()
        .unwrap();
    let md = String::from_utf8(output.stdout).unwrap();
    // A run against itself: no difference, no significant change, exit 0.
    assert_eq!(output.status.code(), Some(0), "{md}");
    assert!(
        md.contains("None: same plan, machine, versions and settings."),
        "{md}"
    );
    assert!(md.contains("| SEARCH micro | ops/s |"), "{md}");
    assert!(md.contains("no significant change"), "{md}");
    assert!(
        !md.contains("**faster**") && !md.contains("**slower**"),
        "{md}"
    );

    // A copy of the run with every phase 30% slower fails --fail-if-slower 10. The real
    // runs' spread on a noisy machine can hide 30% at 3 runs a side, so both sides get
    // the same narrow spread (+-1% around each phase's own rate) before one is slowed.
    let mut report = json::parse(&std::fs::read_to_string(&run).unwrap()).unwrap();
    for p in &mut report.stores[0].phases {
        let rate = p.ops_per_s;
        for (i, r) in p.runs.iter_mut().enumerate() {
            r.ops_per_s = rate * (0.99 + 0.01 * (i % 3) as f64);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.json");
    std::fs::write(&base, json::render(&report)).unwrap();
    for p in &mut report.stores[0].phases {
        for r in &mut p.runs {
            r.ops_per_s *= 0.7;
        }
    }
    let slower = dir.path().join("slower.json");
    std::fs::write(&slower, json::render(&report)).unwrap();
    let output = dbcompare()
        .arg("compare")
        .arg(&base)
        .arg(&slower)
        .args(["--fail-if-slower", "10"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("30.0% worse"), "{stderr}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("**slower**"));

    // The gate against a copy of the run: exit 1 naming why, or 0.
    let gate = |report: &Report, name: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, json::render(report)).unwrap();
        let output = dbcompare()
            .arg("compare")
            .arg(&base)
            .arg(&path)
            .args(["--fail-if-slower", "10"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        (output.status.code(), stderr)
    };
    let mut report = json::parse(&std::fs::read_to_string(&base).unwrap()).unwrap();
    assert_eq!(gate(&report, "same.json").0, Some(0));
    // A phase measured once by design (YCSB's load) in runs that asked for 3: not judged,
    // and no reason to fail.
    let mut once_by_design = report.clone();
    once_by_design.stores[0].phases[0].runs.clear();
    let (code, stderr) = gate(&once_by_design, "load.json");
    assert_eq!(code, Some(0), "{stderr}");
    // From a run of one: nothing can be judged, and the gate does not pass it.
    report.plan.runs = std::num::NonZeroU32::new(1).unwrap();
    for p in &mut report.stores[0].phases {
        p.runs.clear();
    }
    let (code, stderr) = gate(&report, "once.json");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("--fail-if-slower cannot judge"), "{stderr}");
    assert!(stderr.contains("--runs 3 or more"), "{stderr}");
    // A store the new run lacks: it cannot be seen, so it does not pass.
    let mut lacking = json::parse(&std::fs::read_to_string(&base).unwrap()).unwrap();
    let gone = lacking.stores.remove(0).store;
    let (code, stderr) = gate(&lacking, "lacking.json");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the new run lacks 1 of what the base measured ({gone})"
        )),
        "{stderr}"
    );
    // Both at once (a run of one that lacks a phase): both reasons are said.
    let mut both = report.clone();
    both.stores[0].phases.pop();
    let (code, stderr) = gate(&both, "both.json");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("the new run lacks 1"), "{stderr}");
    assert!(stderr.contains("--fail-if-slower cannot judge"), "{stderr}");
}

/// Headless Chromium, as the tests start it: no sandbox (root), no GPU, no background
/// network (this machine's network is closed), a throw-away profile.
/// The DOM the browser built of the page `cmd` names, once its scripts ran.
fn dump_dom(cmd: &mut Command) -> String {
    let dom = cmd.arg("--dump-dom").output().unwrap_or_else(|e| {
        panic!("chromium did not start ({e}): provisioning/install.sh chromium installs it")
    });
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    String::from_utf8(dom.stdout).unwrap()
}

fn chromium(profile: &Path) -> Command {
    let mut cmd = Command::new("chromium");
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

#[test]
fn report_html_renders_in_a_real_browser() {
    let dir = real_run();
    let page = format!("file://{}", dir.join("report.html").display());
    let profile = tempfile::tempdir().unwrap();
    let dom = dump_dom(chromium(profile.path()).arg(&page));
    let report = json::parse(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    // Every chart is in the page the browser built, as an SVG with its caption.
    let charts = chart::charts(&report);
    assert_eq!(dom.matches("<svg").count(), charts.len(), "{dom}");
    for c in &charts {
        let caption = format!(
            "<figcaption>{}</figcaption>",
            dbcompare::report::html::escape(&c.title)
        );
        assert!(dom.contains(&caption), "{caption} not in the page");
    }
    for table in [
        "<h2>Recap</h2>",
        "<h2>Every phase</h2>",
        "<h2>Stores</h2>",
        "<table>",
    ] {
        assert!(dom.contains(table), "{table} not in the page");
    }

    let shot = profile.path().join("page.png");
    let output = chromium(profile.path())
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1200,2400")
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let pixmap = resvg::tiny_skia::Pixmap::load_png(&shot).unwrap();
    let mut colours: Vec<[u8; 4]> = pixmap
        .pixels()
        .iter()
        .step_by(7)
        .map(|p| [p.red(), p.green(), p.blue(), p.alpha()])
        .collect();
    colours.sort_unstable();
    colours.dedup();
    // A blank page is one colour; text alone a few dozen shades; charts add their own.
    assert!(
        colours.len() > 200,
        "the screenshot has {} colours",
        colours.len()
    );
}

/// A real run of SQLite and PostgreSQL (micro, three runs) whose searches were asked for
/// at a rate neither keeps, so that it has warnings to show; made once.
fn two_store_run() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let status = dbcompare()
            .args(["--store", "sqlite,postgres", "--sizes", "micro"])
            .args(["--warmup-runs", "0", "--runs", "3", "--rate", "1000000"])
            .args(["--quiet", "--out"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(
            status.success(),
            "the SQLite and PostgreSQL run failed: {status}"
        );
        dir
    })
    .path()
}

/// Run in the page once it has loaded: where the verdict table and the warnings sit in the
/// window, whether the warnings are collapsed, and every resource the page fetched, as JSON
/// in a `<pre id="probe">` appended to the page.
const PROBE: &str = r#"<script>
window.addEventListener('load', () => {
  const table = document.querySelector('table.glance');
  const details = document.querySelector('details.warning');
  const item = details && details.querySelector('li');
  const out = {
    width: innerWidth,
    height: innerHeight,
    first_heading: document.querySelector('h2').textContent,
    table_bottom: table && table.getBoundingClientRect().bottom,
    table_rows: table && table.tBodies[0].rows.length,
    warnings_bottom: details && details.getBoundingClientRect().bottom,
    warnings_open: details && details.open,
    warnings_summary: details && details.querySelector('summary').textContent,
    warning_shown: !!item && item.checkVisibility(),
    fetched: performance.getEntriesByType('resource').map(e => e.name),
  };
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"#;

/// Opens `page` (with [`PROBE`] added before `</body>`) in headless Chromium at 1400x900
/// and returns what the probe found.
fn probe(page: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("page.html");
    std::fs::write(
        &file,
        page.replacen("</body>", &format!("{PROBE}\n</body>"), 1),
    )
    .unwrap();
    let dom = dump_dom(
        chromium(&dir.path().join("profile"))
            .arg("--window-size=1400,900")
            .arg(format!("file://{}", file.display())),
    );
    let json = dom
        .split_once("<pre id=\"probe\">")
        .and_then(|(_, rest)| rest.split_once("</pre>"))
        .unwrap_or_else(|| panic!("the probe did not run: {dom}"))
        .0
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap()
}

#[test]
fn report_html_shows_the_verdict_and_the_collapsed_warnings_on_its_first_screen() {
    let dir = two_store_run();
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let report = json::parse(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    let seen = probe(&page);
    let number = |key: &str| {
        seen[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{key} not found: {seen}"))
    };
    assert_eq!(number("width"), 1400.0, "{seen}");
    let height = number("height");
    assert!(height > 600.0, "{seen}");
    // The page opens with the verdict: both stores in both phases, whole on the first screen.
    assert_eq!(seen["first_heading"], verdict::HEADING, "{seen}");
    assert_eq!(number("table_rows"), 4.0, "{seen}");
    assert!(number("table_bottom") <= height, "{seen}");
    // The warnings below it, in one collapsed block whose summary counts them.
    let warnings = notices::warnings(&report);
    assert!(!warnings.is_empty(), "the run has no warnings to show");
    assert_eq!(
        seen["warnings_summary"],
        notices::warnings_summary(&report, &warnings),
        "{seen}"
    );
    assert_eq!(seen["warnings_open"], false, "{seen}");
    assert_eq!(seen["warning_shown"], false, "{seen}");
    assert!(number("warnings_bottom") <= height, "{seen}");
    // Nothing fetched: the page is whole in itself.
    assert_eq!(seen["fetched"], serde_json::json!([]), "{seen}");

    // The probe sees a fetch where there is one, and an opened block's warnings.
    let fetching = page
        .replacen(
            "</body>",
            "<img src=\"http://fetched.invalid/x.png\" alt=\"\">\n</body>",
            1,
        )
        .replacen(
            "<details class=\"warning\">",
            "<details class=\"warning\" open>",
            1,
        );
    let seen = probe(&fetching);
    assert_eq!(
        seen["fetched"],
        serde_json::json!(["http://fetched.invalid/x.png"]),
        "{seen}"
    );
    assert_eq!(seen["warning_shown"], true, "{seen}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn the_loader_never_panics_on_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = json::parse(&text);
    }

    #[test]
    fn the_loader_refuses_every_truncation_of_a_real_run(cut in 0.0f64..1.0) {
        let good = std::fs::read_to_string(real_run().join("run.json")).unwrap();
        let mut at = (good.len() as f64 * cut) as usize;
        while !good.is_char_boundary(at) {
            at -= 1;
        }
        // Only the closing brace and newline may go and leave a valid run.
        let prefix = &good[..at];
        let result = json::parse(prefix);
        if at < good.trim_end().len() {
            prop_assert!(result.is_err(), "a cut at {} of {} was accepted", at, good.len());
        }
    }

    #[test]
    fn the_loader_never_panics_on_a_mutated_real_run(at in 0usize..20_000, byte in any::<u8>()) {
        let good = std::fs::read_to_string(real_run().join("run.json")).unwrap();
        let mut bytes = good.into_bytes();
        let at = at % bytes.len();
        bytes[at] = byte;
        let text = String::from_utf8_lossy(&bytes);
        let _ = json::parse(&text);
    }
}

fn real_report() -> Report {
    json::load(&real_run().join("run.json")).unwrap()
}

/// The wall-time table: every concurrency level's searches under their own label, the
/// lowest first whatever order `--concurrency` gave, and a phase stopped early shows no
/// time as if it were the phase's.
#[test]
fn the_time_table_labels_each_level_and_shows_no_time_of_a_phase_stopped_early() {
    use dbcompare::report::model::PhaseKind;
    use dbcompare::report::tables::time_rows;
    let mut report = real_report();
    report.plan.concurrency.reverse();
    let s = &report.stores[0];
    let at = |level: u32| {
        let p = s
            .phases
            .iter()
            .find(|p| p.kind == PhaseKind::Search && p.concurrency.get() == level)
            .unwrap();
        format!("{:.2}", p.wall_ms)
    };
    let (c1, c2) = (at(1), at(2));
    let (_, rows) = time_rows(&report);
    assert_eq!(row_of(&rows, "SEARCH micro 100"), c1, "{rows:?}");
    assert_eq!(
        row_of(&rows, "SEARCH micro 100 (concurrency 2)"),
        c2,
        "{rows:?}"
    );
    for p in &mut report.stores[0].phases {
        p.incomplete |= p.kind == PhaseKind::Insert;
    }
    let (_, rows) = time_rows(&report);
    assert_eq!(row_of(&rows, "INSERT micro 100"), "stopped early");
}

fn row_of(rows: &[Vec<String>], name: &str) -> String {
    rows.iter().find(|r| r[0] == name).unwrap()[1].clone()
}

/// The 2016 blog's figures stand beside a run made as the blog's was: not beside an open
/// loop's (its time is its schedule's), nor beside a phase stopped early; a size is the
/// blog's by its records, whatever its name.
#[test]
fn the_blog_reference_is_set_beside_the_blogs_kind_of_run_only() {
    use dbcompare::report::blog::reference_rows;
    use dbcompare::report::model::PhaseKind;
    let mut report = real_report();
    // A store of the blog's, and the size by number.
    report.stores[0].store = "postgres".to_string();
    report.plan.sizes[0].name = "100".to_string();
    for p in &mut report.stores[0].phases {
        p.size.name = "100".to_string();
    }
    let (_, rows) = reference_rows(&report).expect("a run as the blog's");
    let insert = rows.iter().find(|r| r[0] == "INSERT 100 100").unwrap();
    assert_ne!(insert[1], "-", "{rows:?}");
    let mut stopped = report.clone();
    for p in &mut stopped.stores[0].phases {
        p.incomplete |= p.kind == PhaseKind::Insert;
    }
    let (_, rows) = reference_rows(&stopped).unwrap();
    let insert = rows.iter().find(|r| r[0] == "INSERT 100 100").unwrap();
    assert_eq!(insert[1], "-", "{rows:?}");
    let mut open_loop = report.clone();
    open_loop.plan.rate = Some(2000.0);
    assert!(reference_rows(&open_loop).is_none());
    let mut no_one = report;
    no_one.plan.concurrency.retain(|c| c.get() != 1);
    assert!(reference_rows(&no_one).is_none());
}

/// A command refused after its `--out` was prepared leaves no empty directory behind; one
/// that writes keeps it, and a directory that was there before is left as it was.
#[test]
fn a_refused_command_leaves_no_empty_out_directory() {
    let dir = tempfile::tempdir().unwrap();
    let saved = real_run().join("run.json");
    // Its parent made with it goes too.
    let out = dir.path().join("parent").join("new");
    let status = |args: &[&std::ffi::OsStr]| dbcompare().args(args).status().unwrap().code();
    let missing = dir.path().join("missing.json");
    for refused in [
        vec![
            "report".as_ref(),
            missing.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ],
        vec![
            "merge".as_ref(),
            saved.as_os_str(),
            saved.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ],
    ] {
        assert_eq!(status(&refused), Some(2), "{refused:?}");
        assert!(!dir.path().join("parent").exists(), "{refused:?} left it");
    }
    let before = dir.path().join("before");
    std::fs::create_dir(&before).unwrap();
    let refused = [
        "report".as_ref(),
        missing.as_os_str(),
        "--out".as_ref(),
        before.as_os_str(),
    ];
    assert_eq!(status(&refused), Some(2));
    assert!(
        before.is_dir(),
        "a directory given that was there must stay"
    );
    let written = [
        "report".as_ref(),
        saved.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ];
    assert_eq!(status(&written), Some(0));
    assert!(out.join("results.md").exists());
}
