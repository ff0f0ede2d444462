//! HTML rendering (`report.html`): one self-contained page (styles and SVG charts inline,
//! nothing fetched) that opens with the verdict and the warnings (collapsed), then the run
//! and machine, the recap tables, every chart, and each store's settings and blog-style
//! lines; a run with variants' part in `variants.rs`.

use std::fmt::Write;

use super::costs::{COST_HEADERS, COST_NOTE, cost_lines, cost_rows};
use super::facts::{phase_notes, run_facts};
use super::lines::{store_header, store_lines};
use super::model::{Report, RunStatus};
use super::tables::{
    PHASE_HEADERS, STORE_HEADERS, phase_rows, scaling_rows, store_rows, suite_rows, suite_title,
    time_rows,
};
use super::{notices, verdict};

mod markup;
pub use markup::escape;
use markup::{inline, strings, table};
mod variants;

const STYLE: &str = "
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #ffffff; --muted: #59636e;
  --line: #d1d9e0; --warn-bg: #fff8c5; --warn-fg: #3b2e00; --head: #f6f8fa; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #3d444d;
    --warn-bg: #3b2e00; --warn-fg: #f8e3a1; --head: #151b23; }
}
body { font: 15px/1.5 system-ui, -apple-system, 'Segoe UI', sans-serif; color: var(--fg);
  background: var(--bg); margin: 0 auto; padding: 1.5rem; max-width: 1100px; }
h1, h2, h3 { line-height: 1.25; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-variant-numeric: tabular-nums;
  display: block; overflow-x: auto; }
th, td { border: 1px solid var(--line); padding: 0.25rem 0.6rem; }
th { background: var(--head); text-align: left; }
td.n { text-align: right; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13px; }
pre { background: var(--head); padding: 0.75rem; overflow-x: auto; border-radius: 6px; }
.warning { background: var(--warn-bg); color: var(--warn-fg); padding: 0.5rem 0.75rem;
  border-radius: 6px; margin: 0.5rem 0; }
details.warning summary { cursor: pointer; font-weight: 600; }
details.warning ul { margin: 0.25rem 0; }
.note { color: var(--muted); font-size: 14px; margin: 0.25rem 0; }
table.glance td, table.glance th { padding: 0.1rem 0.5rem; }
table.glance tr:has(> td:first-child:not(:empty)) > td { border-top: 2px solid var(--muted); }
.facts { color: var(--muted); }
figure { margin: 1rem 0 2rem; }
figure svg { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 6px; }
figcaption { color: var(--muted); margin-top: 0.25rem; }
";

/// The run's state when it did not finish: a reader must see it before any figure.
fn run_warning(report: &Report) -> Option<String> {
    match report.status {
        RunStatus::Complete => None,
        RunStatus::Partial => Some("Partial run: not every requested store finished.".into()),
        RunStatus::Interrupted => Some(format!(
            "Interrupted run: stopped by {}; only what was measured until then.",
            report.stopped_by()
        )),
    }
}

/// The verdict: the ranking with its notes, the warnings by store (collapsed, their count
/// in the summary), the stores that did not run, and the verdict's chart.
fn glance(report: &Report, charts: &[(&str, &str)]) -> String {
    let mut out = String::new();
    let g = verdict::glance(report);
    let warnings = notices::warnings(report);
    let skipped = notices::skipped_line(report);
    if g.phases.is_empty() && warnings.is_empty() && skipped.is_none() {
        return out;
    }
    let _ = writeln!(out, "<h2>{}</h2>", verdict::HEADING);
    if let Some(line) = verdict::standings(report, &g) {
        let _ = writeln!(out, "<p>{}</p>", escape(&line));
    }
    if !g.phases.is_empty() {
        let ranking = table(
            &strings(&verdict::headers(&g)),
            &verdict::rows(&g),
            verdict::NUMERIC_FROM,
        );
        out.push_str(&ranking.replacen("<table>", "<table class=\"glance\">", 1));
        for note in verdict::notes(&g) {
            let _ = writeln!(out, "<p class=\"note\">{}</p>", inline(&note));
        }
    }
    if !warnings.is_empty() {
        let _ = writeln!(
            out,
            "<details class=\"warning\">\n<summary>{}</summary>",
            escape(&notices::warnings_summary(report, &warnings))
        );
        for (store, lines) in &warnings {
            let _ = writeln!(out, "<p><strong>{}</strong></p>\n<ul>", escape(store));
            for line in lines {
                let _ = writeln!(out, "<li>{}</li>", escape(line));
            }
            out.push_str("</ul>\n");
        }
        out.push_str("</details>\n");
    }
    if let Some(line) = skipped {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(&line));
    }
    if let Some((title, svg)) = charts.iter().find(|(t, _)| *t == verdict::CHART_TITLE) {
        out.push_str(&figure(title, svg));
    }
    out
}

