//! The collections a store opens for a suite on first use: the driver suite's fixed
//! documents and the YCSB table's collection with its fields.

use anyhow::{Context, Result};
use mongodb::Collection;
use mongodb::bson::{Document, RawDocumentBuf, doc};

use crate::store::{YcsbFields, ycsb_fields};

/// The driver suite's collection, decoded as documents or left as raw BSON.
pub(super) struct DriverDocs {
    pub(super) docs: Collection<Document>,
    pub(super) raw: Collection<RawDocumentBuf>,
}

/// The YCSB table's collection and fields.
pub(super) struct Table {
    pub(super) collection: Collection<Document>,
    pub(super) fields: Vec<String>,
}

impl Table {
    /// The projection of a read or scan: every field, or the one asked for.
    pub(super) fn projection(&self, field: Option<u16>) -> Document {
        match field {
            Some(f) => doc! { &self.fields[usize::from(f)]: 1 },
            None => self.fields.iter().map(|f| (f.clone(), 1.into())).collect(),
        }
    }

    /// A document's fields: every one, or the one asked for.
    pub(super) fn fields_of(&self, found: &Document, field: Option<u16>) -> Result<YcsbFields> {
        ycsb_fields(self.fields.len(), field, |_, i| -> Result<String> {
            let name = &self.fields[i];
            Ok(found
                .get_str(name)
                .with_context(|| format!("{name} is not a string in {found}"))?
                .to_string())
        })
    }
}
