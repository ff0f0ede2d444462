//! JSON rendering (`run.json`), reading a saved run back, and the layout's JSON Schema.

use std::path::Path;

use anyhow::Result;

use super::model::{OLDEST_SCHEMA_READ, Report, SCHEMA_VERSION};
use crate::error::UsageError;

/// `run.json` for a run: pretty-printed, ending in a newline.
pub fn render(report: &Report) -> String {
    let mut out = serde_json::to_string_pretty(report).expect("a report always serializes");
    out.push('\n');
    out
}

/// The JSON Schema of `run.json` (draft 2020-12), generated from the model types: what
/// `schema/run.schema.json` holds.
pub fn schema() -> String {
    let schema = schemars::schema_for!(Report);
    let mut out = serde_json::to_string_pretty(&schema).expect("a schema always serializes");
    out.push('\n');
    out
}

/// Reads a `run.json`, refusing a schema version this build does not know. The error says
/// what is wrong (empty, not JSON, truncated, another layout) and where.
pub fn parse(text: &str) -> Result<Report, String> {
    if text.trim().is_empty() {
        return Err("the file is empty".into());
    }
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| match e.classify() {
        serde_json::error::Category::Eof => format!("the JSON ends early (truncated?): {e}"),
        _ => format!("not JSON: {e}"),
    })?;
    let Some(object) = value.as_object() else {
        return Err("not a dbcompare run: the JSON is not an object".into());
    };
    let written_by = object
        .get("tool")
        .and_then(|t| t.get("version"))
        .and_then(|v| v.as_str())
        .map(|v| format!(" (written by dbcompare {v})"))
        .unwrap_or_default();
    match object.get("schema_version").map(|v| v.as_u64()) {
        None => return Err("not a dbcompare run: it has no schema_version".into()),
        Some(Some(v))
            if (u64::from(OLDEST_SCHEMA_READ)..=u64::from(SCHEMA_VERSION)).contains(&v) => {}
        Some(Some(v)) => {
            return Err(format!(
                "schema_version {v}{written_by}; this dbcompare reads schema_version \
                 {SCHEMA_VERSION} and back to {OLDEST_SCHEMA_READ}"
            ));
        }
        Some(None) => return Err("schema_version is not a whole number".into()),
    }
    // From the text, not the value: serde's message then gives the line and column.
    serde_json::from_str(text).map_err(|e| format!("not the layout of run.json: {e}"))
}

/// Reads the `run.json` at `path`; every problem is a usage error naming the file.
pub fn load(path: &Path) -> Result<Report> {
    let text = std::fs::read(path)
        .map_err(|e| UsageError::new(format!("{}: cannot read it: {e}", path.display())))?;
    let text = String::from_utf8(text)
        .map_err(|e| UsageError::new(format!("{}: not UTF-8 text: {e}", path.display())))?;
    parse(&text).map_err(|e| UsageError::new(format!("{}: {e}", path.display())).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_say_what_is_wrong() {
        let cases = [
            ("", "empty"),
            ("   \n", "empty"),
            ("{\"schema_version\": 1, \"tool\"", "ends early"),
            ("not json", "not JSON"),
            ("[1, 2]", "not an object"),
            ("{\"tool\": {}}", "no schema_version"),
            ("{\"schema_version\": \"1\"}", "not a whole number"),
            (
                "{\"schema_version\": 1, \"tool\": 3}",
                "not the layout of run.json",
            ),
        ];
        for (text, expected) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }

    #[test]
    fn another_schema_version_names_both() {
        let future = SCHEMA_VERSION + 1;
        let err = parse(&format!(
            r#"{{"schema_version": {future}, "tool": {{"name": "dbcompare", "version": "9.1.0"}}}}"#
        ))
        .unwrap_err();
        assert!(err.contains(&format!("schema_version {future}")), "{err}");
        assert!(err.contains("dbcompare 9.1.0"), "{err}");
        assert!(
            err.contains(&format!("schema_version {SCHEMA_VERSION}")),
            "{err}"
        );
    }

    #[test]
    fn the_schema_describes_the_layout() {
        let schema: serde_json::Value = serde_json::from_str(&schema()).unwrap();
        let required = schema["required"].as_array().unwrap();
        for field in ["schema_version", "tool", "plan", "machine", "stores"] {
            assert!(required.iter().any(|r| r == field), "{field} not required");
        }
        assert!(schema["$defs"]["PhaseResult"].is_object());
    }
}
