//! The terminal side of a run: the blog's lines on stdout as each phase completes, progress
//! bars on stderr (only when stderr is a terminal).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use crate::report::model::{PhaseKind, PhaseResult, StoreResult};
use crate::report::text;
use crate::suite::Observer;
use crate::workload::record::Size;

/// Prints a run as it goes.
pub struct Console {
    quiet: bool,
    bars: bool,
    store: String,
    bar: Option<ProgressBar>,
}

impl Console {
    pub fn new(quiet: bool) -> Self {
        Console {
            quiet,
            bars: !quiet && std::io::stderr().is_terminal(),
            store: String::new(),
            bar: None,
        }
    }

    fn line(&mut self, line: &str) {
        if !self.quiet {
            match &self.bar {
                Some(bar) => bar.suspend(|| println!("{line}")),
                None => println!("{line}"),
            }
        }
    }
}

impl Observer for Console {
    fn store_started(&mut self, store: &str) {
        self.store = store.to_string();
    }

    fn run_started(&mut self, label: &str) {
        self.line(&format!("-- {label} --"));
    }

    fn store_described(&mut self, result: &StoreResult) {
        self.line(&text::store_header(result));
    }

    fn size_measured(&mut self, which: &str, bytes: Option<u64>) {
        self.line(&text::size_line(which, bytes));
    }

    fn phase_started(&mut self, kind: PhaseKind, size: &Size, ops: u64) {
        if !self.bars {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(ops), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{prefix:>24} [{bar:30}] {pos}/{len} {rate} eta {eta}")
                .expect("static progress template")
                .with_key(
                    "rate",
                    |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{:.0} ops/s", state.per_sec());
                    },
                )
                .progress_chars("=> "),
        );
        bar.set_prefix(format!("{} {} {}", self.store, kind.label(), size.name));
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
        self.line(&text::phase_line(phase));
    }

    fn status(&mut self, line: &str) {
        // A progress bar says as much; without one (a log, a pipe), a line now and then.
        if !self.quiet && !self.bars {
            eprintln!("{line}");
        }
    }

    fn not_applicable(&mut self, test: &str) {
        self.line(&format!("{test}: not applicable"));
    }

    fn store_finished(&mut self, result: &StoreResult) {
        let repeated: Vec<String> = result.phases.iter().flat_map(text::runs_block).collect();
        if !repeated.is_empty() {
            self.line(&format!(
                "-- {}: medians of {} runs --",
                result.store,
                result
                    .phases
                    .iter()
                    .map(|p| p.runs.len())
                    .max()
                    .unwrap_or(0)
            ));
            for line in text::store_lines(result) {
                self.line(&line);
            }
            for line in repeated {
                self.line(&line);
            }
        }
        if result.info.is_none() {
            self.line(&text::store_header(result));
        }
        if let Some(status) = text::status_line(result) {
            if self.quiet {
                eprintln!("{}: {status}", result.store);
            } else {
                self.line(&status);
            }
        }
        self.line("");
    }
}
