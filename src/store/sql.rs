//! The YCSB suite's statements for the SQL stores, as YCSB's JDBC binding makes them: a table
//! of a key and one text column per field; reads and updates by key, scans by key range in
//! key order. Each store writes its own `CREATE TABLE` (types, collation, engine).

use std::collections::HashMap;

use super::YcsbTable;

/// How a store's driver numbers its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placeholders {
    /// `$1, $2` (PostgreSQL).
    Dollar,
    /// `?1, ?2` (SQLite).
    NumberedQuestion,
    /// `?, ?` (MySQL).
    Question,
}

impl Placeholders {
    fn nth(self, i: usize) -> String {
        match self {
            Placeholders::Dollar => format!("${i}"),
            Placeholders::NumberedQuestion => format!("?{i}"),
            Placeholders::Question => "?".to_string(),
        }
    }
}

/// The key column of the table.
pub const KEY: &str = "ycsb_key";

/// The statements of one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YcsbStatements {
    pub table: String,
    pub fields: Vec<String>,
    style: Placeholders,
    pub insert: String,
    /// Every field of a record by key.
    pub read_all: String,
    /// One field (by index) of a record by key.
    pub read_one: Vec<String>,
    /// Every field of up to N records from a key on, with their keys.
    pub scan_all: String,
    /// One field of up to N records from a key on, with their keys.
    pub scan_one: Vec<String>,
}

impl YcsbStatements {
    pub fn new(table: &YcsbTable, style: Placeholders) -> Self {
        let t = &table.name;
        let fields = table.fields.clone();
        let all = fields.join(", ");
        let values: Vec<String> = (1..=fields.len() + 1).map(|i| style.nth(i)).collect();
        let (p1, p2) = (style.nth(1), style.nth(2));
        let scan = |columns: &str| {
            format!(
                "SELECT {KEY}, {columns} FROM {t} WHERE {KEY} >= {p1} ORDER BY {KEY} LIMIT {p2}"
            )
        };
        YcsbStatements {
            insert: format!(
                "INSERT INTO {t} ({KEY}, {all}) VALUES ({})",
                values.join(", ")
            ),
            read_all: format!("SELECT {all} FROM {t} WHERE {KEY} = {p1}"),
            read_one: fields
                .iter()
                .map(|f| format!("SELECT {f} FROM {t} WHERE {KEY} = {p1}"))
                .collect(),
            scan_all: scan(&all),
            scan_one: fields.iter().map(|f| scan(f)).collect(),
            table: t.clone(),
            fields,
            style,
        }
    }

    /// The statements a driver prepares, in the order [`Prepared::new`] takes them.
    pub fn to_prepare(&self) -> Vec<&str> {
        let mut all = vec![
            self.insert.as_str(),
            self.read_all.as_str(),
            self.scan_all.as_str(),
        ];
        all.extend(self.read_one.iter().map(String::as_str));
        all.extend(self.scan_one.iter().map(String::as_str));
        all
    }

    /// The read of every field (`None`) or of one.
    pub fn read(&self, field: Option<u16>) -> &str {
        match field {
            Some(f) => &self.read_one[usize::from(f)],
            None => &self.read_all,
        }
    }

    /// The scan of every field (`None`) or of one.
    pub fn scan(&self, field: Option<u16>) -> &str {
        match field {
            Some(f) => &self.scan_one[usize::from(f)],
            None => &self.scan_all,
        }
    }

    /// `UPDATE` of these fields by key: the fields' values first, the key last.
    pub fn update(&self, fields: &[u16]) -> String {
        let set: Vec<String> = fields
            .iter()
            .enumerate()
            .map(|(i, &f)| {
                format!(
                    "{} = {}",
                    self.fields[usize::from(f)],
                    self.style.nth(i + 1)
                )
            })
            .collect();
        format!(
            "UPDATE {} SET {} WHERE {KEY} = {}",
            self.table,
            set.join(", "),
            self.style.nth(fields.len() + 1)
        )
    }

    /// The columns of a `CREATE TABLE`: the key of `key_type`, each field of `field_type`.
    pub fn columns(&self, key_type: &str, field_type: &str) -> String {
        let mut columns = vec![format!("{KEY} {key_type} NOT NULL PRIMARY KEY")];
        columns.extend(self.fields.iter().map(|f| format!("{f} {field_type}")));
        columns.join(", ")
    }
}

