//! Reports: the model (`run.json`), its renderers (text, markdown, HTML, CSV, JSON, SVG
//! charts: pure functions of a [`model::Report`], no I/O), the comparison of two runs, the
//! merge of N load clients' runs, and [`OutputDir`], the one place that writes files.
//!
//! From the top floor down: this file (it writes what the renderers make); the renderers
//! ([`text`], [`markdown`], [`html`], [`csv`], [`json`], [`chart`]: none imports another),
//! [`compare`] (with what else differs between the runs, [`differences`]), and [`merge`]
//! (which loads runs through [`json`]); what they share: the verdict a report opens with
//! ([`verdict`]), what a reader must see before the figures ([`notices`]: each store's
//! warnings, the stores skipped), the recap tables' rows ([`tables`]), the run's facts and
//! per-phase notes ([`facts`]), the blog's lines ([`lines`]), the warnings a phase's
//! figures give ([`warnings`]), the blog's
//! 2016 figures ([`blog`]), the allocation sites' tables ([`alloc_sites`]), a store's
//! variants side by side ([`variants`], which judges them as [`compare`] does); and on the
//! ground floor the number formats ([`mod@format`]), the statistics of repeated figures
//! ([`stats`]) and the model ([`model`]).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::error::UsageError;

pub mod alloc_sites;
pub mod blog;
pub mod chart;
pub mod compare;
pub mod costs;
pub mod csv;
pub mod differences;
pub mod facts;
pub mod format;
pub mod html;
pub mod json;
pub mod lines;
pub mod markdown;
pub mod merge;
pub mod model;
pub mod notices;
pub mod stats;
pub mod tables;
pub mod text;
pub mod variants;
pub mod verdict;
pub mod warnings;

/// The subdirectory of `--out` the charts go to (results.md links them there).
pub const CHARTS_DIR: &str = "charts";

/// The first line of every chart file dbcompare writes: what tells its charts from other
/// files in the directory when an earlier run's are cleared away.
const CHART_MARK: &str = "<!-- a chart of a dbcompare run -->";

/// Removes the charts an earlier run left in `dir` that this run did not write (an `--out`
/// used again: its charts of other phases or concurrencies would sit beside this run's).
/// Only files that begin with [`CHART_MARK`] are removed; a failure to remove one is no
/// error (the run's own files are written).
fn remove_stale_charts(dir: &Path, charts: &[chart::Chart]) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".svg") || charts.iter().any(|c| c.file == name) {
            continue;
        }
        let mut first = [0u8; CHART_MARK.len()];
        let marked = fs::File::open(entry.path())
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut first))
            .is_ok_and(|()| first == CHART_MARK.as_bytes());
        if marked {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// A file (or files) a run is rendered to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `run.json`
    Json,
    /// `results.md` (with the charts embedded when they are written too)
    Markdown,
    /// `report.html`, charts inline
    Html,
    /// `results.csv`
    Csv,
    /// `series.csv`: the time series
    SeriesCsv,
    /// one SVG file per chart
    Charts,
}

impl Format {
    pub const ALL: [Format; 6] = [
        Format::Json,
        Format::Markdown,
        Format::Html,
        Format::Csv,
        Format::SeriesCsv,
        Format::Charts,
    ];
}

/// The lock file a run holds in its `--out` (see [`OutputDir::lock`]).
pub const LOCK_FILE: &str = ".dbcompare.lock";

/// How often a lock file replaced under our hands is tried again.
const LOCK_TRIES: usize = 10;

/// A run's claim on its output directory; dropping it removes the lock file.
#[derive(Debug)]
pub struct OutputLock {
    path: PathBuf,
    _file: fs::File,
    /// The directory and the first of its parents this process made (itself, or one above
    /// it that `--out a/b` made too): removed with the lock up to that one if nothing was
    /// written to them (a command refused after `--out` was prepared leaves no empty one).
    made: Option<(PathBuf, PathBuf)>,
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Removed while still locked, so that no other run locks this file after us.
        let _ = fs::remove_file(&self.path);
        if let Some((dir, top)) = &self.made {
            // Each fails, and so keeps it and those above, unless it is empty.
            for d in dir.ancestors() {
                if fs::remove_dir(d).is_err() || d == top {
                    break;
                }
            }
        }
    }
}

/// The output directory of a run: `run.json`, `results.md`, `report.html`, `results.csv`
/// and the charts' SVG files, each written atomically.
#[derive(Debug, Clone)]
pub struct OutputDir {
    dir: PathBuf,
    /// The first of the directory and its parents that [`OutputDir::prepare`] made.
    made: Option<PathBuf>,
}

