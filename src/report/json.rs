//! JSON rendering (`run.json`) and reading a saved run back.

use anyhow::{Context, Result, bail};

use super::model::{Report, SCHEMA_VERSION};

/// `run.json` for a run: pretty-printed, ending in a newline.
pub fn render(report: &Report) -> String {
    let mut out = serde_json::to_string_pretty(report).expect("a report always serializes");
    out.push('\n');
    out
}

/// Reads a `run.json`, refusing a schema version this build does not know.
pub fn parse(text: &str) -> Result<Report> {
    let value: serde_json::Value = serde_json::from_str(text).context("not JSON")?;
    let version = value.get("schema_version").and_then(|v| v.as_u64());
    if version != Some(u64::from(SCHEMA_VERSION)) {
        bail!(
            "run.json schema_version {version:?} is not {SCHEMA_VERSION}, the one this dbcompare reads"
        );
    }
    serde_json::from_value(value).context("run.json does not match its schema")
}
