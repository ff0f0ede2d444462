//! Latency histograms as `run.json` holds them: their shape (nanoseconds, 3 significant
//! digits, up to an hour), their encoding, and the percentiles read from one.

use hdrhistogram::Histogram;

use super::phase::Latency;

/// Highest latency a histogram holds exactly: one hour, in nanoseconds. Longer ones are
/// clamped to it (and still counted).
pub const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

/// An empty latency histogram in nanoseconds, 3 significant digits, up to
/// [`MAX_LATENCY_NS`].
pub fn empty_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3).expect("static histogram bounds are valid")
}

/// A histogram as base64 of its HdrHistogram V2 encoding, as `run.json` holds it (what
/// other HdrHistogram tools read).
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    use base64::Engine;
    use hdrhistogram::serialization::Serializer;
    let mut bytes = Vec::new();
    hdrhistogram::serialization::V2Serializer::new()
        .serialize(h, &mut bytes)
        .expect("serializing into memory does not fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The inverse of [`encode_histogram`].
pub fn decode_histogram(text: &str) -> anyhow::Result<Histogram<u64>> {
    use anyhow::Context;
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .context("histogram is not base64")?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| anyhow::anyhow!("histogram does not decode: {e:?}"))
}

/// Latency percentiles of a histogram in nanoseconds, in microseconds.
pub fn latency(h: &Histogram<u64>) -> Latency {
    if h.is_empty() {
        return Latency::default();
    }
    let us = |ns: u64| ns as f64 / 1000.0;
    Latency {
        min: us(h.min()),
        mean: h.mean() / 1000.0,
        p50: us(h.value_at_quantile(0.50)),
        p90: us(h.value_at_quantile(0.90)),
        p95: us(h.value_at_quantile(0.95)),
        p99: us(h.value_at_quantile(0.99)),
        p999: us(h.value_at_quantile(0.999)),
        p9999: us(h.value_at_quantile(0.9999)),
        max: us(h.max()),
    }
}
