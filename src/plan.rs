//! Raw command-line arguments -> a resolved [`RunPlan`], checked before anything starts.

use std::collections::HashSet;
use std::path::PathBuf;

use crate::cli::{RunArgs, StoreSelector, Suite};
use crate::error::UsageError;
use crate::report::model::PlanSummary;
use crate::store::{Availability, StoreKind, StoreOptions};
use crate::suite::classic::ClassicPlan;

/// Everything a run does, resolved and validated.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub suite: Suite,
    /// Stores in run order, without duplicates.
    pub stores: Vec<StoreKind>,
    /// Whether the stores were named (an unavailable one is then an error) rather than `all`.
    pub stores_named: bool,
    pub classic: ClassicPlan,
    pub out: PathBuf,
    pub quiet: bool,
    pub store_options: StoreOptions,
}

impl RunPlan {
    /// Resolves and validates the arguments (no I/O).
    pub fn resolve(args: &RunArgs) -> Result<Self, UsageError> {
        let stores_named = !args.stores.contains(&StoreSelector::All);
        let stores = if stores_named {
            let mut seen = HashSet::new();
            args.stores
                .iter()
                .filter_map(|s| match s {
                    StoreSelector::One(k) => seen.insert(*k).then_some(*k),
                    StoreSelector::All => None,
                })
                .collect()
        } else {
            StoreKind::ALL.to_vec()
        };
        let mut names = HashSet::new();
        for size in &args.sizes {
            if !names.insert(size.name.as_str()) {
                return Err(UsageError::new(format!(
                    "--sizes: '{}' is given twice (each size's records have their own unique_ids)",
                    size.name
                )));
            }
        }
        if args.sizes.is_empty() {
            return Err(UsageError::new("--sizes: at least one size is needed"));
        }
        Ok(RunPlan {
            suite: args.suite,
            stores,
            stores_named,
            classic: ClassicPlan {
                sizes: args.sizes.clone(),
                searches_per_insert: args.searches_per_insert.get(),
                seed: args.seed,
            },
            out: args.out.clone(),
            quiet: args.quiet,
            store_options: StoreOptions {
                sqlite_path: args.sqlite_path.clone(),
            },
        })
    }

    /// Fails when a store asked for by name cannot run here (with `all` it is skipped).
    pub fn check_availability(&self) -> Result<(), UsageError> {
        if !self.stores_named {
            return Ok(());
        }
        for kind in &self.stores {
            if let Availability::Unavailable(why) = kind.availability(&self.store_options) {
                return Err(UsageError::new(format!("--store {kind}: {why}")));
            }
        }
        Ok(())
    }

    /// The part of the plan a report carries.
    pub fn summary(&self) -> PlanSummary {
        PlanSummary {
            suite: format!("{:?}", self.suite).to_lowercase(),
            stores: self.stores.iter().map(|k| k.name().to_string()).collect(),
            sizes: self.classic.sizes.clone(),
            searches_per_insert: self.classic.searches_per_insert,
            seed: self.classic.seed,
        }
    }
}