/// A chart with its caption.
fn figure(title: &str, svg: &str) -> String {
    format!(
        "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
        strip_prolog(svg),
        escape(title)
    )
}

/// `report.html` for a run, with its charts (`(title, svg)`, in reading order).
pub fn render(report: &Report, charts: &[(&str, &str)]) -> String {
    let mut out =
        String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        out,
        "<title>dbcompare results: {} suite, {}</title>",
        escape(&report.plan.suite.to_string()),
        escape(&report.plan.stores.join(", "))
    );
    let _ = writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>");
    out.push_str("<h1>dbcompare results</h1>\n");
    if let Some(w) = run_warning(report) {
        let _ = writeln!(out, "<p class=\"warning\">{}</p>", escape(&w));
    }
    out.push_str(&glance(report, charts));
    out.push_str("<h2>The run</h2>\n<ul class=\"facts\">\n");
    for fact in run_facts(report) {
        let _ = writeln!(out, "<li>{}</li>", inline(&fact).replace("\n  - ", "<br>"));
    }
    out.push_str("</ul>\n");

    out.push_str("<h2>Recap</h2>\n");
    match suite_rows(report) {
        Some((headers, rows)) => {
            let _ = writeln!(out, "<p>{}:</p>", escape(suite_title(report)));
            out.push_str(&table(&headers, &rows, 1));
        }
        None => {
            out.push_str(
                "<p>Wall time per phase in ms (the blog's figures), and sizes on disk:</p>\n",
            );
            let (headers, rows) = time_rows(report);
            out.push_str(&table(&headers, &rows, 1));
        }
    }
    if let Some((headers, rows)) = super::blog::reference_rows(report) {
        out.push_str("<h3>Beside the 2016 blog</h3>\n<ul>\n");
        for note in super::blog::notes(report) {
            let _ = writeln!(out, "<li>{}</li>", inline(&note));
        }
        out.push_str("</ul>\n<p>Wall time per phase in ms, now and in 2016:</p>\n");
        out.push_str(&table(&headers, &rows, 1));
        let ranks: Vec<Vec<String>> = super::blog::rank_rows(report)
            .into_iter()
            .map(|(phase, now, then)| vec![phase, now, then])
            .collect();
        if !ranks.is_empty() {
            out.push_str("<p>Rank order, fastest first, of the stores in both:</p>\n");
            out.push_str(&table(&strings(&["phase", "now", "2016"]), &ranks, 3));
        }
    }
    out.push_str(&variants::section(report));
    let rest: Vec<&(&str, &str)> = charts
        .iter()
        .filter(|(title, _)| *title != verdict::CHART_TITLE)
        .collect();
    if !rest.is_empty() {
        out.push_str("<h2>Charts</h2>\n");
        for (title, svg) in rest {
            out.push_str(&figure(title, svg));
        }
    }
    let rows = phase_rows(report);
    if !rows.is_empty() {
        out.push_str(&format!(
            "<h2>Every phase</h2>\n<p>Latencies per operation in microseconds{}; cpu = client process CPU time per operation.</p>\n",
            super::tables::open_loop_note(report)
        ));
        out.push_str(&table(&strings(&PHASE_HEADERS), &rows, 3));
    }
    let costs = cost_rows(report);
    if !costs.is_empty() {
        out.push_str("<h2>What each phase cost</h2>\n");
        let _ = writeln!(out, "<p>{}</p>", escape(COST_NOTE));
        out.push_str(&table(&strings(&COST_HEADERS), &costs, 4));
        let space = cost_lines(report);
        if !space.is_empty() {
            out.push_str("<ul>\n");
            for line in space {
                let _ = writeln!(out, "<li>{}</li>", escape(&line));
            }
            out.push_str("</ul>\n");
        }
    }
    if let Some((headers, rows)) = scaling_rows(report) {
        out.push_str(
            "<p>Search throughput by concurrency (ops/s, with p99 latency in microseconds):</p>\n",
        );
        out.push_str(&table(&headers, &rows, 2));
    }
    for (heading, lines) in phase_notes(report) {
        let _ = writeln!(out, "<p>{}:</p>\n<ul>", escape(heading));
        for line in lines {
            let _ = writeln!(out, "<li>{}</li>", escape(&line));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("<h2>Stores</h2>\n");
    out.push_str(&table(
        &strings(&STORE_HEADERS),
        &store_rows(report),
        STORE_HEADERS.len(),
    ));
    for r in report.stores.iter().filter(|s| verdict::ran(s)) {
        let _ = writeln!(
            out,
            "<h3>{}</h3>",
            escape(store_header(r).trim_matches(|c| c == '=' || c == ' '))
        );
        out.push_str("<ul>\n");
        if let Some(d) = &r.deployment {
            let mut runs = d.describe();
            if let Some(server) = &d.server {
                let _ = write!(runs, ", {server}");
            }
            if let Some(url) = d.url.as_deref().filter(|_| d.kind == "url") {
                let _ = write!(runs, ", {url}");
            }
            let _ = writeln!(out, "<li>runs: {}</li>", escape(&runs));
        }
        if let Some(i) = &r.info {
            let settings: Vec<String> = i
                .settings
                .iter()
                .map(|(k, v)| format!("<code>{}={}</code>", escape(k), escape(v)))
                .collect();
            let _ = writeln!(out, "<li>settings read back: {}</li>", settings.join(", "));
            let _ = writeln!(out, "<li>search: {}</li>", escape(&i.search_path));
            let _ = writeln!(out, "<li>write: {}</li>", escape(&i.write_path));
            let _ = writeln!(out, "<li>size: {}</li>", escape(&i.size_method));
        }
        out.push_str("</ul>\n");
        let _ = writeln!(out, "<pre>{}</pre>", escape(&store_lines(r).join("\n")));
    }
    let sites = super::alloc_sites::phases(report);
    if !sites.is_empty() {
        let _ = writeln!(
            out,
            "<h2>{}</h2>\n<p>{}</p>",
            escape(super::alloc_sites::HEADING),
            inline(super::alloc_sites::NOTE)
        );
        for phase in sites {
            let _ = writeln!(
                out,
                "<h3>{}</h3>\n<p>{}</p>",
                escape(&phase.title),
                escape(&phase.owners)
            );
            out.push_str(&table(
                &strings(&super::alloc_sites::HEADERS),
                &phase.rows,
                super::alloc_sites::NUMERIC_FROM,
            ));
        }
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// An SVG document without its XML declaration, to sit inside HTML.
fn strip_prolog(svg: &str) -> &str {
    match svg.trim_start().strip_prefix("<?xml") {
        Some(rest) => rest
            .split_once("?>")
            .map_or(svg, |(_, body)| body.trim_start()),
        None => svg.trim_start(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(inline("suite `a<b`, ok"), "suite <code>a&lt;b</code>, ok");
    }

    #[test]
    fn svg_prolog_is_dropped() {
        assert_eq!(strip_prolog("<?xml version=\"1.0\"?>\n<svg/>"), "<svg/>");
        assert_eq!(strip_prolog("<svg/>"), "<svg/>");
    }
}
