//! A row of MySQL's binary protocol (what a prepared statement returns), read column by
//! column, each checked against the type its definition gives: a column of another type
//! or NULL is an error, never a value read the wrong way.

use anyhow::{Context, Result, bail};
use mysql_common::constants::ColumnType;
use mysql_common::io::ParseBuf;
use mysql_common::packets::Column;

/// The columns of a row in the binary protocol, read in order.
pub struct BinaryRow<'a> {
    buf: ParseBuf<'a>,
    nulls: &'a [u8],
    columns: &'a [Column],
    at: usize,
}

impl<'a> BinaryRow<'a> {
    /// The row in `body`, of `columns`.
    pub fn new(body: &'a [u8], columns: &'a [Column]) -> Result<BinaryRow<'a>> {
        let mut buf = ParseBuf(body);
        if buf.checked_eat(1) != Some(&[0x00][..]) {
            bail!("a malformed binary row");
        }
        // The NULL bitmap starts at its third bit.
        let nulls = buf
            .checked_eat((columns.len() + 7 + 2) / 8)
            .context("a malformed binary row")?;
        Ok(BinaryRow {
            buf,
            nulls,
            columns,
            at: 0,
        })
    }

    /// The next column's type, and whether it is NULL; an error past the last.
    fn next_column(&mut self, name: &str) -> Result<(ColumnType, bool)> {
        let column = self
            .columns
            .get(self.at)
            .with_context(|| format!("{name}: the row has {} columns", self.columns.len()))?;
        let bit = self.at + 2;
        let null = self.nulls[bit / 8] & (1 << (bit % 8)) != 0;
        self.at += 1;
        Ok((column.column_type(), null))
    }

    /// The next column, a BIGINT.
    pub fn int(&mut self, name: &str) -> Result<i64> {
        match self.next_column(name)? {
            (_, true) => bail!("{name} is NULL"),
            (ColumnType::MYSQL_TYPE_LONGLONG, false) => self
                .buf
                .checked_eat_i64_le()
                .with_context(|| format!("{name} is cut short")),
            (other, false) => bail!("{name} is of type {other:?}, not BIGINT"),
        }
    }

    /// The next column, a string of any kind (CHAR, VARCHAR, TEXT, JSON).
    pub fn text(&mut self, name: &str) -> Result<&'a str> {
        let bytes = self.bytes(name)?;
        std::str::from_utf8(bytes).with_context(|| format!("{name} is not UTF-8"))
    }

    /// The next column's bytes, a string of any kind (CHAR, VARCHAR, TEXT, JSON), for a
    /// decoder that checks its UTF-8 itself.
    pub fn bytes(&mut self, name: &str) -> Result<&'a [u8]> {
        use ColumnType::{
            MYSQL_TYPE_BLOB, MYSQL_TYPE_JSON, MYSQL_TYPE_LONG_BLOB, MYSQL_TYPE_MEDIUM_BLOB,
            MYSQL_TYPE_STRING, MYSQL_TYPE_TINY_BLOB, MYSQL_TYPE_VAR_STRING, MYSQL_TYPE_VARCHAR,
        };
        match self.next_column(name)? {
            (_, true) => bail!("{name} is NULL"),
            (
                MYSQL_TYPE_VARCHAR
                | MYSQL_TYPE_VAR_STRING
                | MYSQL_TYPE_STRING
                | MYSQL_TYPE_BLOB
                | MYSQL_TYPE_TINY_BLOB
                | MYSQL_TYPE_MEDIUM_BLOB
                | MYSQL_TYPE_LONG_BLOB
                | MYSQL_TYPE_JSON,
                false,
            ) => self
                .buf
                .checked_eat_lenenc_str()
                .with_context(|| format!("{name} is cut short")),
            (other, false) => bail!("{name} is of type {other:?}, not a string"),
        }
    }

    /// The next column, a DATETIME.
    pub fn datetime(&mut self, name: &str) -> Result<chrono::NaiveDateTime> {
        match self.next_column(name)? {
            (_, true) => bail!("{name} is NULL"),
            (ColumnType::MYSQL_TYPE_DATETIME | ColumnType::MYSQL_TYPE_TIMESTAMP, false) => {
                let raw = self
                    .buf
                    .checked_eat_u8_str()
                    .with_context(|| format!("{name} is cut short"))?;
                datetime(raw).with_context(|| format!("{name} is not a date and time: {raw:?}"))
            }
            (other, false) => bail!("{name} is of type {other:?}, not DATETIME"),
        }
    }

    /// An error unless every column was read, and nothing is left after the last.
    pub fn end(&self) -> Result<()> {
        if self.at != self.columns.len() || !self.buf.is_empty() {
            bail!("a row of {} columns, {} read", self.columns.len(), self.at);
        }
        Ok(())
    }
}

