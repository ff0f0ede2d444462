//! Markdown rendering (`results.md`): the verdict, the run and machine, the blog's sections
//! per store and the recap tables; a store's variants' parts in `variants.rs`.

use std::fmt::Write;

use super::costs::{COST_HEADERS, COST_NOTE, cost_lines, cost_rows};
use super::facts::{client_bound_lines, phase_notes, run_facts};
use super::format::human_size;

mod markup;
use markup::table;
mod variants;
use super::lines::{runs_block, store_header, store_lines};
use super::model::{PhaseKind, Report, RunStatus};
use super::tables::{
    PHASE_HEADERS, STORE_HEADERS, phase_rows, scaling_rows, store_rows, suite_rows, suite_title,
    time_rows,
};
use super::{notices, verdict};

/// The blog's recap: one row per phase, one column per store, wall time in ms.
fn time_table(report: &Report) -> String {
    let (headers, rows) = time_rows(report);
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    table(&headers, &rows, 1)
}

/// The verdict, with its chart when the charts are written beside (`(file, title)`).
fn glance(report: &Report, charts: &[(&str, &str)]) -> String {
    let mut out = String::new();
    let g = verdict::glance(report);
    let warnings = notices::warnings(report);
    let skipped = notices::skipped_line(report);
    if g.phases.is_empty() && warnings.is_empty() && skipped.is_none() {
        return out;
    }
    let _ = writeln!(out, "## {}\n", verdict::HEADING);
    if let Some(line) = verdict::standings(report, &g) {
        let _ = writeln!(out, "{line}\n");
    }
    if !g.phases.is_empty() {
        out.push_str(&table(
            &verdict::headers(&g),
            &verdict::rows(&g),
            verdict::NUMERIC_FROM,
        ));
        out.push('\n');
        for note in verdict::notes(&g) {
            let _ = writeln!(out, "{note}\n");
        }
    }
    if !warnings.is_empty() {
        let _ = writeln!(
            out,
            "**{}**\n",
            notices::warnings_summary(report, &warnings)
        );
        for (store, lines) in &warnings {
            let _ = writeln!(out, "- {store}");
            for line in lines {
                let _ = writeln!(out, "  - {line}");
            }
        }
        out.push('\n');
    }
    if let Some(line) = skipped {
        let _ = writeln!(out, "{line}\n");
    }
    if let Some((file, title)) = charts.iter().find(|(_, t)| *t == verdict::CHART_TITLE) {
        let _ = writeln!(out, "![{title}]({file})\n");
    }
    out
}

/// `results.md` for a run.
pub fn render(report: &Report) -> String {
    page(report, &[])
}

