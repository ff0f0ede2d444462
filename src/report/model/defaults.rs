//! What serde fills in for a field an older `run.json` lacks, and the tests that leave a
//! field out when it holds nothing.

/// `true`: what an older file meant by leaving the field out.
pub(super) fn yes() -> bool {
    true
}

/// One: what an older file meant by leaving the field out.
pub(super) fn one() -> u32 {
    1
}

/// Concurrency 1 alone: what an older file meant by leaving the field out.
pub(super) fn one_level() -> Vec<u32> {
    vec![1]
}

/// Whether `n` is zero, so that the field is left out.
pub(super) fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// Whether `n` is zero, so that the field is left out.
pub(super) fn is_zero(n: &u64) -> bool {
    *n == 0
}
