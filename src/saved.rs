//! The commands on saved runs, which touch no database: `dbcompare report` re-renders a
//! run.json, `dbcompare compare` judges one run against another, `dbcompare schema` prints
//! the layout of run.json.

use anyhow::Result;

use crate::cli::{CompareArgs, MergeArgs, ReportArgs, ReportFormat};
use crate::error::UsageError;
use crate::report::{Format, OutputDir, compare, csv, html, json, markdown, text};

/// `dbcompare report`: without `--out`, one format printed; with it, the files of each
/// format asked for (all by default) written there.
pub fn report(args: &ReportArgs) -> Result<u8> {
    // `--series` alone is the series' CSV; beside other formats only, it is a mistake.
    if args.series && !args.format.is_empty() && !args.format.contains(&ReportFormat::Csv) {
        return Err(
            UsageError::new("report --series: the series are CSV; add --format csv").into(),
        );
    }
    // An unwritable --out is refused before the run is even read.
    let out = args.out.as_deref().map(OutputDir::prepare).transpose()?;
    // Not into a directory a run is writing to.
    let _lock = out.as_ref().map(OutputDir::lock).transpose()?;
    let report = json::load(&args.run)?;
    // `md,md` is one format.
    let mut asked = args.format.clone();
    if args.series && asked.is_empty() {
        asked.push(ReportFormat::Csv);
    }
    asked.sort_by_key(|f| *f as u8);
    asked.dedup();
    let Some(out) = out else {
        let format = match asked.as_slice() {
            [] => ReportFormat::Md,
            [one] => *one,
            _ => {
                return Err(UsageError::new(
                    "report: several --format values need --out DIR (they are files)",
                )
                .into());
            }
        };
        let rendered = match format {
            ReportFormat::Md => markdown::render(&report),
            ReportFormat::Html => {
                let charts = crate::report::chart::charts(&report);
                let inline: Vec<(&str, &str)> = charts
                    .iter()
                    .map(|c| (c.title.as_str(), c.svg.as_str()))
                    .collect();
                html::render(&report, &inline)
            }
            ReportFormat::Csv if args.series => csv::render_series(&report),
            ReportFormat::Csv => csv::render(&report),
            ReportFormat::Json => json::render(&report),
            ReportFormat::Text => text::render(&report),
            ReportFormat::Svg => {
                return Err(UsageError::new(
                    "report --format svg: the charts are one file each; give --out DIR",
                )
                .into());
            }
        };
        crate::output::out!("{rendered}")?;
        return Ok(0);
    };
    let mut formats: Vec<Format> = Vec::new();
    let mut text_too = false;
    for f in &asked {
        match f {
            ReportFormat::Md => formats.push(Format::Markdown),
            ReportFormat::Html => formats.push(Format::Html),
            ReportFormat::Csv if args.series => formats.push(Format::SeriesCsv),
            ReportFormat::Csv => formats.push(Format::Csv),
            ReportFormat::Json => formats.push(Format::Json),
            ReportFormat::Svg => formats.push(Format::Charts),
            ReportFormat::Text => text_too = true,
        }
    }
    if asked.is_empty() {
        formats = Format::ALL.to_vec();
    }
    formats.dedup();
    for path in out.write_formats(&report, &formats)? {
        crate::output::outln!("wrote {}", path.display())?;
    }
    if text_too {
        crate::output::out!("{}", text::render(&report))?;
    }
    Ok(0)
}

/// `dbcompare compare`: the comparison's markdown on stdout; exit 1 with
/// `--fail-if-slower` when a significant regression exceeds it.
pub fn compare(args: &CompareArgs) -> Result<u8> {
    let base = json::load(&args.base)?;
    let new = json::load(&args.new)?;
    let comparison = compare::compare(&base, &new, args.alpha).map_err(|why| {
        UsageError::new(format!(
            "compare {} {}: {why}",
            args.base.display(),
            args.new.display()
        ))
    })?;
    crate::output::out!(
        "{}",
        compare::markdown(
            &comparison,
            &args.base.display().to_string(),
            &args.new.display().to_string()
        )
    )?;
    let Some(limit) = args.fail_if_slower else {
        return Ok(0);
    };
    if let Some((pct, where_)) = comparison.worst_regression()
        && pct > limit
    {
        crate::output::errln!(
            "error: {where_} got {pct:.1}% worse (significant), more than --fail-if-slower {limit}%"
        );
        return Ok(1);
    }
    // A gate that cannot tell does not pass: a store or phase the new run lacks, or figures
    // from fewer runs than a verdict needs. (A phase measured once by design, as YCSB's
    // load, is not judged when both runs asked for enough.)
    // Every reason it cannot tell is said, not only the first.
    let mut cannot = false;
    if let Some(first) = comparison.lacking.first() {
        crate::output::errln!(
            "error: --fail-if-slower: the new run lacks {} of what the base measured ({first}{})",
            comparison.lacking.len(),
            if comparison.lacking.len() > 1 {
                ", ..."
            } else {
                ""
            },
        );
        cannot = true;
    }
    let few = |r: &crate::report::model::Report| r.plan.runs.get() < compare::MIN_RUNS as u32;
    let unjudged = comparison.unjudged();
    if let Some(first) = unjudged.first().filter(|_| few(&base) || few(&new)) {
        crate::output::errln!(
            "error: --fail-if-slower cannot judge {} figure(s) ({first}{}): fewer than {} runs on \
             a side; make both runs with --runs {} or more",
            unjudged.len(),
            if unjudged.len() > 1 { ", ..." } else { "" },
            compare::MIN_RUNS,
            compare::MIN_RUNS
        );
        cannot = true;
    }
    Ok(u8::from(cannot))
}

/// `dbcompare merge`: the clients' runs as one, every output written to `--out`; exit 0
/// once written when every store ran to its end in every client's run, 1 when one did not
/// (as `run` exits: a pipeline that merges sees the failure too).
pub fn merge(args: &MergeArgs) -> Result<u8> {
    let out = OutputDir::prepare(&args.out)?;
    let _lock = out.lock()?;
    let merged = crate::report::merge::merge_files(&args.runs)
        .map_err(|e| UsageError::new(format!("{e:#}")))?;
    for path in out.write_formats(&merged, &Format::ALL)? {
        crate::output::outln!("wrote {}", path.display())?;
    }
    let mut code = 0;
    for store in merged
        .stores
        .iter()
        .filter(|s| s.status != crate::report::model::StoreStatus::Ok)
    {
        let why = store.error.as_deref().unwrap_or("no reason recorded");
        crate::output::errln!("error: {} did not run to its end: {why}", store.store);
        code = 1;
    }
    Ok(code)
}

/// `dbcompare schema`: the JSON Schema of run.json.
pub fn schema() -> Result<u8> {
    crate::output::out!("{}", json::schema())?;
    Ok(0)
}
