//! The YCSB suite's workloads of a run: YCSB's own files or the user's, with `--property` on
//! top, checked to share one load.

use std::collections::HashSet;

use crate::catalog::Suite;
use crate::cli::RunArgs;
use crate::error::UsageError;
use crate::workload::ycsb::{Workload, properties};

/// YCSB's core workload letters in YCSB's recommended order (the inserting ones last).
const DEFAULT_WORKLOADS: [&str; 6] = ["a", "b", "c", "f", "d", "e"];

/// The YCSB suite's workloads (none for the other suites, which refuse its flags), each
/// with `--property` on top, checked to share one load.
pub(super) fn ycsb_workloads(args: &RunArgs) -> Result<Vec<Workload>, UsageError> {
    if args.suite != Suite::Ycsb {
        let given = [
            ("--workload", args.workloads.is_some()),
            ("--workload-file", !args.workload_files.is_empty()),
            ("--property", !args.properties.is_empty()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
            return Err(UsageError::new(format!(
                "{flag} belongs to the YCSB suite: add --suite ycsb"
            )));
        }
        return Ok(Vec::new());
    }
    let overrides = args
        .properties
        .iter()
        .map(|p| properties::flag(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(UsageError::new)?;
    let letters: Vec<String> = match &args.workloads {
        Some(given) => given.clone(),
        None if args.workload_files.is_empty() => {
            DEFAULT_WORKLOADS.iter().map(|l| l.to_string()).collect()
        }
        None => Vec::new(),
    };
    let mut workloads = Vec::new();
    for letter in &letters {
        let mut chars = letter.trim().chars();
        let (Some(c), None) = (chars.next(), chars.next()) else {
            return Err(UsageError::new(format!(
                "--workload {letter}: YCSB's core workloads are a, b, c, d, e and f (a file of \
                 your own goes to --workload-file)"
            )));
        };
        workloads.push(Workload::core(c, &overrides).map_err(UsageError::new)?);
    }
    for path in &args.workload_files {
        let text = std::fs::read_to_string(path)
            .map_err(|e| UsageError::new(format!("--workload-file {}: {e}", path.display())))?;
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let source = path.display().to_string();
        workloads
            .push(Workload::from_text(&name, &text, &source, &overrides).map_err(UsageError::new)?);
    }
    let mut names = HashSet::new();
    for w in &workloads {
        // `a` and `A` are one workload.
        if !names.insert(w.name.to_ascii_lowercase()) {
            return Err(UsageError::new(format!(
                "workload {} is given twice (a workload that inserts would insert its records \
                 twice)",
                w.name
            )));
        }
    }
    if let Some(first) = workloads.first() {
        for w in &workloads[1..] {
            first.same_load(w).map_err(UsageError::new)?;
        }
    }
    Ok(workloads)
}
