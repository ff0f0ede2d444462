//! MongoDB's driver suite: the nearest native operations (the ping command, find_one of
//! fixed documents, aggregate `$replaceRoot` for the echoes, raw BSON for the Raw tests).

use anyhow::{Context, Result, bail};
use futures::TryStreamExt;
use mongodb::bson::{self, Document, doc};

use super::collections::DriverDocs;
use super::{MongoStore, is_duplicate_key};
use crate::store::DriverStore;
use crate::workload::driver::{DriverOp, check_large, large_string};

/// The driver suite's collection: a small document and one with 10 kB values.
const DRIVER_COLLECTION: &str = "dbcompare_driver";

/// The date EchoMixed5 sends: this many milliseconds after the epoch, plus the iteration.
const ECHO_DATE_MILLIS: i64 = 1_700_000_000_000;

/// The pipeline PreparedQueryRowParam sends: the fixed small document replaced by the
/// iteration, an Int64. An aggregate rather than find_one with a `$literal` projection,
/// and plain values rather than `$literal`: MongoDB takes the values of a `$replaceRoot`
/// document as constants (none is a `$` string or a document), and so does jongodb, which
/// ignores find projections and copies expression operators unevaluated.
pub fn param_pipeline(i: i64) -> Vec<Document> {
    echo_pipeline_of(doc! { "v": i })
}

/// The five values EchoMixed5 sends, of mixed BSON types.
pub fn echo_values(i: i64) -> Document {
    doc! {
        "i": i,
        "s": "abc",
        "t": bson::DateTime::from_millis(ECHO_DATE_MILLIS + i),
        "f": 1.024_f64,
        "b": i % 2 == 0,
    }
}

/// The pipeline EchoMixed5 sends.
pub fn echo_pipeline(i: i64) -> Vec<Document> {
    echo_pipeline_of(echo_values(i))
}

fn echo_pipeline_of(values: Document) -> Vec<Document> {
    vec![
        doc! { "$match": { "_id": "one" } },
        doc! { "$replaceRoot": { "newRoot": values } },
    ]
}

/// Checks an EchoMixed5 answer: each value decoded with its own BSON type.
pub fn check_echo(found: &Document, i: i64) -> Result<()> {
    let echoed = (
        found.get_i64("i").ok(),
        found.get_str("s").ok(),
        found.get_datetime("t").ok().map(|t| t.timestamp_millis()),
        found.get_f64("f").ok(),
        found.get_bool("b").ok(),
    );
    let expected = (
        Some(i),
        Some("abc"),
        Some(ECHO_DATE_MILLIS + i),
        Some(1.024),
        Some(i % 2 == 0),
    );
    if echoed != expected || found.len() != 5 {
        bail!("echo {i} gave {found}");
    }
    Ok(())
}

