//! The console's recap for a run with variants: the settings that differ between each
//! store's variants and the test of each pair of variants (the verdict ranks them beside
//! the stores).

use super::table::table;
use crate::report::model::Report;
use crate::report::variants::{groups, pairs};

/// The recap's part on variants; empty for a run without them.
pub(super) fn recap(report: &Report) -> String {
    let groups = groups(report);
    if groups.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    for g in &groups {
        let settings: Vec<String> = g
            .variants
            .iter()
            .map(|v| format!("{v}: {}", g.settings_of(v)))
            .collect();
        out.push_str(&format!(
            "\n{} variants, settings that differ: {}\n",
            g.store,
            if g.differing.is_empty() {
                "none".to_string()
            } else {
                settings.join("; ")
            }
        ));
    }
    for pair in pairs(report) {
        // The markdown's bold is the verdict's own column here.
        let rows: Vec<Vec<String>> = pair
            .rows
            .iter()
            .map(|r| r.iter().map(|c| c.replace("**", "")).collect())
            .collect();
        out.push_str(&format!("\n{}:\n", pair.title));
        let numeric = [false, false, true, true, true, true];
        out.push_str(&table(&pair.headers(), &rows, &numeric));
    }
    out
}