impl OutputDir {
    /// Creates the directory if needed and proves it is writable, before any benchmark runs
    /// (a directory made here is removed with the lock when nothing was written to it).
    pub fn prepare(dir: &Path) -> Result<Self> {
        let unusable = |e: std::io::Error| {
            UsageError::new(format!(
                "--out {}: cannot write results there: {e}",
                dir.display()
            ))
        };
        if dir.exists() && !dir.is_dir() {
            return Err(UsageError::new(format!(
                "--out {}: not a directory (the results are a directory of files)",
                dir.display()
            ))
            .into());
        }
        let made = dir
            .ancestors()
            .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
            .last()
            .map(Path::to_path_buf);
        fs::create_dir_all(dir).map_err(unusable)?;
        if let Some(why) = crate::error::unwritable(dir) {
            return Err(UsageError::new(format!("--out {}: {why}", dir.display())).into());
        }
        Ok(OutputDir {
            dir: dir.to_path_buf(),
            made,
        })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Claims the directory for one run: a second run given the same `--out` while this one
    /// holds the lock is refused (a usage error naming the first run's pid) instead of
    /// interleaving its files with this one's. The lock file is removed when the lock is
    /// dropped; a killed run's lock ends with its process.
    pub fn lock(&self) -> Result<OutputLock> {
        let path = self.dir.join(LOCK_FILE);
        for _ in 0..LOCK_TRIES {
            let file = fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .with_context(|| format!("opening {}", path.display()))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(fs::TryLockError::WouldBlock) => {
                    let holder = fs::read_to_string(&path).unwrap_or_default();
                    let holder = holder.trim();
                    let who = if holder.is_empty() {
                        String::new()
                    } else {
                        format!(" (pid {holder})")
                    };
                    return Err(UsageError::new(format!(
                        "--out {}: another dbcompare run{who} is writing its results there; \
                         give this run another --out, or wait until that one ends",
                        self.dir.display()
                    ))
                    .into());
                }
                Err(fs::TryLockError::Error(e)) => {
                    return Err(e).with_context(|| format!("locking {}", path.display()));
                }
            }
            // The file may have been removed by the run that held it, between our open and
            // our lock: then the lock is on a file nobody else will find, so try again.
            let same = match (file.metadata(), fs::metadata(&path)) {
                (Ok(a), Ok(b)) => {
                    use std::os::unix::fs::MetadataExt;
                    a.dev() == b.dev() && a.ino() == b.ino()
                }
                _ => false,
            };
            if !same {
                continue;
            }
            let mut file = file;
            file.set_len(0)
                .and_then(|()| writeln!(file, "{}", std::process::id()))
                .with_context(|| format!("writing {}", path.display()))?;
            return Ok(OutputLock {
                path,
                _file: file,
                made: self.made.clone().map(|top| (self.dir.clone(), top)),
            });
        }
        anyhow::bail!(
            "--out {}: could not lock {} (it was replaced {LOCK_TRIES} times while this run \
             tried to lock it)",
            self.dir.display(),
            path.display()
        )
    }

    /// Writes every output for `report` (replacing any earlier write).
    pub fn write(&self, report: &model::Report) -> Result<()> {
        self.write_formats(report, &Format::ALL).map(drop)
    }

    /// Writes the files of `formats` for `report`; returns their paths.
    pub fn write_formats(
        &self,
        report: &model::Report,
        formats: &[Format],
    ) -> Result<Vec<PathBuf>> {
        let charts = if formats
            .iter()
            .any(|f| matches!(f, Format::Html | Format::Charts))
        {
            chart::charts(report)
        } else {
            Vec::new()
        };
        let mut written = Vec::new();
        for format in formats {
            match format {
                Format::Json => {
                    written.push(self.write_atomically("run.json", &json::render(report))?)
                }
                Format::Markdown => {
                    let files: Vec<String> = charts
                        .iter()
                        .map(|c| format!("{CHARTS_DIR}/{}", c.file))
                        .collect();
                    let embedded: Vec<(&str, &str)> = if formats.contains(&Format::Charts) {
                        files
                            .iter()
                            .zip(&charts)
                            .map(|(f, c)| (f.as_str(), c.title.as_str()))
                            .collect()
                    } else {
                        Vec::new()
                    };
                    let md = markdown::render_with_charts(report, &embedded);
                    written.push(self.write_atomically("results.md", &md)?);
                }
                Format::Html => {
                    let inline: Vec<(&str, &str)> = charts
                        .iter()
                        .map(|c| (c.title.as_str(), c.svg.as_str()))
                        .collect();
                    written.push(
                        self.write_atomically("report.html", &html::render(report, &inline))?,
                    );
                }
                Format::Csv => {
                    written.push(self.write_atomically("results.csv", &csv::render(report))?)
                }
                Format::SeriesCsv => {
                    written.push(self.write_atomically("series.csv", &csv::render_series(report))?)
                }
                Format::Charts => {
                    let dir = self.dir.join(CHARTS_DIR);
                    fs::create_dir_all(&dir)
                        .with_context(|| format!("creating {}", dir.display()))?;
                    for c in &charts {
                        written.push(self.write_atomically(
                            &format!("{CHARTS_DIR}/{}", c.file),
                            &format!("{CHART_MARK}\n{}", c.svg),
                        )?);
                    }
                    remove_stale_charts(&dir, &charts);
                }
            }
        }
        Ok(written)
    }

