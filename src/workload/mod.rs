//! The vocabulary every store and suite shares, below both: what a suite asks of a store
//! and what a store must answer. The suites keep their plans and runners; the stores import
//! this module, never the suites.
//!
//! - [`record`]: the classic suite's record, its sizes and its seeded generator.
//! - [`driver`]: the driver suite's operations and tests, and its large values.
//! - [`pool`]: the pool suite's table, rows, tests and sizes, and the one encoding of a row
//!   for the stores without typed columns.
//! - [`ycsb`]: YCSB's core workloads: their files, keys, generators, operation sequences and
//!   values.
//! - [`share`]: one load client's share of a workload run by several.
//! - [`levels`]: a concurrency level and a suite's repetitions.

pub mod driver;
pub mod levels;
pub mod pool;
pub mod record;
pub mod share;
pub mod ycsb;
