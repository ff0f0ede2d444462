//! Markdown rendering (`results.md`): the run and machine, the blog's sections per store and
//! the recap tables.

use std::fmt::Write;

use super::format::human_size;
use super::model::{PhaseKind, Report, RunStatus, StoreResult};
use super::text::{PHASE_HEADERS, STORE_HEADERS, runs_block, store_header, store_lines, store_row};

fn escape(cell: &str) -> String {
    cell.replace('|', "\\|")
}

fn table(headers: &[&str], rows: &[Vec<String>], numeric_from: usize) -> String {
    let mut out = format!("| {} |\n|", headers.join(" | "));
    for i in 0..headers.len() {
        out.push_str(if i >= numeric_from { "---:|" } else { "---|" });
    }
    out.push('\n');
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| escape(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}

/// The blog's recap: one row per phase, one column per store, wall time in ms.
fn time_table(report: &Report) -> String {
    let (headers, rows) = time_rows(report);
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    table(&headers, &rows, 1)
}

/// The blog's recap table (headers, rows): wall time in ms per phase, sizes on disk.
pub fn time_rows(report: &Report) -> (Vec<String>, Vec<Vec<String>>) {
    let mut headers = vec!["phase".to_string()];
    headers.extend(report.stores.iter().map(|s| s.store.clone()));
    let mut rows = Vec::new();
    for kind in [PhaseKind::Insert, PhaseKind::Search] {
        for size in &report.plan.sizes {
            let mut row = vec![format!("{} {} {}", kind.label(), size.name, size.records)];
            row.extend(report.stores.iter().map(|s| {
                s.phase(kind, &size.name)
                    .map_or_else(|| "-".to_string(), |p| format!("{:.2}", p.wall_ms))
            }));
            rows.push(row);
        }
    }
    // Searches at the other concurrency levels.
    for &level in report.plan.concurrency.iter().skip(1) {
        for size in &report.plan.sizes {
            let mut row = vec![format!(
                "SEARCH {} {} (concurrency {level})",
                size.name, size.records
            )];
            row.extend(report.stores.iter().map(|s| {
                s.phase_at(PhaseKind::Search, &size.name, level)
                    .map_or_else(|| "-".to_string(), |p| format!("{:.2}", p.wall_ms))
            }));
            rows.push(row);
        }
    }
    let initial: fn(&StoreResult) -> Option<u64> = |s| s.initial_size_bytes;
    let fin: fn(&StoreResult) -> Option<u64> = |s| s.final_size_bytes;
    for (label, size_of) in [("initial size", initial), ("final size", fin)] {
        let mut row = vec![label.to_string()];
        row.extend(
            report
                .stores
                .iter()
                .map(|s| size_of(s).map_or_else(|| "-".to_string(), human_size)),
        );
        rows.push(row);
    }
    (headers, rows)
}

/// `results.md` for a run.
pub fn render(report: &Report) -> String {
    let mut out = String::from("# dbcompare results\n\n");
    match report.status {
        RunStatus::Complete => {}
        RunStatus::Partial => {
            out.push_str("**PARTIAL RUN**: not every requested store finished.\n\n")
        }
        RunStatus::Interrupted => out.push_str(
            "**INTERRUPTED RUN**: stopped by Ctrl-C; only what was measured until then.\n\n",
        ),
    }
    for fact in run_facts(report) {
        let _ = writeln!(out, "- {fact}");
    }
    out.push('\n');
    for r in &report.stores {
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
    match super::text::suite_rows(report) {
        Some((headers, rows)) => {
            let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
            let _ = write!(
                out,
                "## Recap\n\n{}:\n\n{}",
                super::text::suite_title(report),
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
    out.push_str("\nEvery phase (latencies per operation in microseconds; cpu = client process CPU time per operation):\n\n");
    let rows = super::text::phase_rows(report);
    out.push_str(&table(&PHASE_HEADERS, &rows, 3));
    if let Some((headers, rows)) = super::text::scaling_rows(report) {
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        out.push_str("\nSearch throughput by concurrency (ops/s, with p99 latency in microseconds): where each store stops scaling:\n\n");
        out.push_str(&table(&headers, &rows, 2));
    }
    let bound = super::text::client_bound_lines(report);
    if !bound.is_empty() {
        out.push_str(
            "\nClient-bound phases (their figures are the client's limit, not the store's):\n\n",
        );
        for line in bound {
            let _ = writeln!(out, "- {line}");
        }
    }
    for (heading, lines) in super::text::phase_notes(report) {
        let _ = writeln!(out, "\n{heading}:\n");
        for line in lines {
            let _ = writeln!(out, "- {line}");
        }
    }
    out.push_str("\nStores:\n\n");
    let rows: Vec<Vec<String>> = report.stores.iter().map(store_row).collect();
    out.push_str(&table(&STORE_HEADERS, &rows, STORE_HEADERS.len()));
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

/// What the run was and where it ran, a line each (with markdown code spans): shared by
/// results.md and report.html.
pub fn run_facts(report: &Report) -> Vec<String> {
    let p = &report.plan;
    let m = &report.machine;
    let sizes: Vec<String> = p
        .sizes
        .iter()
        .map(|s| format!("{} ({})", s.name, s.records))
        .collect();
    let mut facts = vec![format!(
        "run: {} {}, suite `{}`, stores {}, {}seed {}, durability mode `{}`, {} warm-up and {} measured runs (figures are medians), concurrency {}{}{}",
        report.tool.name,
        report.tool.version,
        p.suite,
        p.stores.join(", "),
        if p.suite == "classic" {
            format!(
                "sizes {}, {} searches per inserted record, ",
                sizes.join(", "),
                p.searches_per_insert
            )
        } else {
            String::new()
        },
        p.seed,
        p.durability,
        p.warmup_runs,
        p.runs,
        p.concurrency
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(","),
        p.rate.map_or_else(String::new, |r| format!(
            ", open loop at {r:.0} operations/s"
        )),
        p.client_threads.map_or_else(String::new, |n| format!(
            ", {n} client thread(s), one event loop each"
        ))
    )];
    if !p.workloads.is_empty() {
        let mut line = "workloads, after a load of the records:".to_string();
        for w in &p.workloads {
            let _ = write!(line, "\n  - {w}");
        }
        facts.push(line);
    }
    facts.push(format!(
        "started {}, finished {}{}",
        report.started_at,
        report.finished_at,
        report
            .client_peak_rss_bytes
            .map_or_else(String::new, |b| format!(
                "; dbcompare's own peak memory (RSS) {}",
                human_size(b)
            ))
    ));
    facts.push(format!(
        "machine: {}, {} cores, {} memory, {}, kernel {} ({})",
        m.cpu_model,
        m.cores,
        human_size(m.memory_bytes),
        m.os,
        m.kernel,
        m.arch
    ));
    if let Some(f) = &report.floor {
        facts.push(super::text::floor_line(f).replace(&f.fsync_dir, &format!("`{}`", f.fsync_dir)));
    }
    if p.alloc_sites {
        let shown = !super::alloc_sites::phases(report).is_empty();
        facts.push(format!(
            "**allocation sites captured** (`--alloc-sites`): every allocation's stack was \
             taken, so this run's times are slowed and not for comparing{}",
            if shown {
                " (where the allocations come from: the last section)"
            } else {
                ""
            }
        ));
    }
    if let Some(c) = &p.client {
        facts.push(format!(
            "load client {}/{} of the run that began at {} (its share alone: `dbcompare merge` \
             makes one run of the {} clients' run.json files)",
            c.index, c.of, c.start_at, c.of
        ));
    }
    if !report.shares.is_empty() {
        let mut line = format!(
            "merged from {} load clients (the machine and floor above are client 1's):",
            report.shares.len()
        );
        for s in &report.shares {
            let _ = write!(
                line,
                "\n  - client {}: `{}`, {}, {} cores, from {} to {}",
                s.index, s.file, s.machine.cpu_model, s.machine.cores, s.started_at, s.finished_at
            );
        }
        facts.push(line);
    }
    facts
}

/// results.md with the run's charts embedded after the recap (SVG files beside it).
pub fn render_with_charts(report: &Report, charts: &[(&str, &str)]) -> String {
    let mut out = render(report);
    if charts.is_empty() {
        return out;
    }
    out.push_str("\n## Charts\n\n");
    for (file, title) in charts {
        let _ = writeln!(out, "![{title}]({file})\n");
    }
    out
}