/// A table's statements prepared on one connection (`S`: the driver's prepared statement);
/// an update is prepared the first time its set of fields is written.
pub struct Prepared<S> {
    pub text: YcsbStatements,
    pub insert: S,
    read_all: S,
    read_one: Vec<S>,
    scan_all: S,
    scan_one: Vec<S>,
    /// By the fields they set.
    updates: HashMap<Vec<u16>, S>,
}

impl<S> Prepared<S> {
    /// `text` with its statements prepared, in [`YcsbStatements::to_prepare`]'s order.
    pub fn new(text: YcsbStatements, prepared: Vec<S>) -> Self {
        let fields = text.fields.len();
        assert_eq!(prepared.len(), 3 + 2 * fields, "every statement prepared");
        let mut prepared = prepared.into_iter();
        let mut next = || prepared.next().expect("counted above");
        let (insert, read_all, scan_all) = (next(), next(), next());
        let read_one = (0..fields).map(|_| next()).collect();
        let scan_one = (0..fields).map(|_| next()).collect();
        Prepared {
            insert,
            read_all,
            scan_all,
            read_one,
            scan_one,
            updates: HashMap::new(),
            text,
        }
    }

    /// The read of every field (`None`) or of one.
    pub fn read(&self, field: Option<u16>) -> &S {
        match field {
            Some(f) => &self.read_one[usize::from(f)],
            None => &self.read_all,
        }
    }

    /// The scan of every field (`None`) or of one.
    pub fn scan(&self, field: Option<u16>) -> &S {
        match field {
            Some(f) => &self.scan_one[usize::from(f)],
            None => &self.scan_all,
        }
    }

    /// The update of these fields, if it is prepared yet.
    pub fn update(&self, fields: &[u16]) -> Option<&S> {
        self.updates.get(fields)
    }

    /// Keeps the update of `fields`, prepared.
    pub fn add_update(&mut self, fields: Vec<u16>, statement: S) -> &S {
        self.updates.entry(fields).or_insert(statement)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> YcsbTable {
        YcsbTable {
            name: "usertable".into(),
            fields: vec!["field0".into(), "field1".into()],
        }
    }

    #[test]
    fn statements_are_ycsbs_jdbc_bindings() {
        let pg = YcsbStatements::new(&table(), Placeholders::Dollar);
        assert_eq!(
            pg.insert,
            "INSERT INTO usertable (ycsb_key, field0, field1) VALUES ($1, $2, $3)"
        );
        assert_eq!(
            pg.read_all,
            "SELECT field0, field1 FROM usertable WHERE ycsb_key = $1"
        );
        assert_eq!(
            pg.read_one[1],
            "SELECT field1 FROM usertable WHERE ycsb_key = $1"
        );
        assert_eq!(
            pg.scan_all,
            "SELECT ycsb_key, field0, field1 FROM usertable WHERE ycsb_key >= $1 \
             ORDER BY ycsb_key LIMIT $2"
        );
        assert_eq!(
            pg.update(&[1]),
            "UPDATE usertable SET field1 = $1 WHERE ycsb_key = $2"
        );
        let my = YcsbStatements::new(&table(), Placeholders::Question);
        assert_eq!(
            my.update(&[0, 1]),
            "UPDATE usertable SET field0 = ?, field1 = ? WHERE ycsb_key = ?"
        );
        assert_eq!(
            my.columns("VARCHAR(255)", "TEXT"),
            "ycsb_key VARCHAR(255) NOT NULL PRIMARY KEY, field0 TEXT, field1 TEXT"
        );
    }

    #[test]
    fn prepared_statements_are_found_by_what_they_do() {
        // A driver that "prepares" a statement into its text.
        let text = YcsbStatements::new(&table(), Placeholders::Dollar);
        let prepared: Vec<String> = text.to_prepare().into_iter().map(str::to_string).collect();
        let mut p = Prepared::new(text.clone(), prepared);
        assert_eq!(p.insert, text.insert);
        assert_eq!(p.read(None), &text.read_all);
        assert_eq!(p.read(Some(1)), &text.read_one[1]);
        assert_eq!(p.scan(None), &text.scan_all);
        assert_eq!(p.scan(Some(0)), &text.scan_one[0]);
        assert_eq!(p.update(&[1]), None);
        p.add_update(vec![1], text.update(&[1]));
        assert_eq!(p.update(&[1]), Some(&text.update(&[1])));
        assert_eq!(text.read(Some(1)), text.read_one[1]);
        assert_eq!(text.scan(None), text.scan_all);
    }
}
