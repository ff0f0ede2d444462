//! The command line's values: each flag's text checked and read, with an error that says
//! what the flag takes.

use std::num::NonZeroU64;

use crate::variant::StoreId;

/// One `--store` entry: every store, or one by name (a kind, or a variant of one:
/// `postgres@sync`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSelector {
    All,
    One(StoreId),
}

/// `dbcompare server`'s store: one that dbcompare starts a server of, without a label.
pub(super) fn parse_server_store(s: &str) -> Result<StoreSelector, String> {
    let startable = "postgres, mysql, redis or redis-cluster";
    match StoreId::parse(s.trim()) {
        Ok(id) if !id.is_variant() && crate::server::can_start(id.kind) => {
            Ok(StoreSelector::One(id))
        }
        Ok(id) if id.is_variant() => Err(format!("'{s}': server takes a store without a label")),
        _ => Err(format!("'{s}': dbcompare starts servers of {startable}")),
    }
}

pub fn parse_store(s: &str) -> Result<StoreSelector, String> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("all") {
        return Ok(StoreSelector::All);
    }
    if s.split_once('@')
        .is_some_and(|(n, _)| n.eq_ignore_ascii_case("all"))
    {
        return Err(format!(
            "'{s}': all takes no label (label each store: postgres@a)"
        ));
    }
    StoreId::parse(s).map(StoreSelector::One).map_err(|e| {
        if e.starts_with("unknown store") {
            e.replacen("valid names: ", "valid names: all, ", 1)
        } else {
            e
        }
    })
}

/// A count that must be at least 1.
pub fn parse_positive(s: &str) -> Result<NonZeroU64, String> {
    match s.trim().replace('_', "").parse::<i128>() {
        Ok(n) if n >= 1 && n <= i128::from(u64::MAX) => {
            Ok(NonZeroU64::new(n as u64).expect("n >= 1"))
        }
        Ok(n) if n >= 1 => Err(format!("'{s}' is too large")),
        Ok(_) => Err(format!("must be at least 1, not '{s}'")),
        Err(_) => Err(format!("'{s}' is not a whole number")),
    }
}

/// A whole number, 0 or more, said so when it is not.
pub(super) fn parse_count<T: TryFrom<i128>>(s: &str) -> Result<T, String> {
    match s.trim().replace('_', "").parse::<i128>() {
        Ok(n) if n >= 0 => T::try_from(n).map_err(|_| format!("'{s}' is too large")),
        _ => Err(format!("must be a whole number, 0 or more, not '{s}'")),
    }
}

pub(super) fn parse_scale(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(f) if f.is_finite() && f > 0.0 && f <= 100.0 => Ok(f),
        _ => Err(format!("must be a number above 0 (at most 100), not '{s}'")),
    }
}

/// RFC 3339 (`2026-12-02T03:00:00Z`) or Unix seconds.
pub(super) fn parse_time(s: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    if let Ok(seconds) = s.parse::<i64>() {
        return chrono::DateTime::from_timestamp(seconds, 0)
            .ok_or_else(|| format!("`{s}`: not a time"));
    }
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&chrono::Utc))
        .map_err(|e| format!("`{s}`: RFC 3339 (2026-12-02T03:00:00Z) or Unix seconds ({e})"))
}

pub(super) fn parse_percent(s: &str) -> Result<f64, String> {
    let value: f64 = s
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("`{s}` is not a percentage"))?;
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(format!("`{s}`: a percentage of 0 or more"))
    }
}

pub(super) fn parse_alpha(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(a) if a > 0.0 && a < 1.0 => Ok(a),
        _ => Err(format!("`{s}`: a level between 0 and 1, for example 0.05")),
    }
}
