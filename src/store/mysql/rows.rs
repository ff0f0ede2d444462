//! Results read through the driver's result stream (`exec_iter`, `query_iter`) rather than
//! its convenience wrappers: `exec_first`, `query_first`, `exec_drop` and `query_drop` each
//! box one more future around the stream (one allocation of 700 to 800 bytes per query,
//! seen with `--alloc-sites`), and the `*_first` ones panic on a row that does not convert,
//! where these return the error.

use anyhow::{Result, anyhow};
use mysql_async::prelude::{FromRow, Protocol, Queryable, StatementLike};
use mysql_async::{Params, QueryResult, Row};

/// The first row of a result as `T`; the rest is read and dropped.
async fn first<T: FromRow, P: Protocol>(mut result: QueryResult<'_, '_, P>) -> Result<Option<T>> {
    let row = result.next().await?;
    result.drop_result().await?;
    row.map(|row| mysql_async::from_row_opt(row).map_err(|e| anyhow!("decoding a row: {e}")))
        .transpose()
}

/// A prepared statement's first row.
pub(super) async fn exec_first<T: FromRow>(
    conn: &mut impl Queryable,
    statement: impl StatementLike,
    params: impl Into<Params>,
) -> Result<Option<T>> {
    first(conn.exec_iter(statement, params).await?).await
}

/// A prepared statement's rows, each converted by `convert` as it arrives, into a vector made
/// for `expected` of them: the driver's `exec` holds every row before the first is
/// converted, so a large result needed its memory twice (a Large Result Set's 33,000 rows:
/// fresh pages that a VM's first touch makes dear). The first row that does not convert is
/// the error; the rest of the result is still read.
pub(super) async fn exec_map<T>(
    conn: &mut impl Queryable,
    statement: impl StatementLike,
    params: impl Into<Params>,
    expected: usize,
    mut convert: impl FnMut(Row) -> Result<T>,
) -> Result<Vec<T>> {
    let mut result = conn.exec_iter(statement, params).await?;
    let mut rows = Vec::with_capacity(expected);
    let mut bad = None;
    result
        .for_each(|row| {
            if bad.is_none() {
                match convert(row) {
                    Ok(r) => rows.push(r),
                    Err(e) => bad = Some(e),
                }
            }
        })
        .await?;
    result.drop_result().await?;
    bad.map_or(Ok(rows), Err)
}

/// A prepared statement, its result dropped.
pub(super) async fn exec_drop(
    conn: &mut impl Queryable,
    statement: impl StatementLike,
    params: impl Into<Params>,
) -> Result<()> {
    Ok(conn
        .exec_iter(statement, params)
        .await?
        .drop_result()
        .await?)
}

/// A text query's first row.
pub(super) async fn query_first<T: FromRow>(
    conn: &mut impl Queryable,
    sql: &str,
) -> Result<Option<T>> {
    first(conn.query_iter(sql).await?).await
}

/// A text query, its result dropped.
pub(super) async fn query_drop(conn: &mut impl Queryable, sql: &str) -> Result<()> {
    Ok(conn.query_iter(sql).await?.drop_result().await?)
}
