//! Markdown's tables, shared by results.md and its parts.

use std::fmt::Write;

/// A cell made safe inside a markdown table.
pub(super) fn escape(cell: &str) -> String {
    cell.replace('|', "\\|")
}

/// A markdown table; columns from `numeric_from` on right-aligned.
pub(super) fn table(headers: &[&str], rows: &[Vec<String>], numeric_from: usize) -> String {
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
