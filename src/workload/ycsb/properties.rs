//! YCSB's workload files, the six core ones ([`CORE`]) or another: Java properties, read as
//! Java's `Properties` reads them, into a [`Workload`] key by key. Every key of YCSB's
//! `CoreWorkload` and client is one of [`KEYS`], honoured or refused with the reason, never
//! ignored; an unknown key, a malformed line or a value out of range is an error naming its
//! line (and the range).

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

/// What dbcompare does with one of YCSB's keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// Every value YCSB takes (in dbcompare's range, which a refusal names).
    Honoured,
    /// The values named; any other is refused, saying why.
    Only(&'static str),
    /// Refused whatever its value, for the reason given.
    Refused(&'static str),
}

/// Why YCSB's client settings are refused.
const CLIENT_SETTING: &str =
    "a setting of YCSB's client, not of the workload: dbcompare measures and reports on its own";

/// Why YCSB's insert error handling is refused.
const INSERT_ERRORS: &str = "a failed insert is an error that fails the store's run in dbcompare (never retried, never \
     passed over)";

/// Why the keys of field lengths other than constant are refused.
const FIELD_LENGTHS: &str = "only for a fieldlengthdistribution other than constant, which \
                             dbcompare does not support (every value is checked against the \
                             one written)";

/// Every key of YCSB's `CoreWorkload` (and of its client, which a workload file may hold
/// too), and what dbcompare does with it. Any other key is refused as not one of YCSB's.
pub const KEYS: &[(&str, Handling)] = &[
    (
        "workload",
        Handling::Only("site.ycsb.workloads.CoreWorkload or com.yahoo.ycsb.workloads.CoreWorkload"),
    ),
    ("recordcount", Handling::Honoured),
    ("operationcount", Handling::Honoured),
    ("table", Handling::Honoured),
    ("fieldcount", Handling::Honoured),
    ("fieldlength", Handling::Honoured),
    ("fieldlengthdistribution", Handling::Only("constant")),
    ("minfieldlength", Handling::Refused(FIELD_LENGTHS)),
    ("fieldlengthhistogram", Handling::Refused(FIELD_LENGTHS)),
    ("fieldnameprefix", Handling::Honoured),
    ("readallfields", Handling::Honoured),
    ("readallfieldsbyname", Handling::Only("true")),
    ("writeallfields", Handling::Honoured),
    ("dataintegrity", Handling::Only("true")),
    ("readproportion", Handling::Honoured),
    ("updateproportion", Handling::Honoured),
    ("insertproportion", Handling::Honoured),
    ("scanproportion", Handling::Honoured),
    ("readmodifywriteproportion", Handling::Honoured),
    (
        "requestdistribution",
        Handling::Only("uniform, zipfian, latest, hotspot, sequential"),
    ),
    (
        "exponential.percentile",
        Handling::Refused("requestdistribution=exponential is not supported"),
    ),
    (
        "exponential.frac",
        Handling::Refused("requestdistribution=exponential is not supported"),
    ),
    ("hotspotdatafraction", Handling::Honoured),
    ("hotspotopnfraction", Handling::Honoured),
    ("minscanlength", Handling::Honoured),
    ("maxscanlength", Handling::Honoured),
    ("scanlengthdistribution", Handling::Honoured),
    ("insertorder", Handling::Honoured),
    ("insertstart", Handling::Honoured),
    ("insertcount", Handling::Honoured),
    ("zeropadding", Handling::Honoured),
    (
        "core_workload_insertion_retry_limit",
        Handling::Refused(INSERT_ERRORS),
    ),
    (
        "core_workload_insertion_retry_interval",
        Handling::Refused(INSERT_ERRORS),
    ),
    (
        "core_workload_insertion_keep_going_on_error",
        Handling::Refused(INSERT_ERRORS),
    ),
    (
        "threadcount",
        Handling::Refused("set the connections with dbcompare's --concurrency"),
    ),
    (
        "target",
        Handling::Refused("set an open-loop rate with dbcompare's --rate"),
    ),
    (
        "maxexecutiontime",
        Handling::Refused(
            "a run is operationcount operations in dbcompare, never cut short by a clock",
        ),
    ),
    ("db", Handling::Refused("the store is dbcompare's --store")),
    (
        "columnfamily",
        Handling::Refused(
            "a setting of some of YCSB's database bindings; no store of dbcompare's has one",
        ),
    ),
    ("exporter", Handling::Refused(CLIENT_SETTING)),
    ("exportfile", Handling::Refused(CLIENT_SETTING)),
    ("measurementtype", Handling::Refused(CLIENT_SETTING)),
    ("measurement.interval", Handling::Refused(CLIENT_SETTING)),
    (
        "measurement.raw.output_file",
        Handling::Refused(CLIENT_SETTING),
    ),
    ("measurement.trackjvm", Handling::Refused(CLIENT_SETTING)),
    ("histogram.buckets", Handling::Refused(CLIENT_SETTING)),
    ("timeseries.granularity", Handling::Refused(CLIENT_SETTING)),
    (
        "reportlatencyforeacherror",
        Handling::Refused(CLIENT_SETTING),
    ),
    ("latencytrackederrors", Handling::Refused(CLIENT_SETTING)),
    ("status.interval", Handling::Refused(CLIENT_SETTING)),
    (
        "hdrhistogram.percentiles",
        Handling::Refused(CLIENT_SETTING),
    ),
    ("hdrhistogram.fileoutput", Handling::Refused(CLIENT_SETTING)),
    (
        "hdrhistogram.output.path",
        Handling::Refused(CLIENT_SETTING),
    ),
    (
        "measurement.histogram.verbose",
        Handling::Refused(CLIENT_SETTING),
    ),
    (
        "measurement.raw.no_summary",
        Handling::Refused(CLIENT_SETTING),
    ),
    ("spin.sleep", Handling::Refused(CLIENT_SETTING)),
    ("status", Handling::Refused(CLIENT_SETTING)),
    ("label", Handling::Refused(CLIENT_SETTING)),
    (
        "dotransactions",
        Handling::Refused(
            "YCSB's client sets it from -load or -t: dbcompare loads, then runs every workload",
        ),
    ),
];

/// What dbcompare does with `key`, if it is one of YCSB's.
pub fn handling(key: &str) -> Option<Handling> {
    KEYS.iter().find(|(k, _)| *k == key).map(|&(_, h)| h)
}

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

/// Java's `Properties` whitespace: space, tab and form feed.
fn java_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\u{c}')
}

