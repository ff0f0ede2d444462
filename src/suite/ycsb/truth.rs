//! What the store should hold: for every record whether it is inserted, and for every field
//! the versions written, so that every value read can be checked (YCSB's `dataintegrity`,
//! extended to updates). Values are derived from key, field and version, so nothing written
//! is kept.
//!
//! With several connections at once, a read may see a field before or after an update that
//! runs at the same time, and nothing else: a field's versions are handed out in order, and
//! the version it is *settled* at moves only when an update ran alone (no other update of
//! that field started or ended meanwhile), so the store surely holds it. A read is right
//! when it returns a version between the field's settled version when the read started and
//! the last version handed out when it ended.
//!
//! With several load clients, each keeps its own truth: the records the others inserted
//! are marked present once they have told how many (at a meeting point), and those they
//! may be inserting meanwhile as [`Insert::Others`], never chosen and never required.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

use anyhow::{Result, bail};

/// Records per lazily allocated chunk of state.
const CHUNK: usize = 1 << 14;

/// Record states.
const ABSENT: u64 = 0;
const INSERTING: u64 = 1;
const PRESENT: u64 = 2;
const FAILED: u64 = 3;
const OTHERS: u64 = 4;
const NEVER: u64 = 5;

/// Where a record's insert is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Insert {
    NotStarted,
    Running,
    /// Acknowledged: the record is surely present.
    Done,
    /// The store refused it (an error was counted).
    Failed,
    /// Another load client's to insert during this run: it may or may not be there.
    Others,
    /// No client inserted it: it is never there.
    Never,
}

/// A field's state in one word: the last version handed out (24 bits), the updates in
/// flight (16 bits), the settled version (24 bits).
const VERSION_BITS: u32 = 24;
const VERSION_MASK: u64 = (1 << VERSION_BITS) - 1;
const INFLIGHT_SHIFT: u32 = VERSION_BITS;
const ISSUED_SHIFT: u32 = VERSION_BITS + 16;

fn issued(word: u64) -> u64 {
    word >> ISSUED_SHIFT
}
fn inflight(word: u64) -> u64 {
    (word >> INFLIGHT_SHIFT) & 0xffff
}
fn settled(word: u64) -> u64 {
    word & VERSION_MASK
}
fn pack(issued: u64, inflight: u64, settled: u64) -> u64 {
    (issued << ISSUED_SHIFT) | (inflight << INFLIGHT_SHIFT) | settled
}

/// An update handed out: its version, and whether it started alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Write {
    pub version: u32,
    alone: bool,
}

/// The range of versions a read of a field may return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub lowest: u32,
    pub highest: u32,
}

/// The state of every record and field of a run.
pub struct Truth {
    fields: usize,
    /// Per chunk of records: `1 + fields` words per record (its state, then its fields).
    chunks: Vec<OnceLock<Box<[AtomicU64]>>>,
    /// YCSB's acknowledged counter: the records `0..acknowledged` have all ended their
    /// insert (acknowledged or refused).
    acknowledged: AtomicI64,
    /// Every key inserted or being inserted, in key order, with its record's number: for
    /// checking scans.
    keys: Option<Mutex<BTreeMap<String, i64>>>,
    /// Set when a task gave up: the others stop too.
    given_up: AtomicBool,
}

impl Truth {
    /// Room for records `0..capacity` of `fields` fields each; `scans` keeps the key order.
    pub fn new(capacity: u64, fields: usize, scans: bool) -> Self {
        let chunks = (capacity as usize).div_ceil(CHUNK).max(1);
        Truth {
            fields,
            chunks: (0..chunks).map(|_| OnceLock::new()).collect(),
            acknowledged: AtomicI64::new(0),
            keys: scans.then(|| Mutex::new(BTreeMap::new())),
            given_up: AtomicBool::new(false),
        }
    }

    fn word(&self, record: i64, slot: usize) -> Result<&AtomicU64> {
        let r = usize::try_from(record)?;
        let per = 1 + self.fields;
        let Some(chunk) = self.chunks.get(r / CHUNK) else {
            bail!("record {record} is beyond the room kept for the run");
        };
        let chunk = chunk.get_or_init(|| (0..CHUNK * per).map(|_| AtomicU64::new(0)).collect());
        Ok(&chunk[(r % CHUNK) * per + slot])
    }

    /// An insert of `record` (key `key`) starts.
    pub fn insert_started(&self, record: i64, key: &str) -> Result<()> {
        let word = self.word(record, 0)?;
        if word
            .compare_exchange(ABSENT, INSERTING, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            bail!("record {record} is inserted twice");
        }
        if let Some(keys) = &self.keys {
            keys.lock()
                .expect("no panics under the lock")
                .insert(key.to_string(), record);
        }
        Ok(())
    }