/// A binary DATETIME: year, month, day, then hours, minutes and seconds, then
/// microseconds, each part there when the length says so (0, 4, 7 or 11 bytes).
fn datetime(raw: &[u8]) -> Option<chrono::NaiveDateTime> {
    let mut parts = [0u32; 7];
    if !matches!(raw.len(), 0 | 4 | 7 | 11) {
        return None;
    }
    if raw.len() >= 4 {
        parts[0] = u32::from(u16::from_le_bytes([raw[0], raw[1]]));
        parts[1] = u32::from(raw[2]);
        parts[2] = u32::from(raw[3]);
    }
    if raw.len() >= 7 {
        parts[3..6].copy_from_slice(&[u32::from(raw[4]), u32::from(raw[5]), u32::from(raw[6])]);
    }
    if raw.len() == 11 {
        parts[6] = u32::from_le_bytes([raw[7], raw[8], raw[9], raw[10]]);
    }
    let [y, mo, d, h, mi, s, us] = parts;
    chrono::NaiveDate::from_ymd_opt(y as i32, mo, d)?.and_hms_micro_opt(h, mi, s, us)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_times_of_every_length_are_read() {
        let d = |y, mo, d, h, mi, s, us| {
            chrono::NaiveDate::from_ymd_opt(y, mo, d)
                .unwrap()
                .and_hms_micro_opt(h, mi, s, us)
        };
        assert_eq!(datetime(&[0xE8, 0x07, 12, 3]), d(2024, 12, 3, 0, 0, 0, 0));
        assert_eq!(
            datetime(&[0xE8, 0x07, 12, 3, 20, 15, 59]),
            d(2024, 12, 3, 20, 15, 59, 0)
        );
        let mut raw = vec![0xE8, 0x07, 12, 3, 20, 15, 59];
        raw.extend_from_slice(&123_000u32.to_le_bytes());
        assert_eq!(datetime(&raw), d(2024, 12, 3, 20, 15, 59, 123_000));
        // MySQL's zero date has no calendar day; other lengths are malformed.
        assert_eq!(datetime(&[]), None);
        assert_eq!(datetime(&[0xE8, 0x07, 13, 3]), None);
        assert_eq!(datetime(&[0xE8, 0x07, 12]), None);
    }

    #[test]
    fn columns_are_read_by_type_and_null_is_an_error() {
        let columns = [
            Column::new(ColumnType::MYSQL_TYPE_LONGLONG),
            Column::new(ColumnType::MYSQL_TYPE_VAR_STRING),
            Column::new(ColumnType::MYSQL_TYPE_DATETIME),
            Column::new(ColumnType::MYSQL_TYPE_LONGLONG),
        ];
        // Header, NULL bitmap (4 columns + 2 bits: one byte; the fourth is NULL), values.
        let mut body = vec![0x00, 1 << (3 + 2)];
        body.extend_from_slice(&(-42i64).to_le_bytes());
        body.extend_from_slice(&[3, b'k', b'e', b'y']);
        body.extend_from_slice(&[4, 0xE8, 0x07, 12, 3]);
        let mut row = BinaryRow::new(&body, &columns).unwrap();
        assert_eq!(row.int("a").unwrap(), -42);
        assert_eq!(row.text("b").unwrap(), "key");
        assert_eq!(
            row.datetime("c").unwrap().to_string(),
            "2024-12-03 00:00:00"
        );
        assert!(row.end().is_err(), "a column is left");
        let e = row.int("d").unwrap_err().to_string();
        assert!(e.contains("d is NULL"), "{e}");
        row.end().unwrap();

        // A column of another type than asked is refused, not reinterpreted.
        let mut row = BinaryRow::new(&body, &columns).unwrap();
        let e = row.text("a").unwrap_err().to_string();
        assert!(e.contains("not a string"), "{e}");
        // A row cut short is an error, not a short value.
        let mut row = BinaryRow::new(&body[..6], &columns).unwrap();
        assert!(row.int("a").is_err());
        assert!(
            BinaryRow::new(&[0x01, 0], &columns).is_err(),
            "not a binary row"
        );
        // Invalid UTF-8 in a string column is an error.
        let bad = [0x00, 0, 2, 0xC3, 0x28];
        let mut row = BinaryRow::new(&bad, &columns[1..2]).unwrap();
        assert!(row.text("b").is_err());
    }
}
