//! Variants of a store: one kind run more than once in a run under a label
//! (`postgres@sync`, `postgres@async`), each with its own settings. [`StoreId`] names a
//! store of a run (its kind, and its label when it is a variant); [`Variant`] is what a
//! variant runs with besides its kind (its durability mode, a configuration file its
//! throw-away server starts with, single settings on top).

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use clap::ValueEnum;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::catalog::{Durability, StoreKind};

/// A store of a run: a kind, and a label when it is one variant of several
/// (`postgres@sync`). Written as that string everywhere (the command line, run.json, the
/// reports), so a store without a label is written as its kind's name alone.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StoreId {
    pub kind: StoreKind,
    /// The variant's label: letters, digits, `_`, `-` and `.`.
    pub label: Option<String>,
}

impl StoreId {
    /// The kind itself, no label.
    pub fn of(kind: StoreKind) -> Self {
        StoreId { kind, label: None }
    }

    /// A labelled variant of `kind`; the label must be valid (see [`check_label`]).
    pub fn variant(kind: StoreKind, label: &str) -> Result<Self, String> {
        check_label(label)?;
        Ok(StoreId {
            kind,
            label: Some(label.to_string()),
        })
    }

    /// Reads `postgres` or `postgres@sync` (the kind's name in any case).
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let (name, label) = match s.split_once('@') {
            Some((name, label)) => (name, Some(label)),
            None => (s, None),
        };
        let kind = StoreKind::from_str(name, true).map_err(|_| {
            let names: Vec<&str> = StoreKind::all().iter().map(|k| k.name()).collect();
            format!(
                "unknown store '{name}'; valid names: {} (a variant: NAME@LABEL)",
                names.join(", ")
            )
        })?;
        match label {
            None => Ok(StoreId::of(kind)),
            Some(label) => StoreId::variant(kind, label),
        }
    }

    /// Whether this is a labelled variant.
    pub fn is_variant(&self) -> bool {
        self.label.is_some()
    }
}

impl fmt::Display for StoreId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.label {
            Some(label) => write!(f, "{}@{label}", self.kind.name()),
            None => f.write_str(self.kind.name()),
        }
    }
}

impl Serialize for StoreId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for StoreId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        StoreId::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Whether `text` is one or more letters, digits, `_`, `-` or `.`.
fn plain(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// A label is 1 to 32 letters, digits, `_`, `-` or `.`: it goes into file names, chart
/// legends and markdown as it is.
pub fn check_label(label: &str) -> Result<(), String> {
    if plain(label) && label.len() <= 32 {
        Ok(())
    } else {
        Err(format!(
            "'{label}' is not a variant label: 1 to 32 letters, digits, '_', '-' or '.'"
        ))
    }
}

/// A setting's name as `--set` takes it: letters, digits, `_`, `-` and `.` (PostgreSQL's
/// `auto_explain.log_min_duration`, MySQL's `innodb-flush-log-at-trx-commit`).
pub fn check_setting_name(name: &str) -> Result<(), String> {
    if plain(name) {
        Ok(())
    } else {
        Err(format!(
            "'{name}' is not a setting name: letters, digits, '_', '-' or '.'"
        ))
    }
}

/// A setting's value as `--set` takes it: one line, without quotes or a backslash (it goes
/// into a configuration line or a quoted statement as it is).
pub fn check_setting_value(value: &str) -> Result<(), String> {
    if value
        .chars()
        .any(|c| c.is_control() || matches!(c, '\'' | '"' | '\\' | '`'))
    {
        return Err(format!(
            "'{value}': a setting's value is one line without quotes or backslashes"
        ));
    }
    Ok(())
}

/// A configuration file given with `--config`: layered on the file of `configs/` the
/// throw-away server starts with (its lines after that file's, so they win).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigLayer {
    /// Where it was read from, for messages and the report.
    pub path: PathBuf,
    pub text: String,
}

/// What a store of a run runs with besides its kind and its server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Variant {
    pub durability: Durability,
    /// `--config`: lines after `configs/`'s for its throw-away server.
    pub config: Option<ConfigLayer>,
    /// `--set`: single settings on top, by name, applied the way the server takes them (a
    /// configuration line of its throw-away server; on a server given by URL `SET` per
    /// connection, `SET GLOBAL` or `CONFIG SET`).
    pub settings: BTreeMap<String, String>,
}

impl Variant {
    /// The plain store in a durability mode: nothing of its own.
    pub fn plain(durability: Durability) -> Self {
        Variant {
            durability,
            config: None,
            settings: BTreeMap::new(),
        }
    }

    /// Whether it asks its server for anything beyond `configs/` and the durability mode.
    pub fn has_own_settings(&self) -> bool {
        self.config.is_some() || !self.settings.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_id_reads_and_writes_as_its_name() {
        let id = StoreId::parse("Postgres@sync").unwrap();
        assert_eq!(id.kind, StoreKind::Postgres);
        assert_eq!(id.to_string(), "postgres@sync");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"postgres@sync\"");
        let plain: StoreId = serde_json::from_str("\"redis-cluster\"").unwrap();
        assert_eq!(plain, StoreId::of(StoreKind::RedisCluster));
        assert_eq!(plain.to_string(), "redis-cluster");
        assert!(StoreId::parse("postgres@").is_err());
        assert!(StoreId::parse("postgres@a b").is_err());
        assert!(
            StoreId::parse("oracle@x")
                .unwrap_err()
                .contains("unknown store 'oracle'")
        );
        assert!(StoreId::parse("redis@every.sec-1_b").is_ok());
    }

    #[test]
    fn setting_names_and_values_stay_on_one_line() {
        assert!(check_setting_name("auto_explain.log_min_duration").is_ok());
        assert!(check_setting_name("a b").is_err());
        assert!(check_setting_name("").is_err());
        assert!(check_setting_value("256MB").is_ok());
        assert!(check_setting_value("").is_ok());
        assert!(check_setting_value("x\nfsync off").is_err());
        assert!(check_setting_value("o'clock").is_err());
    }
}