    /// The insert of `record` ended: acknowledged, or refused.
    pub fn insert_ended(&self, record: i64, acknowledged: bool) -> Result<()> {
        let state = if acknowledged { PRESENT } else { FAILED };
        self.word(record, 0)?.store(state, Ordering::SeqCst);
        self.advance();
        Ok(())
    }

    /// Moves the acknowledged counter past every record whose insert has ended (or that is
    /// another client's), as far as they run without a gap. Whoever ends the record it
    /// stops at moves it on: the state is stored before the counter is read, the counter
    /// moved before a state is read.
    fn advance(&self) {
        let mut at = self.acknowledged.load(Ordering::SeqCst);
        loop {
            let ended = match self.word(at, 0) {
                Ok(word) => matches!(
                    word.load(Ordering::SeqCst),
                    PRESENT | FAILED | OTHERS | NEVER
                ),
                Err(_) => false,
            };
            if !ended {
                return;
            }
            at = match self.acknowledged.compare_exchange(
                at,
                at + 1,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => at + 1,
                Err(seen) => seen,
            };
        }
    }

    /// The records `0..n` whose inserts have all ended: `n`. A run chooses the records of
    /// its reads, updates and scans among them, so that none waits for an insert.
    pub fn acknowledged(&self) -> i64 {
        self.acknowledged.load(Ordering::SeqCst)
    }

    /// Where the insert of `record` is.
    pub fn insert_state(&self, record: i64) -> Result<Insert> {
        Ok(match self.word(record, 0)?.load(Ordering::Acquire) {
            ABSENT => Insert::NotStarted,
            INSERTING => Insert::Running,
            PRESENT => Insert::Done,
            FAILED => Insert::Failed,
            OTHERS => Insert::Others,
            _ => Insert::Never,
        })
    }

    /// Whether a run may choose `record` to read, update or scan from: not one another
    /// client may be inserting, nor one never inserted.
    pub fn choosable(&self, record: i64) -> bool {
        !matches!(
            self.insert_state(record),
            Ok(Insert::Others | Insert::Never)
        )
    }

    /// `record` (key `key`) is another load client's to insert: it may be there from now
    /// on. A record this client has already started is left as it is.
    pub fn others(&self, record: i64, key: &str) -> Result<()> {
        let word = self.word(record, 0)?;
        if word
            .compare_exchange(ABSENT, OTHERS, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
            && let Some(keys) = &self.keys
        {
            keys.lock()
                .expect("no panics under the lock")
                .insert(key.to_string(), record);
        }
        self.advance();
        Ok(())
    }

    /// Another client told whether it inserted `record` (one of [`Truth::others`]'s): it is
    /// present, or never will be. A record of this client's own that it did not insert
    /// never will be either.
    pub fn told(&self, record: i64, inserted: bool) -> Result<()> {
        let word = self.word(record, 0)?;
        let state = word.load(Ordering::Acquire);
        match (state, inserted) {
            (OTHERS, true) => word.store(PRESENT, Ordering::SeqCst),
            (OTHERS | ABSENT, false) => word.store(NEVER, Ordering::SeqCst),
            (ABSENT, true) => bail!("record {record} was inserted by another client unseen"),
            _ => {}
        }
        self.advance();
        Ok(())
    }

    /// Whether `record` was surely present (its insert acknowledged).
    pub fn present(&self, record: i64) -> Result<bool> {
        Ok(self.insert_state(record)? == Insert::Done)
    }

    /// A task gave up (too many errors, or an interrupt): the others stop too.
    pub fn give_up(&self) {
        self.given_up.store(true, Ordering::Release);
    }

    pub fn given_up(&self) -> bool {
        self.given_up.load(Ordering::Acquire)
    }

    /// An update of `field` of `record` starts: the version it writes.
    pub fn write_started(&self, record: i64, field: u16) -> Result<Write> {
        let word = self.word(record, 1 + usize::from(field))?;
        let mut current = word.load(Ordering::Acquire);
        loop {
            let next = issued(current) + 1;
            if next > VERSION_MASK || inflight(current) == 0xffff {
                bail!("more than {VERSION_MASK} updates of one field, or too many at once");
            }
            let new = pack(next, inflight(current) + 1, settled(current));
            match word.compare_exchange_weak(current, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    return Ok(Write {
                        version: next as u32,
                        alone: inflight(current) == 0,
                    });
                }
                Err(seen) => current = seen,
            }
        }
    }

