//! Numbers and text as the charts write them: counts (`2.5k`), figures to a few
//! significant digits, thousands grouped, a size axis' unit, durations, file-safe names,
//! labels wrapped to fit, facts packed into lines, and how wide a text is estimated.

/// A count with 3 significant digits and k/M/G: `950`, `2.5k`, `120k`, `1.23M`.
pub(super) fn human_count(v: f64) -> String {
    count_with(v, 3)
}

/// A count with `digits` significant digits (or more, for hundreds) and k/M/G.
pub(super) fn count_with(v: f64, digits: u32) -> String {
    let a = v.abs();
    let (div, suffix) = if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    format!("{}{suffix}", significant(v / div, digits))
}

/// A number with 3 significant digits, trailing zeros dropped: `120`, `2.5`, `0.25`.
pub(super) fn short(v: f64) -> String {
    significant(v, 3)
}

/// A number with `digits` significant digits (all of its integer digits), trailing zeros
/// dropped.
pub(super) fn significant(v: f64, digits: u32) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let magnitude = v.abs().log10().floor() as i64;
    let decimals = (i64::from(digits) - 1 - magnitude).clamp(0, 9) as usize;
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A number with thousands separated, 3 significant digits below 1000: `12,500`, `2.5`.
pub(super) fn grouped(v: f64) -> String {
    if !v.is_finite() || v.abs() < 1000.0 {
        return short(v);
    }
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 { format!("-{out}") } else { out }
}

/// The unit a size axis reads in, from its largest value: bytes, kB, MB or GB (binary
/// multiples, as [`crate::report::format::human_size`]).
pub(super) fn size_unit(max_bytes: u64) -> (f64, &'static str) {
    const KIB: f64 = 1024.0;
    let b = max_bytes as f64;
    if b < KIB {
        (1.0, "bytes")
    } else if b < KIB * KIB {
        (KIB, "kB")
    } else if b < KIB * KIB * KIB {
        (KIB * KIB, "MB")
    } else {
        (KIB * KIB * KIB, "GB")
    }
}

/// A duration given in ms, in ms below a second, else in s: `0.977 ms`, `31.3 ms`, `1 s`.
pub(super) fn duration_label(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{} ms", short(ms))
    } else {
        format!("{} s", short(ms / 1000.0))
    }
}

/// A name made file-safe: lowercase `[a-z0-9]` words joined by `-`.
pub(super) fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-');
    if out.is_empty() {
        "x".to_string()
    } else {
        out.to_string()
    }
}

/// Text as it can go into the SVG: control characters (invalid in XML) made spaces.
/// plotters escapes `<`, `&` and quotes itself.
pub(super) fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string()
}

/// Estimated width in pixels of `text` at plotters font `size`: a little wider than
/// common sans-serif fonts draw it, so what is laid out by it does not overlap.
pub(super) fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size / 1.24 * 0.6
}

/// A label in lines of at most `max` characters, broken at spaces, then inside long words
/// (before a capital after a lower-case letter, after `-`); at most `lines` lines, the
/// last cut with `…` when it does not fit.
pub(super) fn wrap_label(label: &str, max: usize, lines: usize) -> Vec<String> {
    let (max, lines) = (max.max(3), lines.max(1));
    // (piece, whether it continues the word before it)
    let mut pieces: Vec<(String, bool)> = Vec::new();
    for word in label.split_whitespace() {
        let mut first = true;
        for piece in split_word(word, max) {
            pieces.push((piece, !first));
            first = false;
        }
    }
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for (piece, inside_word) in pieces {
        let joined = if current.is_empty() {
            piece.clone()
        } else if inside_word {
            format!("{current}{piece}")
        } else {
            format!("{current} {piece}")
        };
        if joined.chars().count() <= max || current.is_empty() {
            current = joined;
        } else {
            out.push(std::mem::take(&mut current));
            current = piece;
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    if out.len() > lines {
        let rest = out.split_off(lines - 1).join(" ");
        out.push(rest);
    }
    out.into_iter()
        .map(|line| {
            if line.chars().count() > max {
                let cut: String = line.chars().take(max - 1).collect();
                format!("{}…", cut.trim_end())
            } else {
                line
            }
        })
        .collect()
}

/// A word longer than `max` in pieces: before a capital that follows a lower-case letter,
/// and after a `-`.
pub(super) fn split_word(word: &str, max: usize) -> Vec<String> {
    if word.chars().count() <= max {
        return vec![word.to_string()];
    }
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut previous: Option<char> = None;
    for c in word.chars() {
        let boundary = previous.is_some_and(|p| (p.is_lowercase() && c.is_uppercase()) || p == '-');
        if boundary && !current.is_empty() {
            pieces.push(std::mem::take(&mut current));
        }
        current.push(c);
        previous = Some(c);
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

/// `items` packed into lines of at most `max` characters, joined by ` · ` (a longer item
/// gets a line of its own).
pub(super) fn pack(items: &[String], max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for item in items {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 3 + item.chars().count() <= max => {
                line.push_str(" · ");
                line.push_str(item);
            }
            _ => lines.push(item.clone()),
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_read_short() {
        assert_eq!(human_count(950.0), "950");
        assert_eq!(human_count(2500.0), "2.5k");
        assert_eq!(human_count(120_000.0), "120k");
        assert_eq!(human_count(1_230_000.0), "1.23M");
        assert_eq!(human_count(0.0), "0");
        assert_eq!(human_count(0.25), "0.25");
        assert_eq!(count_with(2440.0, 2), "2.4k");
        assert_eq!(count_with(111_192.0, 2), "111k");
        assert_eq!(short(7.5), "7.5");
        assert_eq!(grouped(12_500.0), "12,500");
        assert_eq!(grouped(1_000_000.0), "1,000,000");
        assert_eq!(grouped(2.5), "2.5");
        assert_eq!(size_unit(18), (1.0, "bytes"));
        assert_eq!(size_unit(24 * 1024), (1024.0, "kB"));
        assert_eq!(size_unit(3_250_586).1, "MB");
        assert_eq!(size_unit(5 << 30).1, "GB");
    }
}