    fn write_atomically(&self, name: &str, contents: &str) -> Result<PathBuf> {
        let target = self.dir.join(name);
        let (dir, file) = match target.parent() {
            Some(parent) => (parent.to_path_buf(), target.file_name().unwrap_or_default()),
            None => (self.dir.clone(), std::ffi::OsStr::new(name)),
        };
        let mut tmp = tempfile::Builder::new()
            .prefix(&format!(".{}", file.to_string_lossy()))
            .tempfile_in(&dir)
            .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
        // Readable by others, as a file written with the default umask would be (a
        // temporary file is private): reports get served and shared.
        tmp.as_file()
            .set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))
            .with_context(|| format!("writing {}", target.display()))?;
        tmp.write_all(contents.as_bytes())
            .and_then(|()| tmp.as_file().sync_all())
            .with_context(|| format!("writing {}", target.display()))?;
        tmp.persist(&target)
            .with_context(|| format!("replacing {}", target.display()))?;
        Ok(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_out_that_is_a_file_is_a_usage_error_saying_so() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let e = OutputDir::prepare(file.path()).unwrap_err();
        assert!(e.downcast_ref::<UsageError>().is_some(), "{e:#}");
        assert!(format!("{e:#}").contains(": not a directory"), "{e:#}");
    }

    #[test]
    fn an_unwritable_out_dir_is_a_usage_error() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let err = OutputDir::prepare(&file.path().join("sub")).unwrap_err();
        assert!(err.downcast_ref::<UsageError>().is_some());
        assert!(err.to_string().contains("--out"), "{err}");
    }

    #[test]
    fn a_locked_out_dir_refuses_a_second_run_until_the_first_ends() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutputDir::prepare(dir.path()).unwrap();
        let lock = out.lock().unwrap();
        let err = out.lock().unwrap_err();
        assert!(err.downcast_ref::<UsageError>().is_some(), "{err}");
        let message = err.to_string();
        assert!(message.contains("--out"), "{message}");
        assert!(
            message.contains(&format!("pid {}", std::process::id())),
            "{message}"
        );
        drop(lock);
        assert!(!dir.path().join(LOCK_FILE).exists(), "lock file left");
        drop(out.lock().unwrap());
    }

    #[test]
    fn charts_an_earlier_run_left_are_cleared_and_other_files_kept() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutputDir::prepare(dir.path()).unwrap();
        let published = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/results/classic/run.json");
        let mut report = json::parse(&fs::read_to_string(published).unwrap()).unwrap();
        let charts = dir.path().join(CHARTS_DIR);
        let names = || -> Vec<String> {
            let mut names: Vec<String> = fs::read_dir(&charts)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        out.write_formats(&report, &[Format::Charts]).unwrap();
        assert!(
            names().iter().any(|n| n.contains("search")),
            "{:?}",
            names()
        );
        fs::write(charts.join("mine.svg"), "<svg/>").unwrap();
        // The same directory again, for a run of the inserts alone.
        for s in &mut report.stores {
            s.phases.retain(|p| p.kind == model::PhaseKind::Insert);
        }
        out.write_formats(&report, &[Format::Charts]).unwrap();
        let mut expected: Vec<String> =
            chart::charts(&report).into_iter().map(|c| c.file).collect();
        expected.push("mine.svg".to_string());
        expected.sort();
        assert_eq!(names(), expected);
    }

    #[test]
    fn writes_replace_files_whole() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutputDir::prepare(dir.path()).unwrap();
        out.write_atomically("x.txt", "first").unwrap();
        out.write_atomically("x.txt", "second").unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join("x.txt")).unwrap(),
            "second"
        );
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "temporary files left behind: {names:?}");
    }
}