    /// The update `write` of `field` of `record` ended: when it was acknowledged and ran
    /// alone, the store surely holds its version.
    pub fn write_ended(
        &self,
        record: i64,
        field: u16,
        write: Write,
        acknowledged: bool,
    ) -> Result<()> {
        let word = self.word(record, 1 + usize::from(field))?;
        let mut current = word.load(Ordering::Acquire);
        loop {
            let still_alone = acknowledged
                && write.alone
                && inflight(current) == 1
                && issued(current) == u64::from(write.version);
            let settled_now = if still_alone {
                u64::from(write.version)
            } else {
                settled(current)
            };
            let new = pack(issued(current), inflight(current) - 1, settled_now);
            match word.compare_exchange_weak(current, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Ok(()),
                Err(seen) => current = seen,
            }
        }
    }

    /// The versions a read of `field` of `record` starting now may see (its highest is
    /// read again when the read ends: [`Truth::highest`]).
    pub fn window(&self, record: i64, field: u16) -> Result<Window> {
        let word = self
            .word(record, 1 + usize::from(field))?
            .load(Ordering::Acquire);
        Ok(Window {
            lowest: settled(word) as u32,
            highest: issued(word) as u32,
        })
    }

    /// The last version of `field` of `record` handed out.
    pub fn highest(&self, record: i64, field: u16) -> Result<u32> {
        let word = self
            .word(record, 1 + usize::from(field))?
            .load(Ordering::Acquire);
        Ok(issued(word) as u32)
    }

    /// The number of `key`, if it is a record's inserted or being inserted.
    pub fn record_of(&self, key: &str) -> Option<i64> {
        self.keys
            .as_ref()?
            .lock()
            .expect("no panics under the lock")
            .get(key)
            .copied()
    }

