//! The driver suite's prepared statements, which a store keeps once its connection has
//! prepared them.

use mysql_async::Statement;

/// The driver suite's statements, prepared on first use.
pub(super) struct DriverStatements {
    pub(super) exec: Statement,
    pub(super) one: Statement,
    pub(super) param: Statement,
    pub(super) echo: Statement,
    pub(super) large_text: Statement,
    pub(super) large_bytes: Statement,
}
