//! The driver suite's vocabulary, after the Go SQL driver benchmark (seeds 000 and 001): the
//! twelve operations a store runs ([`DriverOp`]), the seed's 22 tests built from them
//! ([`DriverTest`]), and the large value the Select*Large* operations read back.

use anyhow::{Result, bail};

use crate::workload::levels::Concurrency;

/// Length of the large values of the Select*Large* tests.
pub const LARGE_LEN: usize = 10_000;

/// One operation of the driver suite: what a store runs once per iteration, on one
/// connection. Stores say per operation what they run, or that they have none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DriverOp {
    SimpleExec,
    PreparedExec,
    SimpleQueryRow,
    PreparedQueryRow,
    PreparedQueryRowParam,
    EchoMixed5,
    SelectLargeString,
    SelectPreparedLargeString,
    SelectLargeBytes,
    SelectPreparedLargeBytes,
    SelectLargeRaw,
    SelectPreparedLargeRaw,
}

impl DriverOp {
    /// Every operation, in the seed's order.
    pub const ALL: [DriverOp; 12] = [
        DriverOp::SimpleExec,
        DriverOp::PreparedExec,
        DriverOp::SimpleQueryRow,
        DriverOp::PreparedQueryRow,
        DriverOp::PreparedQueryRowParam,
        DriverOp::EchoMixed5,
        DriverOp::SelectLargeString,
        DriverOp::SelectPreparedLargeString,
        DriverOp::SelectLargeBytes,
        DriverOp::SelectPreparedLargeBytes,
        DriverOp::SelectLargeRaw,
        DriverOp::SelectPreparedLargeRaw,
    ];

    /// The seed's name of the test that runs this operation on one connection.
    pub fn name(self) -> String {
        format!("{self:?}")
    }

    /// Whether the operation reads a large value.
    pub fn is_large(self) -> bool {
        use DriverOp::*;
        matches!(
            self,
            SelectLargeString
                | SelectPreparedLargeString
                | SelectLargeBytes
                | SelectPreparedLargeBytes
                | SelectLargeRaw
                | SelectPreparedLargeRaw
        )
    }
}

/// One test of the suite: an operation on one connection, or PreparedExec /
/// PreparedQueryRow on N connections at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DriverTest {
    /// The operation on one connection (the test of the same name).
    Single(DriverOp),
    /// PreparedExec on N connections at once.
    PreparedExecConcurrent(u32),
    /// PreparedQueryRow on N connections at once.
    PreparedQueryConcurrent(u32),
}

impl From<DriverOp> for DriverTest {
    fn from(op: DriverOp) -> Self {
        DriverTest::Single(op)
    }
}

impl DriverTest {
    /// Every test, in the seed's order.
    pub fn all() -> Vec<DriverTest> {
        let mut tests: Vec<DriverTest> = DriverOp::ALL.map(DriverTest::Single).to_vec();
        tests.extend([1, 2, 4, 8, 16].map(DriverTest::PreparedExecConcurrent));
        tests.extend([1, 2, 4, 8, 16].map(DriverTest::PreparedQueryConcurrent));
        tests
    }

    /// The seed's name (`PreparedQueryConcurrent8`).
    pub fn name(self) -> String {
        match self {
            DriverTest::Single(op) => op.name(),
            DriverTest::PreparedExecConcurrent(n) => format!("PreparedExecConcurrent{n}"),
            DriverTest::PreparedQueryConcurrent(n) => format!("PreparedQueryConcurrent{n}"),
        }
    }

    /// The seed's iteration count, before `--scale`.
    pub fn seed_iterations(self) -> u64 {
        match self {
            DriverTest::Single(op) if op.is_large() => 50_000,
            DriverTest::Single(_) => 250_000,
            DriverTest::PreparedExecConcurrent(_) | DriverTest::PreparedQueryConcurrent(_) => {
                500_000
            }
        }
    }

    /// Connections working at once.
    pub fn concurrency(self) -> Concurrency {
        match self {
            DriverTest::Single(_) => Concurrency::ONE,
            DriverTest::PreparedExecConcurrent(n) | DriverTest::PreparedQueryConcurrent(n) => {
                Concurrency::new(n).unwrap_or(Concurrency::ONE)
            }
        }
    }

    /// The single-connection operation each connection of the test runs.
    pub fn operation(self) -> DriverOp {
        match self {
            DriverTest::Single(op) => op,
            DriverTest::PreparedExecConcurrent(_) => DriverOp::PreparedExec,
            DriverTest::PreparedQueryConcurrent(_) => DriverOp::PreparedQueryRow,
        }
    }
}

/// The expected large string (the stores build it server-side as `LARGE_LEN` × 'A').
pub fn large_string() -> String {
    "A".repeat(LARGE_LEN)
}

/// Checks a large value an operation returned.
pub fn check_large(value: &[u8]) -> Result<()> {
    if value.len() != LARGE_LEN || value.iter().any(|&b| b != b'A') {
        bail!(
            "expected {LARGE_LEN} bytes of 'A', got {} bytes",
            value.len()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_values_are_checked() {
        assert!(check_large(large_string().as_bytes()).is_ok());
        assert!(check_large(b"AAA").is_err());
        let mut wrong = large_string().into_bytes();
        wrong[5000] = b'B';
        assert!(check_large(&wrong).is_err());
    }
}