    /// The first `count` surely present records from `start` on, in key order: their keys
    /// and numbers.
    pub fn present_from(&self, start: &str, count: usize) -> Result<Vec<(String, i64)>> {
        let Some(keys) = &self.keys else {
            return Ok(Vec::new());
        };
        let keys = keys.lock().expect("no panics under the lock");
        let mut found = Vec::with_capacity(count);
        for (key, &record) in keys.range::<str, _>((Bound::Included(start), Bound::Unbounded)) {
            if found.len() == count {
                break;
            }
            if self.present(record)? {
                found.push((key.clone(), record));
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_update_settles_its_version() {
        let t = Truth::new(100, 3, false);
        assert_eq!(
            t.window(5, 1).unwrap(),
            Window {
                lowest: 0,
                highest: 0
            }
        );
        let w = t.write_started(5, 1).unwrap();
        assert_eq!(w.version, 1);
        // While it runs, a read may see the old value or the new one.
        assert_eq!(
            t.window(5, 1).unwrap(),
            Window {
                lowest: 0,
                highest: 1
            }
        );
        t.write_ended(5, 1, w, true).unwrap();
        assert_eq!(
            t.window(5, 1).unwrap(),
            Window {
                lowest: 1,
                highest: 1
            }
        );
        // Other fields and records are untouched.
        assert_eq!(
            t.window(5, 2).unwrap(),
            Window {
                lowest: 0,
                highest: 0
            }
        );
        assert_eq!(
            t.window(6, 1).unwrap(),
            Window {
                lowest: 0,
                highest: 0
            }
        );
    }

    #[test]
    fn overlapping_updates_leave_either_version_possible_until_one_runs_alone() {
        let t = Truth::new(10, 1, false);
        let a = t.write_started(0, 0).unwrap();
        let b = t.write_started(0, 0).unwrap();
        t.write_ended(0, 0, b, true).unwrap();
        t.write_ended(0, 0, a, true).unwrap();
        // The store applied them in either order: versions 0 (settled before) to 2.
        assert_eq!(
            t.window(0, 0).unwrap(),
            Window {
                lowest: 0,
                highest: 2
            }
        );
        let c = t.write_started(0, 0).unwrap();
        t.write_ended(0, 0, c, true).unwrap();
        assert_eq!(
            t.window(0, 0).unwrap(),
            Window {
                lowest: 3,
                highest: 3
            }
        );
        // A refused update settles nothing: the store may or may not hold it.
        let d = t.write_started(0, 0).unwrap();
        t.write_ended(0, 0, d, false).unwrap();
        assert_eq!(
            t.window(0, 0).unwrap(),
            Window {
                lowest: 3,
                highest: 4
            }
        );
    }

    #[test]
    fn the_acknowledged_counter_stops_at_the_first_insert_not_ended() {
        let t = Truth::new(100, 1, false);
        for record in 0..4 {
            t.insert_started(record, &format!("user{record}")).unwrap();
        }
        assert_eq!(t.acknowledged(), 0);
        t.insert_ended(1, true).unwrap();
        t.insert_ended(3, true).unwrap();
        assert_eq!(t.acknowledged(), 0, "record 0 is still running");
        t.insert_ended(0, true).unwrap();
        assert_eq!(t.acknowledged(), 2, "up to the gap at record 2");
        // A refused insert has ended too, as YCSB acknowledges it.
        t.insert_ended(2, false).unwrap();
        assert_eq!(t.acknowledged(), 4);
        // From many threads at once, in any order: every record ends up acknowledged.
        let t = std::sync::Arc::new(Truth::new(4_000, 1, false));
        let threads: Vec<_> = (0..4_i64)
            .map(|thread| {
                let t = std::sync::Arc::clone(&t);
                std::thread::spawn(move || {
                    for record in (thread..4_000).step_by(4) {
                        t.insert_started(record, "k").unwrap();
                        t.insert_ended(record, true).unwrap();
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(t.acknowledged(), 4_000);
    }

    /// Client 2 of 2 inserting 10, 12, ...: the counter passes client 1's numbers, which
    /// are never chosen until client 1 tells it inserted them; those it did not, never.
    #[test]
    fn another_clients_records_are_passed_then_told() {
        let t = Truth::new(100, 1, true);
        for record in 0..10 {
            t.insert_started(record, &format!("user{record}")).unwrap();
            t.insert_ended(record, true).unwrap();
        }
        for record in [10, 12, 14] {
            t.others(record, &format!("user{record}")).unwrap();
        }
        assert_eq!(t.acknowledged(), 11, "up to its own first");
        t.insert_started(11, "user11").unwrap();
        t.insert_ended(11, true).unwrap();
        assert_eq!(t.acknowledged(), 13);
        assert!(!t.choosable(10) && !t.choosable(12) && t.choosable(11));
        assert_eq!(t.record_of("user12"), Some(12), "a scan may return it");
        let present = t.present_from("user", 100).unwrap();
        assert!(
            present.iter().all(|(_, r)| ![10, 12, 14].contains(r)),
            "never required"
        );
        assert_eq!(present.len(), 11);
        // Client 1 inserted one; client 2 none more.
        t.told(10, true).unwrap();
        t.told(12, false).unwrap();
        t.told(13, false).unwrap();
        assert_eq!(t.insert_state(10).unwrap(), Insert::Done);
        assert_eq!(t.insert_state(12).unwrap(), Insert::Never);
        assert!(!t.choosable(13));
        assert_eq!(t.acknowledged(), 15);
        assert!(t.told(20, true).is_err(), "never marked as another's");
    }

    #[test]
    fn inserts_and_key_order() {
        let t = Truth::new(40_000, 1, true);
        assert_eq!(t.insert_state(30_000).unwrap(), Insert::NotStarted);
        t.insert_started(30_000, "user3").unwrap();
        assert_eq!(t.insert_state(30_000).unwrap(), Insert::Running);
        // Known while it runs, not yet surely present.
        assert_eq!(t.record_of("user3"), Some(30_000));
        assert!(t.present_from("user", 5).unwrap().is_empty());
        t.insert_ended(30_000, true).unwrap();
        assert!(t.present(30_000).unwrap());
        assert!(t.insert_started(30_000, "user3").is_err(), "twice");
        for (record, key) in [(1, "user1"), (2, "user20"), (3, "user2"), (4, "user21")] {
            t.insert_started(record, key).unwrap();
            t.insert_ended(record, record != 4).unwrap();
        }
        assert_eq!(t.insert_state(4).unwrap(), Insert::Failed);
        let keys = |start, n| -> Vec<String> {
            t.present_from(start, n)
                .unwrap()
                .into_iter()
                .map(|(k, _)| k)
                .collect()
        };
        assert_eq!(keys("user2", 2), ["user2", "user20"]);
        assert_eq!(
            keys("user20", 5),
            ["user20", "user3"],
            "the failed one left out"
        );
        assert_eq!(t.record_of("user20"), Some(2));
        assert_eq!(t.record_of("user9"), None);
        assert!(t.word(40_000 + CHUNK as i64, 0).is_err());
        assert!(!t.given_up());
        t.give_up();
        assert!(t.given_up());
    }
}