/// The properties of a workload file's text, in order, read as Java's `Properties.load`
/// reads them: lines end at `\n`, `\r\n` or `\r`; `#` and `!` start comment lines; a line
/// ending in an odd number of backslashes goes on on the next (its leading whitespace
/// dropped); the key runs to the first unescaped `=`, `:` or whitespace, then whitespace,
/// one `=` or `:` and whitespace are skipped; the value is the rest of the line, trailing
/// whitespace kept; escapes (`\t`, `\n`, `\r`, `\f`, `\uXXXX`, and `\` before any other
/// character for that character) stand for their character in key and value. A property
/// names the line it starts on. A line with no key, or a malformed `\u` escape (which Java
/// refuses too), is an error naming its line.
pub fn parse(text: &str, source: &str) -> Result<Vec<Property>, String> {
    let mut properties = Vec::new();
    // The logical line being read: the line it started on, and its text so far.
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in physical_lines(text).enumerate() {
        let line = raw.trim_start_matches(java_space);
        let (start, mut logical) = match pending.take() {
            Some(started) => started,
            None if line.is_empty() || line.starts_with(['#', '!']) => continue,
            None => (i + 1, String::new()),
        };
        let slashes = line.chars().rev().take_while(|&c| c == '\\').count();
        if slashes % 2 == 1 {
            logical.push_str(&line[..line.len() - 1]);
            pending = Some((start, logical));
            continue;
        }
        logical.push_str(line);
        properties.push(property(&logical, line_of(source, start))?);
    }
    if let Some((start, logical)) = pending {
        properties.push(property(&logical, line_of(source, start))?);
    }
    Ok(properties)
}

fn line_of(source: &str, line: usize) -> Origin {
    Origin::Line {
        source: source.to_string(),
        line,
    }
}

/// The lines of `text`, each ending at `\n`, `\r\n` or `\r` (as Java's `Properties`).
fn physical_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest.find(['\n', '\r']).unwrap_or(rest.len());
        let line = &rest[..end];
        let eol = if rest[end..].starts_with("\r\n") {
            2
        } else {
            usize::from(end < rest.len())
        };
        rest = &rest[end + eol..];
        Some(line)
    })
}

