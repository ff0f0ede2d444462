//! Numbers as every renderer writes them: sizes (`24 kB`) and latencies in microseconds
//! (`4.57`). The ground floor of the renderers: it imports none of them.

/// `bytes` the way the blog printed sizes: `18 bytes`, `24 kB`, `3.1 MB`, `1.02 GB`
/// (binary multiples, as PostgreSQL's pg_size_pretty).
pub fn human_size(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if b < KIB * KIB {
        format!("{:.0} kB", b / KIB)
    } else if b < KIB * KIB * KIB {
        format!("{:.1} MB", b / (KIB * KIB))
    } else {
        format!("{:.2} GB", b / (KIB * KIB * KIB))
    }
}

/// A latency in microseconds, with the precision that matters at its magnitude.
pub fn human_us(us: f64) -> String {
    if us < 10.0 {
        format!("{us:.2}")
    } else if us < 1000.0 {
        format!("{us:.1}")
    } else {
        format!("{us:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_the_blog() {
        assert_eq!(human_size(18), "18 bytes");
        assert_eq!(human_size(24 * 1024), "24 kB");
        assert_eq!(human_size(3_250_586), "3.1 MB");
        assert_eq!(human_size(1 << 30), "1.00 GB");
    }

    #[test]
    fn latencies_keep_three_figures() {
        assert_eq!(human_us(4.567), "4.57");
        assert_eq!(human_us(45.67), "45.7");
        assert_eq!(human_us(4567.2), "4567");
    }
}
