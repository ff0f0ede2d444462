//! The terminal side of a run. By default, per store, the blog's lines for the medians and
//! one summary line per phase when the store is done, and a progress bar on stderr (only
//! when stderr is a terminal) naming the run and the phase; with `--verbose`, also every
//! run's lines as each phase completes (warm-up runs too) and the per-run blocks; with
//! `--quiet`, nothing (the run's warnings are printed after it). A store's lines are named
//! again when another's came between them (variants take turns).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use crate::report::lines;
use crate::report::model::{PhaseKind, PhaseResult, StoreResult};
use crate::suite::Observer;
use crate::workload::record::Size;

/// Prints a run as it goes.
pub struct Console {
    quiet: bool,
    verbose: bool,
    bars: bool,
    store: String,
    /// The store whose lines are being printed: the last one named on screen. Variants'
    /// runs take turns, so a store's lines are named again after another's.
    named: String,
    /// The stores whose header was printed: only those are named again.
    described: Vec<String>,
    /// The current run's label (`run 2/3`), when there is more than one.
    run: Option<String>,
    bar: Option<ProgressBar>,
}

impl Console {
    pub fn new(quiet: bool, verbose: bool) -> Self {
        Console {
            quiet,
            verbose: verbose && !quiet,
            bars: !quiet && std::io::stderr().is_terminal(),
            store: String::new(),
            named: String::new(),
            described: Vec::new(),
            run: None,
            bar: None,
        }
    }

    /// A line only `--verbose` shows.
    fn detail(&mut self, line: &str) {
        if self.verbose {
            self.name_the_store();
            self.line(line);
        }
    }

    /// Names the current store before its lines when another described store's came last
    /// (before its header the store's first lines need none).
    fn name_the_store(&mut self) {
        if self.named != self.store && self.described.contains(&self.store) {
            self.named = self.store.clone();
            self.line(&format!("== {} ==", self.store));
        }
    }

    fn line(&mut self, line: &str) {
        if !self.quiet {
            match &self.bar {
                // A reader that has gone is dropped by `write_out`; any other failure to show
                // a progress line must not stop the run either.
                Some(bar) => bar
                    .suspend(|| crate::output::outln!("{line}"))
                    .unwrap_or(()),
                None => crate::output::outln!("{line}").unwrap_or(()),
            }
        }
    }
}

impl Observer for Console {
    fn floor_measured(&mut self, floor: &crate::report::model::Floor) {
        self.line(&format!("{}\n", lines::floor_line(floor)));
    }

    fn store_started(&mut self, store: &str) {
        self.store = store.to_string();
        self.run = None;
    }

    fn run_started(&mut self, label: &str) {
        self.run = Some(label.to_string());
        self.detail(&format!("-- {label} --"));
    }

    fn store_described(&mut self, result: &StoreResult) {
        self.named = result.store.clone();
        self.described.push(result.store.clone());
        self.line(&lines::store_header(result));
    }

    fn size_measured(&mut self, which: &str, bytes: Option<u64>) {
        self.detail(&lines::size_line(which, bytes));
    }

    fn phase_started(&mut self, kind: PhaseKind, size: &Size, ops: u64) {
        if !self.bars {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(ops), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {rate} eta {eta}")
                .expect("static progress template")
                .with_key(
                    "rate",
                    |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{:.0} ops/s", state.per_sec());
                    },
                )
                .progress_chars("=> "),
        );
        let run = self
            .run
            .as_deref()
            .map(|r| format!(" {r}:"))
            .unwrap_or_default();
        bar.set_prefix(format!(
            "{}{run} {} {}",
            self.store,
            kind.label(),
            size.name
        ));
        bar.enable_steady_tick(Duration::from_millis(200));
        self.bar = Some(bar);
    }

    fn progress(&mut self, done: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(done);
        }
    }

    fn phase_finished(&mut self, phase: &PhaseResult) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        self.detail(&lines::phase_line(phase));
    }

    fn status(&mut self, line: &str) {
        // A progress bar says as much; without one (a log, a pipe), a line now and then.
        if !self.quiet && !self.bars {
            crate::output::errln!("{line}");
        }
    }

    fn not_applicable(&mut self, test: &str) {
        self.detail(&format!("{test}: not applicable"));
    }

    fn store_finished(&mut self, result: &StoreResult) {
        let repeated: Vec<String> = result.phases.iter().flat_map(lines::runs_block).collect();
        let runs = result
            .phases
            .iter()
            .map(|p| p.runs.len())
            .max()
            .unwrap_or(0);
        let once = repeated.is_empty();
        if result.info.is_none() || self.named != result.store {
            self.named = result.store.clone();
            self.line(&lines::store_header(result));
        }
        if self.verbose && !once {
            self.line(&format!("-- {}: medians of {runs} runs --", result.store));
        }
        if !self.verbose || !once {
            for line in lines::store_lines(result) {
                self.line(&line);
            }
        }
        if self.verbose {
            for line in repeated {
                self.line(&line);
            }
        }
        for line in result.phases.iter().filter_map(lines::summary_line) {
            self.line(&line);
        }
        // Quiet: the store's end is among the warnings printed after the run.
        if self.verbose
            && once
            && let Some(status) = lines::status_line(result)
        {
            self.line(&status);
        }
        self.line("");
    }
}
