//! How much of a workload runs at once and how often: a concurrency level and a suite's
//! repetitions, one type each from the command line to run.json.

use std::fmt;
use std::num::NonZeroU32;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Tasks at once, each on its own connection: at least 1.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct Concurrency(NonZeroU32);

impl Concurrency {
    /// One task: one connection, one operation after another.
    pub const ONE: Concurrency = Concurrency(NonZeroU32::MIN);

    /// `n` tasks; `None` for 0.
    pub const fn new(n: u32) -> Option<Concurrency> {
        match NonZeroU32::new(n) {
            Some(n) => Some(Concurrency(n)),
            None => None,
        }
    }

    pub fn get(self) -> u32 {
        self.0.get()
    }

    /// The tasks, as a count of things (connections, handles).
    pub fn tasks(self) -> usize {
        self.0.get() as usize
    }

    /// This level times `n` (several load clients' tasks together), `None` on overflow.
    pub fn times(self, n: u32) -> Option<Concurrency> {
        NonZeroU32::new(n)
            .and_then(|n| self.0.checked_mul(n))
            .map(Concurrency)
    }
}

impl PartialEq<u32> for Concurrency {
    fn eq(&self, n: &u32) -> bool {
        self.0.get() == *n
    }
}

impl fmt::Display for Concurrency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl FromStr for Concurrency {
    type Err = String;

    /// A whole number from 1 to 4,294,967,295 (`_` may group digits).
    fn from_str(s: &str) -> Result<Concurrency, String> {
        match s.trim().replace('_', "").parse::<i128>() {
            Ok(n) if n >= 1 && n <= i128::from(u32::MAX) => {
                Ok(Concurrency::new(n as u32).expect("n >= 1"))
            }
            Ok(n) if n < 1 => Err(format!("must be at least 1, not '{s}'")),
            Ok(_) => Err(format!("must be at most {}, not '{s}'", u32::MAX)),
            Err(_) => Err(format!("'{s}' is not a whole number")),
        }
    }
}

/// The runs a suite repeats its phases over: warm-up runs, discarded, then measured runs,
/// whose figures are their medians.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repetitions {
    pub warmup: u32,
    pub measured: NonZeroU32,
}

impl Repetitions {
    /// One measured run, no warm-up.
    pub const ONCE: Repetitions = Repetitions {
        warmup: 0,
        measured: NonZeroU32::MIN,
    };

    /// Runs in all.
    pub fn total(self) -> u32 {
        self.warmup.saturating_add(self.measured.get())
    }

    /// Every run, warm-ups first.
    pub fn iter(self) -> impl Iterator<Item = Repetition> {
        let total = self.total();
        (0..total).map(move |index| Repetition {
            index,
            total,
            label: if index < self.warmup {
                RunLabel::Warmup {
                    index: index + 1,
                    of: self.warmup,
                }
            } else {
                RunLabel::Measured {
                    index: index - self.warmup + 1,
                    of: self.measured.get(),
                }
            },
        })
    }
}

/// One run of a suite's repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repetition {
    /// From 0, warm-ups first.
    pub index: u32,
    /// Runs in all.
    pub total: u32,
    pub label: RunLabel,
}

impl Repetition {
    /// A measured run: its figures count.
    pub fn counted(&self) -> bool {
        matches!(self.label, RunLabel::Measured { .. })
    }

    /// The first run of all.
    pub fn is_first(&self) -> bool {
        self.index == 0
    }
}

/// Which run of the suite is going.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunLabel {
    Warmup { index: u32, of: u32 },
    Measured { index: u32, of: u32 },
}

impl fmt::Display for RunLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunLabel::Warmup { index, of } => write!(f, "warm-up run {index}/{of} (discarded)"),
            RunLabel::Measured { index, of } => write!(f, "run {index}/{of}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_ups_come_first_and_are_not_counted() {
        let reps = Repetitions {
            warmup: 1,
            measured: NonZeroU32::new(2).unwrap(),
        };
        let labels: Vec<(String, bool)> = reps
            .iter()
            .map(|r| (r.label.to_string(), r.counted()))
            .collect();
        assert_eq!(
            labels,
            [
                ("warm-up run 1/1 (discarded)".to_string(), false),
                ("run 1/2".to_string(), true),
                ("run 2/2".to_string(), true),
            ]
        );
        assert_eq!(reps.total(), 3);
        assert!(reps.iter().next().unwrap().is_first());
        assert_eq!(Repetitions::ONCE.iter().count(), 1);
    }

    #[test]
    fn a_level_is_a_whole_number_from_one() {
        assert_eq!("8".parse::<Concurrency>().unwrap().get(), 8);
        assert_eq!("1_000".parse::<Concurrency>().unwrap().tasks(), 1000);
        assert!(
            "0".parse::<Concurrency>()
                .unwrap_err()
                .contains("at least 1")
        );
        assert!(
            "4294967296"
                .parse::<Concurrency>()
                .unwrap_err()
                .contains("at most")
        );
        assert!("x".parse::<Concurrency>().is_err());
        assert_eq!(Concurrency::ONE.times(50).unwrap().get(), 50);
        assert_eq!(Concurrency::new(u32::MAX).unwrap().times(2), None);
        assert_eq!(
            serde_json::to_string(&Concurrency::new(8)).unwrap(),
            "8",
            "a plain number in run.json"
        );
        assert!(serde_json::from_str::<Concurrency>("0").is_err());
    }
}
