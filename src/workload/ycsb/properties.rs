//! YCSB's workload files, the six core ones ([`CORE`]) or another: Java properties
//! (`key=value`, `key: value` or `key value` lines, `#` and `!` comments), read into a
//! [`Workload`] key by key. An unknown key, a malformed line or a value out of range is an
//! error naming its line; a key of YCSB's that dbcompare does not support is refused with
//! the reason, never ignored.

use super::workload::{Distribution, ScanLength, Workload};

/// YCSB's six core workload files (`workloads/` of this repository), by letter.
pub const CORE: [(char, &str); 6] = [
    ('a', include_str!("../../../workloads/workloada")),
    ('b', include_str!("../../../workloads/workloadb")),
    ('c', include_str!("../../../workloads/workloadc")),
    ('d', include_str!("../../../workloads/workloadd")),
    ('e', include_str!("../../../workloads/workloade")),
    ('f', include_str!("../../../workloads/workloadf")),
];

/// Where a property came from, for messages: a line of a file, or a `--property`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Line { source: String, line: usize },
    Flag,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Line { source, line } => write!(f, "{source} line {line}"),
            Origin::Flag => f.write_str("--property"),
        }
    }
}

/// One `key=value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    pub origin: Origin,
    pub key: String,
    pub value: String,
}

/// The properties of a workload file's text, in order.
pub fn parse(text: &str, source: &str) -> Result<Vec<Property>, String> {
    let mut properties = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let origin = Origin::Line {
            source: source.to_string(),
            line: i + 1,
        };
        if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
            continue;
        }
        if line.ends_with('\\') {
            return Err(format!(
                "{origin}: a line continued with '\\' is not supported"
            ));
        }
        let split = line
            .find(['=', ':'])
            .map(|at| (&line[..at], &line[at + 1..]))
            .or_else(|| line.split_once(char::is_whitespace));
        let Some((key, value)) = split else {
            return Err(format!("{origin}: '{line}' is not key=value"));
        };
        let key = key.trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(format!("{origin}: '{line}' is not key=value"));
        }
        properties.push(Property {
            origin,
            key: key.to_string(),
            value: value.trim().to_string(),
        });
    }
    Ok(properties)
}

/// A `--property KEY=VALUE`.
pub fn flag(entry: &str) -> Result<Property, String> {
    let (key, value) = entry
        .split_once('=')
        .ok_or_else(|| format!("--property: expected KEY=VALUE, got '{entry}'"))?;
    Ok(Property {
        origin: Origin::Flag,
        key: key.trim().to_string(),
        value: value.trim().to_string(),
    })
}

/// YCSB's keys dbcompare refuses, and why.
fn refused(key: &str) -> Option<&'static str> {
    Some(match key {
        "threadcount" => "set the connections with dbcompare's --concurrency",
        "target" => "set an open-loop rate with dbcompare's --rate",
        "db"
        | "exporter"
        | "exportfile"
        | "measurementtype"
        | "measurement.interval"
        | "histogram.buckets"
        | "timeseries.granularity"
        | "status.interval"
        | "maxexecutiontime" => {
            "a setting of YCSB's client, not of the workload: dbcompare measures and reports \
             on its own"
        }
        "fieldlengthhistogram" | "minfieldlength" => {
            "only for fieldlengthdistribution other than constant, which dbcompare does not \
             support (every value is checked against the one written)"
        }
        "core_workload_insertion_retry_limit" | "core_workload_insertion_retry_interval" => {
            "a failed insert fails the store's run in dbcompare"
        }
        "exponential.percentile" | "exponential.frac" => {
            "requestdistribution exponential is not supported"
        }
        _ => return None,
    })
}

impl Workload {
    /// A core workload (`a` to `f`) with `overrides` on top (`--property`).
    pub fn core(letter: char, overrides: &[Property]) -> Result<Self, String> {
        let (_, text) = CORE
            .iter()
            .find(|(l, _)| *l == letter.to_ascii_lowercase())
            .ok_or_else(|| {
                format!("--workload {letter}: YCSB's core workloads are a, b, c, d, e and f")
            })?;
        Self::from_text(
            &letter.to_string(),
            text,
            &format!("workloads/workload{letter}"),
            overrides,
        )
    }

    /// A workload from the text of a YCSB workload file, `source` naming it in messages.
    pub fn from_text(
        name: &str,
        text: &str,
        source: &str,
        overrides: &[Property],
    ) -> Result<Self, String> {
        let mut w = Workload::defaults(name);
        w.apply(&parse(text, source)?)?;
        w.apply(overrides)?;
        w.check().map_err(|why| format!("{source}: {why}"))?;
        Ok(w)
    }

    /// Applies `properties` in order (a later one wins). Every key is checked.
    pub fn apply(&mut self, properties: &[Property]) -> Result<(), String> {
        for p in properties {
            self.set(p)
                .map_err(|why| format!("{}: {}={}: {why}", p.origin, p.key, p.value))?;
        }
        Ok(())
    }

