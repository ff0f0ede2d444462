//! report.html's part for a run with variants: per store run as several variants, the
//! settings that differ between them and the order their runs took; the test of each pair
//! of variants (the verdict ranks them beside the stores).

use std::fmt::Write;

use super::markup::{escape, inline, table};
use crate::report::model::Report;
use crate::report::variants::{groups, pairs, pairs_note};

/// The part; empty for a run without variants.
pub(super) fn section(report: &Report) -> String {
    let groups = groups(report);
    if groups.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h2>Stores and variants</h2>\n");
    for g in &groups {
        let _ = writeln!(
            out,
            "<h3>{}: {} variants</h3>",
            escape(&g.store),
            g.variants.len()
        );
        if g.differing.is_empty() {
            out.push_str("<p>No setting read back differs between them.</p>\n");
        } else {
            out.push_str("<p>Settings read back that differ between them:</p>\n");
            let mut headers = vec!["setting".to_string()];
            headers.extend(g.variants.iter().cloned());
            let rows: Vec<Vec<String>> = g
                .differing
                .iter()
                .map(|(key, values)| std::iter::once(key).chain(values).cloned().collect())
                .collect();
            out.push_str(&table(&headers, &rows, headers.len()));
        }
        if let Some(order) = &g.order {
            let _ = writeln!(
                out,
                "<p>Their runs took turns, in this order: {}.</p>",
                inline(order)
            );
        }
    }
    let pairs = pairs(report);
    if !pairs.is_empty() {
        let _ = writeln!(out, "<p>{}</p>", inline(&pairs_note(report)));
    }
    for pair in pairs {
        let _ = writeln!(out, "<h3>{}</h3>", escape(&pair.title));
        let headers: Vec<String> = pair.headers().iter().map(|h| h.to_string()).collect();
        // The markdown's bold marks a significant change; the verdict column says it here.
        let rows: Vec<Vec<String>> = pair
            .rows
            .iter()
            .map(|r| r.iter().map(|c| c.replace("**", "")).collect())
            .collect();
        out.push_str(&table(&headers, &rows, 2));
    }
    out
}