/// One logical line (its leading whitespace dropped) as a property.
fn property(logical: &str, origin: Origin) -> Result<Property, String> {
    let mut chars = logical.chars().peekable();
    let mut key = String::new();
    while let Some(&c) = chars.peek() {
        if c == '=' || c == ':' || java_space(c) {
            break;
        }
        chars.next();
        match c {
            '\\' => key.push(unescape(&mut chars, &origin)?),
            c => key.push(c),
        }
    }
    while chars.next_if(|&c| java_space(c)).is_some() {}
    if chars.next_if(|&c| c == '=' || c == ':').is_some() {
        while chars.next_if(|&c| java_space(c)).is_some() {}
    }
    let mut value = String::new();
    while let Some(c) = chars.next() {
        match c {
            '\\' => value.push(unescape(&mut chars, &origin)?),
            c => value.push(c),
        }
    }
    if key.is_empty() {
        return Err(format!("{origin}: '{logical}' has no key"));
    }
    Ok(Property { origin, key, value })
}

/// The character an escape stands for, its backslash read. A backslash that ends the text
/// (after an even number before it: not a continuation) stands for nothing in Java; it is
/// kept here as itself.
fn unescape(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    origin: &Origin,
) -> Result<char, String> {
    Ok(match chars.next() {
        Some('t') => '\t',
        Some('n') => '\n',
        Some('r') => '\r',
        Some('f') => '\u{c}',
        Some('u') => {
            let hex: String = chars.by_ref().take(4).collect();
            (hex.len() == 4 && hex.chars().all(|c| c.is_ascii_hexdigit()))
                .then(|| u32::from_str_radix(&hex, 16).ok())
                .flatten()
                .and_then(char::from_u32)
                .ok_or_else(|| format!("{origin}: malformed \\uxxxx escape \\u{hex}"))?
        }
        Some(other) => other,
        None => '\\',
    })
}

/// A `--property KEY=VALUE`, taken as YCSB's `-p` takes it: the key before the first `=`,
/// the value after it, both as given.
pub fn flag(entry: &str) -> Result<Property, String> {
    let (key, value) = entry
        .split_once('=')
        .ok_or_else(|| format!("--property: expected KEY=VALUE, got '{entry}'"))?;
    Ok(Property {
        origin: Origin::Flag,
        key: key.to_string(),
        value: value.to_string(),
    })
}