    fn set(&mut self, p: &Property) -> Result<(), String> {
        let v = p.value.as_str();
        let count = |min: u64| -> Result<u64, String> {
            let n: u64 = v
                .replace('_', "")
                .parse()
                .map_err(|_| format!("'{v}' is not a whole number"))?;
            if n < min {
                return Err(format!("must be at least {min}"));
            }
            Ok(n)
        };
        let fraction = || -> Result<f64, String> {
            let f: f64 = v.parse().map_err(|_| format!("'{v}' is not a number"))?;
            if !(0.0..=1.0).contains(&f) {
                return Err("must be between 0 and 1".to_string());
            }
            Ok(f)
        };
        let flag = || match v {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(format!("'{v}' is neither true nor false")),
        };
        match p.key.as_str() {
            "recordcount" => self.record_count = count(1)?,
            "operationcount" => self.operation_count = count(1)?,
            "workload" => {
                if !matches!(
                    v,
                    "site.ycsb.workloads.CoreWorkload" | "com.yahoo.ycsb.workloads.CoreWorkload"
                ) {
                    return Err("only YCSB's CoreWorkload is supported".to_string());
                }
            }
            "table" => {
                if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err("a table name of letters, digits and _".to_string());
                }
                self.table = v.to_string();
            }
            "fieldcount" => self.field_count = count(1)?.min(1_000) as u16,
            "fieldlength" => self.field_length = count(1)? as usize,
            "fieldlengthdistribution" => {
                if v != "constant" {
                    return Err(
                        "only constant is supported (every value is checked against the one \
                         written)"
                            .to_string(),
                    );
                }
            }
            "fieldnameprefix" => {
                if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err("a prefix of letters, digits and _".to_string());
                }
                self.field_name_prefix = v.to_string();
            }
            "readallfields" => self.read_all_fields = flag()?,
            "writeallfields" => self.write_all_fields = flag()?,
            // Every field is named in every read, and every answer is checked: both hold
            // whatever these say.
            "readallfieldsbyname" | "dataintegrity" => {
                flag()?;
            }
            "readproportion" => self.proportions.read = fraction()?,
            "updateproportion" => self.proportions.update = fraction()?,
            "insertproportion" => self.proportions.insert = fraction()?,
            "scanproportion" => self.proportions.scan = fraction()?,
            "readmodifywriteproportion" => self.proportions.read_modify_write = fraction()?,
            "requestdistribution" => {
                self.distribution = match v {
                    "uniform" => Distribution::Uniform,
                    "zipfian" => Distribution::Zipfian,
                    "latest" => Distribution::Latest,
                    "sequential" => Distribution::Sequential,
                    "hotspot" => Distribution::Hotspot,
                    "exponential" => {
                        return Err("exponential is not supported".to_string());
                    }
                    _ => {
                        return Err(
                            "not one of YCSB's: uniform, zipfian, latest, hotspot, sequential"
                                .to_string(),
                        );
                    }
                }
            }
            "hotspotdatafraction" => self.hotspot_data_fraction = fraction()?,
            "hotspotopnfraction" => self.hotspot_opn_fraction = fraction()?,
            "minscanlength" => self.min_scan_length = count(1)?,
            "maxscanlength" => self.max_scan_length = count(1)?,
            "scanlengthdistribution" => {
                self.scan_length = match v {
                    "uniform" => ScanLength::Uniform,
                    "zipfian" => ScanLength::Zipfian,
                    _ => return Err("not one of YCSB's: uniform, zipfian".to_string()),
                }
            }
            "insertorder" => {
                self.ordered_inserts = match v {
                    "hashed" => false,
                    "ordered" => true,
                    _ => return Err("not one of YCSB's: hashed, ordered".to_string()),
                }
            }
            "insertstart" => self.insert_start = count(0)?,
            "insertcount" => self.insert_count = Some(count(1)?),
            "zeropadding" => self.zero_padding = count(1)?.min(64) as usize,
            key => {
                return Err(match refused(key) {
                    Some(why) => format!("not supported: {why}"),
                    None => "not a key of YCSB's core workload".to_string(),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_as_java_properties_do() {
        let p = parse("# c\n! c\n\na=1\nb : two words\nc 3\n", "f").unwrap();
        let pairs: Vec<(&str, &str)> = p
            .iter()
            .map(|p| (p.key.as_str(), p.value.as_str()))
            .collect();
        assert_eq!(pairs, [("a", "1"), ("b", "two words"), ("c", "3")]);
        assert_eq!(
            p[1].origin,
            Origin::Line {
                source: "f".into(),
                line: 5
            }
        );
        assert!(parse("x=1\\\n", "f").unwrap_err().contains("line 1"));
        assert!(parse("lonely\n", "f").unwrap_err().contains("f line 1"));
    }
}
