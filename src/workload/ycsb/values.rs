//! The values of YCSB's records: derived from key, field and version, so that every value
//! read can be checked against the one written without keeping it.

const VALUE_ALPHABET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Each byte's place in [`VALUE_ALPHABET`], if it is one of its characters.
const DIGIT_OF: [Option<u32>; 256] = {
    let mut table = [None; 256];
    let mut i = 0;
    while i < VALUE_ALPHABET.len() {
        table[VALUE_ALPHABET[i] as usize] = Some(i as u32);
        i += 1;
    }
    table
};

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
    let (spelled, n) = spelled(version, len);
    out.push_str(ascii(&spelled[..n]));
    let mut left = len - n;
    for chunk in chunks(key, field, version) {
        if left == 0 {
            break;
        }
        let take = left.min(CHUNK);
        out.push_str(ascii(&chunk[..take]));
        left -= take;
    }
}

/// Whether `found` is the value of `field` of `key` at `version`: compared as it is
/// derived, ten characters at a time, without making the value.
pub fn is_value(found: &str, key: &str, field: u16, version: u32, len: usize) -> bool {
    let found = found.as_bytes();
    if found.len() != len {
        return false;
    }
    let (spelled, n) = spelled(version, len);
    if found[..n] != spelled[..n] {
        return false;
    }
    // Whole chunks compared as arrays (a few loads, where a slice's compare is a call).
    let (whole, tail) = found[n..].as_chunks::<CHUNK>();
    let mut made = chunks(key, field, version);
    whole
        .iter()
        .zip(&mut made)
        .all(|(found, made)| found == &made)
        && made.next().is_some_and(|made| tail == &made[..tail.len()])
}

fn ascii(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).expect("the alphabet is ASCII")
}

/// The characters one step of the generator gives: six bits each of 64.
const CHUNK: usize = 10;

/// The version as the first characters of a value (as many as `len` has room for, up to
/// [`VERSION_CHARS`]), most significant first.
fn spelled(version: u32, len: usize) -> ([u8; VERSION_CHARS], usize) {
    let n = len.min(VERSION_CHARS);
    let mut out = [0; VERSION_CHARS];
    for (i, c) in out[..n].iter_mut().enumerate() {
        let digit = (version >> (6 * (n - 1 - i))) & 63;
        *c = VALUE_ALPHABET[digit as usize];
    }
    (out, n)
}

/// The characters after the spelled version, [`CHUNK`] at a time: SplitMix64 seeded by
/// key (FNV-1a), field and version.
fn chunks(key: &str, field: u16, version: u32) -> impl Iterator<Item = [u8; CHUNK]> {
    let mut state = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    }) ^ (u64::from(field) << 48)
        ^ (u64::from(version) << 16);
    std::iter::repeat_with(move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        let mut chunk = [0; CHUNK];
        for c in &mut chunk {
            *c = VALUE_ALPHABET[(z & 63) as usize];
            z >>= 6;
        }
        chunk
    })
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
            let digit = DIGIT_OF[usize::from(b)]?;
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

    proptest::proptest! {
        /// Compared in place, a value is what it is made as: the value itself matches,
        /// one character changed or one missing does not.
        #[test]
        fn is_value_agrees_with_the_value_made(
            key in "[a-z0-9]{0,30}",
            field in 0_u16..1000,
            version in 0_u32..(1 << 24),
            len in 0_usize..300,
            at in 0_usize..300,
        ) {
            let v = value(&key, field, version, len);
            proptest::prop_assert_eq!(v.len(), len);
            proptest::prop_assert!(is_value(&v, &key, field, version, len));
            if len > 0 {
                let mut bad = v.clone().into_bytes();
                let at = at % len;
                bad[at] = if bad[at] == b'A' { b'B' } else { b'A' };
                let bad = String::from_utf8(bad).unwrap();
                proptest::prop_assert!(!is_value(&bad, &key, field, version, len));
                proptest::prop_assert!(!is_value(&v[..len - 1], &key, field, version, len));
            }
        }
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