/// Java's `Long.parseLong` of `v` (an optional sign, ASCII digits), in `min..=max`.
fn count(v: &str, min: u64, max: u64) -> Result<u64, String> {
    let digits = v.strip_prefix('+').unwrap_or(v);
    let n: u64 = (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
        .ok_or_else(|| format!("{v:?} is not a whole number"))?;
    match (min..=max).contains(&n) {
        true => Ok(n),
        false if max == u64::MAX => Err(format!("must be at least {min}")),
        false => Err(format!("must be between {min} and {max}")),
    }
}

/// Java's `Double.parseDouble` of `v` (surrounding whitespace and a type suffix allowed),
/// between 0 and 1.
fn fraction(v: &str) -> Result<f64, String> {
    let t = v.trim_matches(|c: char| c <= ' ');
    let t = t.strip_suffix(['d', 'D', 'f', 'F']).unwrap_or(t);
    let f: f64 = t.parse().map_err(|_| format!("{v:?} is not a number"))?;
    if !(0.0..=1.0).contains(&f) {
        return Err("must be between 0 and 1".to_string());
    }
    Ok(f)
}

/// Java's `Boolean.parseBoolean` of `v`, which takes any value but `true` (in any case) for
/// false: a value neither true nor false is refused.
fn boolean(v: &str) -> Result<bool, String> {
    if v.eq_ignore_ascii_case("true") {
        Ok(true)
    } else if v.eq_ignore_ascii_case("false") {
        Ok(false)
    } else {
        Err(format!("{v:?} is neither true nor false"))
    }
}

/// A name of ASCII letters, digits and `_` (a table's, a field prefix).
fn word(v: &str, what: &str) -> Result<String, String> {
    if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("{v:?} is not {what} of letters, digits and _"));
    }
    Ok(v.to_string())
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
    /// `recordcount` and `operationcount` must be set, in the file or by `overrides`: YCSB's
    /// client has no default for either.
    pub fn from_text(
        name: &str,
        text: &str,
        source: &str,
        overrides: &[Property],
    ) -> Result<Self, String> {
        let mut w = Workload::defaults(name);
        let properties = parse(text, source)?;
        w.apply(&properties)?;
        w.apply(overrides)?;
        w.check().map_err(|why| format!("{source}: {why}"))?;
        let given = |key: &str| properties.iter().chain(overrides).any(|p| p.key == key);
        for (key, what) in [
            ("recordcount", "the records to load"),
            ("operationcount", "the operations of a run"),
        ] {
            if !given(key) {
                return Err(format!(
                    "{source}: {key} is not set, and YCSB's client has no default for {what} \
                     (set it in the file or with --property {key}=N)"
                ));
            }
        }
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
        let handling = match handling(&p.key) {
            None => {
                return Err("not a key of YCSB's core workload or client (a database \
                            binding's setting is given to dbcompare's store with --url, \
                            --config or --set)"
                    .to_string());
            }
            Some(Handling::Refused(why)) => return Err(format!("not supported: {why}")),
            Some(handling) => handling,
        };
        // A key that takes some values only: this one, or why not.
        let only = |accepted: bool, why: &str| match (accepted, handling) {
            (true, _) | (_, Handling::Honoured | Handling::Refused(_)) => Ok(()),
            (false, Handling::Only(values)) => Err(format!("only {values} ({why})")),
        };
        let distributions = "not one of YCSB's: uniform, zipfian, latest, hotspot, sequential";
        match p.key.as_str() {
            "workload" => only(
                matches!(
                    v,
                    "site.ycsb.workloads.CoreWorkload" | "com.yahoo.ycsb.workloads.CoreWorkload"
                ),
                "dbcompare runs YCSB's core workload",
            )?,
            "recordcount" => self.record_count = count(v, 1, u64::MAX)?,
            "operationcount" => self.operation_count = count(v, 1, u64::MAX)?,
            "table" => self.table = word(v, "a table name")?,
            "fieldcount" => {
                self.field_count = count(v, 1, 1_000).map_err(|e| {
                    format!("{e}: a table of more columns is beyond some stores (PostgreSQL's limit is 1600, MySQL's row size less)")
                })? as u16;
            }
            "fieldlength" => self.field_length = count(v, 1, u64::from(u32::MAX))? as usize,
            "fieldlengthdistribution" => only(
                v == "constant",
                "every value is checked against the one written",
            )?,
            "fieldnameprefix" => self.field_name_prefix = word(v, "a prefix")?,
            "readallfields" => self.read_all_fields = boolean(v)?,
            "writeallfields" => self.write_all_fields = boolean(v)?,
            "readallfieldsbyname" => only(
                boolean(v)?,
                "every store's read names each field it reads; a read of the whole record \
                 by wildcard is not one of its calls",
            )?,
            "dataintegrity" => only(
                boolean(v)?,
                "dbcompare checks every value read, outside the timed calls, and cannot be \
                 told not to",
            )?,
            "readproportion" => self.proportions.read = fraction(v)?,
            "updateproportion" => self.proportions.update = fraction(v)?,
            "insertproportion" => self.proportions.insert = fraction(v)?,
            "scanproportion" => self.proportions.scan = fraction(v)?,
            "readmodifywriteproportion" => self.proportions.read_modify_write = fraction(v)?,
            "requestdistribution" => {
                self.distribution = match v {
                    "uniform" => Distribution::Uniform,
                    "zipfian" => Distribution::Zipfian,
                    "latest" => Distribution::Latest,
                    "sequential" => Distribution::Sequential,
                    "hotspot" => Distribution::Hotspot,
                    "exponential" => {
                        return Err(format!("exponential is not supported ({distributions})"));
                    }
                    _ => return Err(distributions.to_string()),
                }
            }
            "hotspotdatafraction" => self.hotspot_data_fraction = fraction(v)?,
            "hotspotopnfraction" => self.hotspot_opn_fraction = fraction(v)?,
            "minscanlength" => self.min_scan_length = count(v, 1, u64::from(u32::MAX))?,
            "maxscanlength" => self.max_scan_length = count(v, 1, u64::from(u32::MAX))?,
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
            "insertstart" => self.insert_start = count(v, 0, u64::MAX)?,
            "insertcount" => self.insert_count = Some(count(v, 1, u64::MAX)?),
            "zeropadding" => {
                self.zero_padding = count(v, 1, 64)
                    .map_err(|e| format!("{e}: longer keys are beyond some stores' key columns"))?
                    as usize;
            }
            key => unreachable!("{key} is in KEYS with no setter"),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
