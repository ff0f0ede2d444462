//! The values of YCSB's records: derived from key, field and version, so that every value
//! read can be checked against the one written without keeping it.

const VALUE_ALPHABET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Characters at the start of a value that spell its version (six bits each: 24 bits).
pub const VERSION_CHARS: usize = 4;

/// The value of `field` of record `key` at `version` (0: as loaded; each update writes the
/// next): `len` characters of `[A-Za-z0-9_-]`, the version spelled in the first four (when
/// there is room), the rest derived from key, field and version, so that any value read
/// can be checked without keeping what was written.
pub fn value(key: &str, field: u16, version: u32, len: usize) -> String {
    let mut out = String::with_capacity(len);
    write_value(key, field, version, len, &mut out);
    out
}

/// [`value`], appended to `out` (no allocation when it has room).
pub fn write_value(key: &str, field: u16, version: u32, len: usize, out: &mut String) {
    let spelled = len.min(VERSION_CHARS);
    for i in (0..spelled).rev() {
        let digit = (version >> (6 * i)) & 63;
        out.push(char::from(VALUE_ALPHABET[digit as usize]));
    }
    let mut state = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    }) ^ (u64::from(field) << 48)
        ^ (u64::from(version) << 16);
    let mut left = len - spelled;
    while left > 0 {
        // SplitMix64: one step gives ten characters of six bits each.
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        for _ in 0..left.min(10) {
            out.push(char::from(VALUE_ALPHABET[(z & 63) as usize]));
            z >>= 6;
        }
        left = left.saturating_sub(10);
    }
}

/// Whether `found` is the value of `field` of `key` at `version`.
pub fn is_value(found: &str, key: &str, field: u16, version: u32, len: usize) -> bool {
    found.len() == len && found == value(key, field, version, len)
}

/// The version of `field` of `key` that `found` is, if it is one in `lowest..=highest`.
pub fn version_in(
    found: &str,
    key: &str,
    field: u16,
    len: usize,
    (lowest, highest): (u32, u32),
) -> Option<u32> {
    if found.len() != len {
        return None;
    }
    if len >= VERSION_CHARS {
        let mut version = 0_u32;
        for b in found.bytes().take(VERSION_CHARS) {
            let digit = VALUE_ALPHABET.iter().position(|&a| a == b)? as u32;
            version = (version << 6) | digit;
        }
        return ((lowest..=highest).contains(&version)
            && is_value(found, key, field, version, len))
        .then_some(version);
    }
    // Too short to spell its version: try each.
    (lowest..=highest).find(|&v| is_value(found, key, field, v, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_derived_and_differ_by_key_field_and_version() {
        let v = value("user1", 3, 0, 100);
        assert_eq!(v.len(), 100);
        assert!(
            v.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
        assert!(is_value(&v, "user1", 3, 0, 100));
        assert!(!is_value(&v[..99], "user1", 3, 0, 100));
        // Every character of the alphabet comes up.
        let long = value("user1", 3, 0, 10_000);
        assert_eq!(
            long.bytes().collect::<std::collections::HashSet<_>>().len(),
            64
        );
        assert_eq!(v, value("user1", 3, 0, 100));
        assert_ne!(v, value("user1", 3, 1, 100));
        assert_ne!(v, value("user1", 4, 0, 100));
        assert_ne!(v, value("user2", 3, 0, 100));
    }

    #[test]
    fn a_value_tells_its_version_within_a_window() {
        let v = value("user1", 3, 70_000, 100);
        assert_eq!(version_in(&v, "user1", 3, 100, (0, 70_000)), Some(70_000));
        assert_eq!(version_in(&v, "user1", 3, 100, (70_001, 70_002)), None);
        assert_eq!(version_in(&v, "user1", 3, 100, (0, 69_999)), None);
        // Another record's, another field's, a corrupted one, a short one.
        assert_eq!(version_in(&v, "user2", 3, 100, (0, 70_000)), None);
        assert_eq!(version_in(&v, "user1", 4, 100, (0, 70_000)), None);
        let mut bad = v.clone().into_bytes();
        bad[50] = if bad[50] == b'A' { b'B' } else { b'A' };
        let bad = String::from_utf8(bad).unwrap();
        assert_eq!(version_in(&bad, "user1", 3, 100, (0, 70_000)), None);
        assert_eq!(version_in(&v[..99], "user1", 3, 100, (0, 70_000)), None);
        // Values too short to spell their version are still told apart.
        let short = value("user1", 3, 2, 2);
        assert_eq!(
            version_in(&short, "user1", 3, 2, (0, 5)).map(|_| ()),
            Some(())
        );
        assert_eq!(value("user1", 3, 0, 0), "");
    }
}
