//! The `--alloc-sites` tables: per phase, the crates whose code allocated and the call sites
//! that allocated most, per operation (shared by results.md and report.html).

use super::model::{AllocSites, Report};

/// The heading of the section.
pub const HEADING: &str = "Where the client allocates";

/// What the section says first: how the figures were taken and what they are worth.
pub const NOTE: &str = "This run took the call stack of every allocation (`--alloc-sites`): \
    its times are slowed by the captures and are not for comparing. Each allocation is \
    charged to its call site, the first function outside the allocator, the standard \
    library, the container crates (hashbrown, indexmap, bytes, smallvec) and a future's \
    box, and to that function's crate. Figures are per operation over all the measured \
    runs together (the phase's allocs/op is their median). A release build charges a \
    driver's code inlined into dbcompare's functions to dbcompare: build with `--profile \
    profiling` to name every frame.";

/// The headers of a phase's site table.
pub const HEADERS: [&str; 5] = ["crate", "function", "called from", "allocs/op", "B/op"];

/// The first numeric column of [`HEADERS`].
pub const NUMERIC_FROM: usize = 3;

/// Markdown code spans for the function and callers columns of [`PhaseSites::rows`]
/// (generic names such as `Clients<C>` would otherwise read as HTML).
pub fn code_spans(row: &[String]) -> Vec<String> {
    row.iter()
        .enumerate()
        .map(|(i, cell)| match i {
            1 => format!("`{cell}`"),
            2 if !cell.is_empty() => format!("`{}`", cell.replace(" < ", "` < `")),
            _ => cell.clone(),
        })
        .collect()
}

/// One phase's tables.
pub struct PhaseSites {
    /// `mysql: driver Prepared Query Row (1000), concurrency 1`.
    pub title: String,
    /// `6.00 allocs/op, 1.2 kB/op: mysql_async 4.00 (1.0 kB), dbcompare 2.00 (200 B)`.
    pub owners: String,
    /// A row per site, as [`HEADERS`].
    pub rows: Vec<Vec<String>>,
}

/// Every phase with sites captured, in store and phase order.
pub fn phases(report: &Report) -> Vec<PhaseSites> {
    let mut out = Vec::new();
    for s in &report.stores {
        for p in &s.phases {
            if let Some(sites) = &p.alloc_sites {
                out.push(PhaseSites {
                    title: format!(
                        "{}: {} {} ({}), concurrency {}",
                        s.store,
                        p.kind.label(),
                        p.size.name,
                        p.ops,
                        p.concurrency
                    ),
                    owners: owners_line(sites),
                    rows: rows(sites),
                });
            }
        }
    }
    out
}

/// The phase's totals, then each crate's share.
pub fn owners_line(sites: &AllocSites) -> String {
    let owners: Vec<String> = sites
        .owners
        .iter()
        .map(|o| {
            format!(
                "{} {:.2} ({})",
                o.owner,
                o.allocs_per_op,
                bytes(o.bytes_per_op)
            )
        })
        .collect();
    format!(
        "{:.2} allocs/op, {}/op: {}",
        sites.allocs_per_op,
        bytes(sites.bytes_per_op),
        owners.join(", ")
    )
}

fn rows(sites: &AllocSites) -> Vec<Vec<String>> {
    sites
        .sites
        .iter()
        .map(|site| {
            vec![
                site.owner.clone(),
                site.function.clone(),
                site.callers.join(" < "),
                format!("{:.2}", site.allocs_per_op),
                format!("{:.0}", site.bytes_per_op),
            ]
        })
        .collect()
}

/// Bytes per operation: `180 B`, `2.1 kB`.
fn bytes(b: f64) -> String {
    if b < 1000.0 {
        format!("{b:.0} B")
    } else if b < 1e6 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{:.1} MB", b / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{AllocOwner, AllocSite};

    #[test]
    fn markdown_names_are_code() {
        let row: Vec<String> = ["tokio", "a::B<C>::f", "x < y", "1.00", "8"]
            .map(String::from)
            .into();
        assert_eq!(
            code_spans(&row),
            ["tokio", "`a::B<C>::f`", "`x` < `y`", "1.00", "8"]
        );
    }

    #[test]
    fn a_phase_lists_its_owners_then_its_sites() {
        let sites = AllocSites {
            ops: 10,
            allocs_per_op: 3.0,
            bytes_per_op: 1500.0,
            owners: vec![
                AllocOwner {
                    owner: "mysql_async".into(),
                    allocs_per_op: 2.0,
                    bytes_per_op: 1400.0,
                },
                AllocOwner {
                    owner: "dbcompare".into(),
                    allocs_per_op: 1.0,
                    bytes_per_op: 100.0,
                },
            ],
            sites: vec![AllocSite {
                owner: "mysql_async".into(),
                function: "mysql_async::conn::Conn::read_packet".into(),
                callers: vec!["a".into(), "b".into()],
                allocs_per_op: 2.0,
                bytes_per_op: 1400.0,
            }],
        };
        assert_eq!(
            owners_line(&sites),
            "3.00 allocs/op, 1.5 kB/op: mysql_async 2.00 (1.4 kB), dbcompare 1.00 (100 B)"
        );
        assert_eq!(
            rows(&sites),
            [[
                "mysql_async",
                "mysql_async::conn::Conn::read_packet",
                "a < b",
                "2.00",
                "1400"
            ]]
        );
    }
}
