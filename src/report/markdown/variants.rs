//! results.md's parts for a store run as several variants: above its variants' figures,
//! the settings that differ between them and the order their runs took; after the recap,
//! the test of each pair of variants (the verdict ranks them beside the stores).

use std::fmt::Write;

use super::markup::table;
use crate::report::model::Report;
use crate::report::variants::{VariantGroup, pairs, pairs_note};

/// The block above a group's first variant.
pub(super) fn group_block(g: &VariantGroup) -> String {
    let mut out = format!("## {}: {} variants\n\n", g.store, g.variants.len());
    if g.differing.is_empty() {
        out.push_str("No setting read back differs between them.\n\n");
    } else {
        out.push_str("Settings read back that differ between them:\n\n");
        let mut headers = vec!["setting"];
        headers.extend(g.variants.iter().map(String::as_str));
        let rows: Vec<Vec<String>> = g
            .differing
            .iter()
            .map(|(key, values)| {
                let mut row = vec![format!("`{key}`")];
                row.extend(values.iter().map(|v| format!("`{v}`")));
                row
            })
            .collect();
        out.push_str(&table(&headers, &rows, headers.len()));
        out.push('\n');
    }
    if let Some(order) = &g.order {
        let _ = writeln!(out, "Their runs took turns, in this order: {order}.\n");
    }
    out
}

/// The pairs' tests; empty for a run without variants.
pub(super) fn section(report: &Report) -> String {
    let pairs = pairs(report);
    if pairs.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n## Variants against each other\n");
    let _ = writeln!(out, "\n{}", pairs_note(report));
    for pair in pairs {
        let _ = writeln!(out, "\n### {}\n", pair.title);
        out.push_str(&table(&pair.headers(), &pair.rows, 2));
    }
    out
}
