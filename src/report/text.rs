//! Plain-text rendering: each store's blog lines and what is printed at the end of a run
//! (the verdict, then the recap tables), with aligned columns (a run with variants ends with
//! their part: `variants.rs`).

use super::costs::{COST_HEADERS, cost_lines, cost_rows};
use super::facts::{client_bound_lines, phase_notes};

mod table;
pub use table::table;
mod variants;
use super::lines::{runs_block, store_header, store_lines};
use super::model::{Report, StoreInfo};
use super::tables::{
    PHASE_HEADERS, STORE_HEADERS, phase_rows, scaling_rows, store_rows, suite_rows, suite_title,
};
use super::{notices, verdict};

fn numeric_columns(n: usize, text_columns: usize) -> Vec<bool> {
    (0..n).map(|i| i >= text_columns).collect()
}

/// The verdict: each phase's stores ranked with what the ranking says of itself, the
/// warnings by store, the stores that did not run.
pub fn glance(report: &Report) -> String {
    let mut out = String::new();
    let g = verdict::glance(report);
    if !g.phases.is_empty() {
        out.push_str(verdict::HEADING);
        out.push_str("\n\n");
        if let Some(line) = verdict::standings(report, &g) {
            out.push_str(&line);
            out.push_str("\n\n");
        }
        let headers = verdict::headers(&g);
        out.push_str(&table(
            &headers,
            &verdict::rows(&g),
            &numeric_columns(headers.len(), verdict::NUMERIC_FROM),
        ));
        for note in verdict::notes(&g) {
            out.push_str(&note.replace('`', ""));
            out.push('\n');
        }
        out.push('\n');
    }
    let warnings = notices::warnings(report);
    if !warnings.is_empty() {
        out.push_str(&notices::warnings_summary(report, &warnings));
        out.push('\n');
        for (store, lines) in &warnings {
            out.push_str(store);
            out.push('\n');
            for line in lines {
                out.push_str(&format!("  - {line}\n"));
            }
        }
        out.push('\n');
    }
    if let Some(line) = notices::skipped_line(report) {
        out.push_str(&line);
        out.push_str("\n\n");
    }
    out
}

/// What is printed at the end of a run: the verdict, then every phase of every store, what
/// each cost, and every store.
pub fn recap(report: &Report) -> String {
    let phase_rows = phase_rows(report);
    let store_rows = store_rows(report);
    let mut out = glance(report);
    out.push_str("Recap\n\n");
    // No phase measured (every store failed or was skipped): no empty table.
    if !phase_rows.is_empty() {
        out.push_str(&table(
            &PHASE_HEADERS,
            &phase_rows,
            &numeric_columns(PHASE_HEADERS.len(), 3),
        ));
        out.push('\n');
    }
    let costs = cost_rows(report);
    if !costs.is_empty() {
        out.push_str("What each phase cost (per operation; n/a: not measured):\n\n");
        out.push_str(&table(
            &COST_HEADERS,
            &costs,
            &numeric_columns(COST_HEADERS.len() - 1, 4),
        ));
        for line in cost_lines(report) {
            out.push_str(&line);
            out.push('\n');
        }
        out.push('\n');
    }
    if let Some((headers, rows)) = suite_rows(report) {
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        out.push_str(suite_title(report));
        out.push_str(":\n\n");
        out.push_str(&table(&headers, &rows, &numeric_columns(headers.len(), 1)));
        out.push('\n');
    }
    if let Some((headers, rows)) = scaling_rows(report) {
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        out.push_str("Search throughput by concurrency:\n\n");
        out.push_str(&table(&headers, &rows, &numeric_columns(headers.len(), 2)));
        out.push('\n');
    }
    if let Some((headers, rows)) = super::blog::reference_rows(report) {
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        out.push_str("Beside the 2016 blog (wall time in ms):\n\n");
        out.push_str(&table(&headers, &rows, &numeric_columns(headers.len(), 1)));
        for (phase, now, then) in super::blog::rank_rows(report) {
            out.push_str(&format!("{phase}: now {now}; 2016 {then}\n"));
        }
        for note in super::blog::notes(report) {
            out.push_str(&note.replace('`', ""));
            out.push('\n');
        }
        out.push('\n');
    }
    let bound = client_bound_lines(report);
    if !bound.is_empty() {
        out.push_str(
            "Client-bound phases (their figures are the client's limit, not the store's):\n",
        );
        for line in bound {
            out.push_str(&line);
            out.push('\n');
        }
        out.push('\n');
    }
    for (heading, lines) in phase_notes(report) {
        out.push_str(&format!("{heading}:\n"));
        for line in lines {
            out.push_str(&line);
            out.push('\n');
        }
        out.push('\n');
    }
    out.push_str(&table(&STORE_HEADERS, &store_rows, &[]));
    let settings: Vec<String> = report
        .stores
        .iter()
        .filter_map(|s| Some(format!("{}: {}", s.store, settings_line(s.info.as_ref()?))))
        .collect();
    if !settings.is_empty() {
        out.push_str("\nSettings read back from each store:\n");
        for line in settings {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out.push_str(&variants::recap(report));
    out
}

/// `fsync=on, synchronous_commit=on, ...`
pub fn settings_line(info: &StoreInfo) -> String {
    let settings: Vec<String> = info
        .settings
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    settings.join(", ")
}

/// The whole run as text: each store's blog lines (a skipped store is in the recap's line),
/// then the recap.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for r in report.stores.iter().filter(|s| verdict::ran(s)) {
        out.push_str(&store_header(r));
        out.push('\n');
        for line in store_lines(r) {
            out.push_str(&line);
            out.push('\n');
        }
        for p in &r.phases {
            for line in runs_block(p) {
                out.push_str(&line);
                out.push('\n');
            }
        }
        out.push('\n');
    }
    out.push_str(&recap(report));
    out
}