/// `results.md`, with the charts written beside it (`(file, title)`): the verdict's in the
/// verdict, the others after the recap.
fn page(report: &Report, charts: &[(&str, &str)]) -> String {
    let mut out = String::from("# dbcompare results\n\n");
    match report.status {
        RunStatus::Complete => {}
        RunStatus::Partial => {
            out.push_str("**PARTIAL RUN**: not every requested store finished.\n\n")
        }
        RunStatus::Interrupted => {
            let _ = write!(
                out,
                "**INTERRUPTED RUN**: stopped by {}; only what was measured until then.\n\n",
                report.stopped_by()
            );
        }
    }
    out.push_str(&glance(report, charts));
    out.push_str("## The run\n\n");
    for fact in run_facts(report) {
        let _ = writeln!(out, "- {fact}");
    }
    out.push('\n');
    let groups = super::variants::groups(report);
    for r in report.stores.iter().filter(|s| verdict::ran(s)) {
        if let Some(g) = groups.iter().find(|g| g.variants[0] == r.store) {
            out.push_str(&variants::group_block(g));
        }
        let _ = writeln!(
            out,
            "## {}\n",
            store_header(r).trim_matches(|c| c == '=' || c == ' ')
        );
        if let Some(d) = &r.deployment {
            let _ = write!(out, "- runs: {}", d.describe());
            if let Some(server) = &d.server {
                let _ = write!(out, ", `{server}`");
            }
            if let Some(url) = d.url.as_deref().filter(|_| d.kind == "url") {
                let _ = write!(out, ", {url}");
            }
            out.push('\n');
        }
        if let Some(i) = &r.info {
            let settings: Vec<String> = i
                .settings
                .iter()
                .map(|(k, v)| format!("`{k}={v}`"))
                .collect();
            let _ = writeln!(out, "- settings read back: {}", settings.join(", "));
            let _ = writeln!(out, "- search: {}", i.search_path);
            let _ = writeln!(out, "- write: {}", i.write_path);
            let _ = writeln!(out, "- size: {}", i.size_method);
        }
        let mut operations: Vec<(&str, &str)> = Vec::new();
        for p in r.phases.iter().filter(|p| p.kind == PhaseKind::Ycsb) {
            let kind = p.size.name.split_once(' ').map(|(_, k)| k);
            if let (Some(kind), Some(how)) = (kind, p.operation.as_deref())
                && !operations.iter().any(|(k, _)| *k == kind)
            {
                operations.push((kind, how));
            }
        }
        let listed_operations = !operations.is_empty();
        for (kind, how) in operations {
            let _ = writeln!(out, "- {kind}: {how}");
        }
        if let Some(why) = &r.size_error {
            let _ = writeln!(out, "- size unavailable: {why}");
        }
        for (what, bytes) in &r.final_size_extra {
            let _ = writeln!(
                out,
                "- also measured at the end: {what} {}",
                human_size(*bytes)
            );
        }
        if r.deployment.is_some() || r.info.is_some() || r.size_error.is_some() || listed_operations
        {
            out.push('\n');
        }
        let _ = writeln!(out, "```\n{}\n```\n", store_lines(r).join("\n"));
        let blocks: Vec<String> = r.phases.iter().flat_map(runs_block).collect();
        if !blocks.is_empty() {
            let _ = writeln!(
                out,
                "Every measured run:\n\n```\n{}\n```\n",
                blocks.join("\n")
            );
        }
    }
    match suite_rows(report) {
        Some((headers, rows)) => {
            let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
            let _ = write!(
                out,
                "## Recap\n\n{}:\n\n{}",
                suite_title(report),
                table(&headers, &rows, 1)
            );
        }
        None => {
            out.push_str(
                "## Recap\n\nWall time per phase in ms (the blog's figures), and sizes on disk:\n\n",
            );
            out.push_str(&time_table(report));
        }
    }
    if let Some((headers, rows)) = super::blog::reference_rows(report) {
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        out.push_str("\n### Beside the 2016 blog\n\n");
        for note in super::blog::notes(report) {
            let _ = writeln!(out, "- {note}");
        }
        out.push_str("\nWall time per phase in ms, now and in 2016:\n\n");
        out.push_str(&table(&headers, &rows, 1));
        let ranks = super::blog::rank_rows(report);
        if !ranks.is_empty() {
            out.push_str("\nRank order, fastest first, of the stores in both:\n\n| phase | now | 2016 |\n|---|---|---|\n");
            for (phase, now, then) in ranks {
                let _ = writeln!(out, "| {phase} | {now} | {then} |");
            }
        }
    }
    out.push_str(&variants::section(report));
    let rows = phase_rows(report);
    if !rows.is_empty() {
        out.push_str(&format!(
            "\nEvery phase (latencies per operation in microseconds{}; cpu = client process CPU time per operation):\n\n",
            super::tables::open_loop_note(report)
        ));
        out.push_str(&table(&PHASE_HEADERS, &rows, 3));
    }
    let costs = cost_rows(report);
    if !costs.is_empty() {
        out.push_str(&format!("\n{COST_NOTE}\n\n"));
        out.push_str(&table(&COST_HEADERS, &costs, 4));
        for line in cost_lines(report) {
            let _ = writeln!(out, "- {line}");
        }
    }
    if let Some((headers, rows)) = scaling_rows(report) {
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        out.push_str("\nSearch throughput by concurrency (ops/s, with p99 latency in microseconds): where each store stops scaling:\n\n");
        out.push_str(&table(&headers, &rows, 2));
    }
    let bound = client_bound_lines(report);
    if !bound.is_empty() {
        out.push_str(
            "\nClient-bound phases (their figures are the client's limit, not the store's):\n\n",
        );
        for line in bound {
            let _ = writeln!(out, "- {line}");
        }
    }
    for (heading, lines) in phase_notes(report) {
        let _ = writeln!(out, "\n{heading}:\n");
        for line in lines {
            let _ = writeln!(out, "- {line}");
        }
    }
    out.push_str("\nStores:\n\n");
    out.push_str(&table(
        &STORE_HEADERS,
        &store_rows(report),
        STORE_HEADERS.len(),
    ));
    let sites = super::alloc_sites::phases(report);
    if !sites.is_empty() {
        let _ = writeln!(
            out,
            "\n## {}\n\n{}",
            super::alloc_sites::HEADING,
            super::alloc_sites::NOTE
        );
        for phase in sites {
            let _ = writeln!(out, "\n### {}\n\n{}\n", phase.title, phase.owners);
            let rows: Vec<Vec<String>> = phase
                .rows
                .iter()
                .map(|r| super::alloc_sites::code_spans(r))
                .collect();
            out.push_str(&table(
                &super::alloc_sites::HEADERS,
                &rows,
                super::alloc_sites::NUMERIC_FROM,
            ));
        }
    }
    out
}

/// results.md with the run's charts embedded (SVG files beside it): the verdict's in the
/// verdict, the others after the recap.
pub fn render_with_charts(report: &Report, charts: &[(&str, &str)]) -> String {
    let mut out = page(report, charts);
    let rest: Vec<&(&str, &str)> = charts
        .iter()
        .filter(|(_, title)| *title != verdict::CHART_TITLE)
        .collect();
    if rest.is_empty() {
        return out;
    }
    out.push_str("\n## Charts\n\n");
    for (file, title) in rest {
        let _ = writeln!(out, "![{title}]({file})\n");
    }
    out
}
