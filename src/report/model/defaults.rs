//! What serde fills in for a field an older `run.json` lacks, and the tests that leave a
//! field out when it holds nothing.

use std::num::NonZeroU32;

use crate::workload::levels::Concurrency;

/// `true`: what an older file meant by leaving the field out.
pub(super) fn yes() -> bool {
    true
}

/// One run: what an older file meant by leaving the field out.
pub(super) fn one() -> NonZeroU32 {
    NonZeroU32::MIN
}

/// Concurrency 1: what an older file meant by leaving the field out.
pub(super) fn one_task() -> Concurrency {
    Concurrency::ONE
}

/// Concurrency 1 alone: what an older file meant by leaving the field out.
pub(super) fn one_level() -> Vec<Concurrency> {
    vec![Concurrency::ONE]
}

/// Whether `n` is zero, so that the field is left out.
pub(super) fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// Whether `n` is zero, so that the field is left out.
pub(super) fn is_zero(n: &u64) -> bool {
    *n == 0
}