impl DriverStore for MongoStore {
    fn driver_operation(&self, op: DriverOp) -> Option<&'static str> {
        use DriverOp::*;
        Some(match op {
            SimpleExec | PreparedExec => "ping command (no prepared statements in MongoDB)",
            SimpleQueryRow | PreparedQueryRow => "find_one of a fixed small document by _id",
            SelectLargeString | SelectPreparedLargeString => {
                "find_one of a document holding a 10 kB string"
            }
            SelectLargeBytes | SelectPreparedLargeBytes => {
                "find_one of a document holding 10 kB of binary"
            }
            PreparedQueryRowParam => {
                "aggregate: $match the fixed small document, $replaceRoot { v: <iteration> }"
            }
            EchoMixed5 => {
                "aggregate: $match, $replaceRoot with 5 values: Int64, String, DateTime, Double, \
                 Boolean"
            }
            SelectLargeRaw | SelectPreparedLargeRaw => {
                "find_one of the 10 kB binary document as raw BSON, bytes borrowed (no Document)"
            }
        })
    }

    async fn driver(&mut self, op: DriverOp, i: u64) -> Result<()> {
        use DriverOp::*;
        if self.driver_docs.is_none() {
            let docs = self.db.collection::<Document>(DRIVER_COLLECTION);
            let fixed = [
                doc! { "_id": "one", "v": 1_i64 },
                doc! {
                    "_id": "large",
                    "s": large_string(),
                    "b": bson::Binary {
                        subtype: bson::spec::BinarySubtype::Generic,
                        bytes: large_string().into_bytes(),
                    },
                },
            ];
            // Every connection of a concurrent test gets here: the first one writes them.
            for d in fixed {
                match docs.insert_one(d).await {
                    Ok(_) => {}
                    Err(e) if is_duplicate_key(&e) => {}
                    Err(e) => return Err(e).context("writing the driver suite's documents"),
                }
            }
            self.driver_docs = Some(DriverDocs {
                raw: docs.clone_with_type(),
                docs,
            });
        }
        let DriverDocs { docs, raw } = self.driver_docs.as_ref().expect("written above");
        match op {
            SimpleExec | PreparedExec => {
                self.db.run_command(doc! { "ping": 1 }).await?;
            }
            SimpleQueryRow | PreparedQueryRow => {
                let found = docs
                    .find_one(doc! { "_id": "one" })
                    .await?
                    .context("no document")?;
                if found.get_i64("v") != Ok(1) {
                    bail!("the fixed document is {found}");
                }
            }
            SelectLargeString | SelectPreparedLargeString => {
                let found = docs
                    .find_one(doc! { "_id": "large" })
                    .await?
                    .context("no document")?;
                check_large(found.get_str("s")?.as_bytes())?;
            }
            SelectLargeBytes | SelectPreparedLargeBytes => {
                let found = docs
                    .find_one(doc! { "_id": "large" })
                    .await?
                    .context("no document")?;
                check_large(found.get_binary_generic("b")?)?;
            }
            PreparedQueryRowParam => {
                let i = i64::try_from(i)?;
                let mut cursor = docs.aggregate(param_pipeline(i)).await?;
                let found = cursor.try_next().await?.context("no document")?;
                if found.get_i64("v") != Ok(i) || found.len() != 1 {
                    bail!("echo {i} gave {found}");
                }
            }
            EchoMixed5 => {
                let i = i64::try_from(i)?;
                let mut cursor = docs.aggregate(echo_pipeline(i)).await?;
                let found = cursor.try_next().await?.context("no document")?;
                check_echo(&found, i)?;
            }
            SelectLargeRaw | SelectPreparedLargeRaw => {
                let found = raw
                    .find_one(doc! { "_id": "large" })
                    .await?
                    .context("no document")?;
                check_large(found.get_binary("b")?.bytes)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_are_checked_value_and_type() {
        assert_eq!(
            param_pipeline(7),
            [
                doc! { "$match": { "_id": "one" } },
                doc! { "$replaceRoot": { "newRoot": { "v": 7_i64 } } }
            ]
        );
        // What a server answers for echo_pipeline(i): the values themselves.
        let answer = echo_values;
        assert_eq!(
            echo_pipeline(3)[1],
            doc! { "$replaceRoot": { "newRoot": echo_values(3) } }
        );
        assert!(check_echo(&answer(5), 5).is_ok());
        assert!(check_echo(&answer(4), 4).is_ok());
        assert!(
            check_echo(&answer(5), 6).is_err(),
            "another iteration's answer"
        );
        let mut int32 = answer(5);
        int32.insert("i", 5_i32);
        assert!(check_echo(&int32, 5).is_err(), "Int32 is not Int64");
        let mut text_date = answer(5);
        text_date.insert("t", "2023-11-14");
        assert!(check_echo(&text_date, 5).is_err(), "a string is not a date");
        let mut missing = answer(5);
        missing.remove("b");
        assert!(check_echo(&missing, 5).is_err());
        let mut more = answer(5);
        more.insert("_id", "one");
        assert!(
            check_echo(&more, 5).is_err(),
            "the stored document came back too"
        );
    }
}
