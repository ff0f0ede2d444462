//! A YCSB run shared between several load clients (`--client K/N`): where the clients meet,
//! which records each inserts, what each knows of the others' records, and which versions
//! of a field each writes.
//!
//! Client K loads records K - 1, K - 1 + N, ... of the load. A run's inserts take the
//! record numbers from the run's first new one on, the K-th of every N to client K, so no
//! two clients insert one key. Before each run the clients meet and tell how many records
//! they inserted in the run before: each marks the others' as present, and the numbers no
//! client reached as never inserted; those the others may insert during the run are
//! theirs ([`Insert::Others`](super::truth::Insert::Others)), never chosen and never
//! required, accepted when a scan returns them. A field's versions are numbered apart too:
//! client K's `j`-th update of a field writes version `(j - 1) N + K`, so a value read tells
//! whose update it is; this client's own are checked as strictly as a lone client's, and
//! another's must be a value the workload writes (of that key, field and some version).
//!
//! The markers of the meeting points are records of the YCSB table (see [`Usertable`]).

use anyhow::{Context, Result};
use chrono::{DateTime, TimeZone, Utc};

use super::truth::Truth;
use crate::store::{YcsbStore, YcsbTable};
use crate::suite::rendezvous::{Marker, Place, Rendezvous};
use crate::workload::share::Share;
use crate::workload::ycsb::{self, Workload};

/// The highest version a value spells (24 bits).
const HIGHEST_VERSION: u32 = (1 << 24) - 1;

/// Which versions of a field this client writes, and which it accepts when it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Versions {
    share: Share,
    /// The highest version any client of the run may write.
    bound: u32,
}

impl Versions {
    /// `share`'s versions, in a run whose every client makes at most `updates` updates of
    /// one field.
    pub fn new(share: Share, updates: u64) -> Self {
        let bound = updates
            .saturating_mul(u64::from(share.count()))
            .min(u64::from(HIGHEST_VERSION));
        Versions {
            share,
            bound: bound as u32,
        }
    }

    /// The version written by this client's update numbered `local` (from 1; 0 is the
    /// inserted value).
    pub fn written(&self, local: u32) -> Result<u32, String> {
        if local == 0 {
            return Ok(0);
        }
        let n = u64::from(self.share.count());
        let k = u64::from(self.share.number());
        let version = (u64::from(local) - 1) * n + k;
        u32::try_from(version)
            .ok()
            .filter(|v| *v <= HIGHEST_VERSION)
            .ok_or_else(|| format!("update {local} of a field is beyond {HIGHEST_VERSION}"))
    }

    /// Whether `found` may be `field` of `key` when this client's own updates leave it at
    /// its versions `lowest` to `highest` (numbered as [`Versions::written`]'s `local`).
    pub fn fits(&self, found: &str, key: &str, field: u16, len: usize, window: (u32, u32)) -> bool {
        let n = self.share.count();
        if n == 1 {
            return ycsb::version_in(found, key, field, len, window).is_some();
        }
        let any = ycsb::version_in(found, key, field, len, (0, self.bound));
        if len < ycsb::VERSION_CHARS {
            // Too short to spell its version: a value of some version is all there is to
            // tell.
            return any.is_some();
        }
        match any {
            None => false,
            // The inserted value: no client writes it again.
            Some(0) => window.0 == 0,
            Some(v) if (v - 1) % n != self.share.number() - 1 => true,
            Some(v) => (window.0..=window.1).contains(&((v - 1) / n + 1)),
        }
    }
}

/// Where the clients of a YCSB run meet: records of the YCSB table, keyed by the marker's
/// name (which sorts before every `user` key, so no scan returns one), every field
/// `<arrival in Unix milliseconds> <number told>`.
struct Usertable<'a, S> {
    store: &'a mut S,
    table: &'a YcsbTable,
    /// Whether the connection uses the table yet (it is made by client 1's reset).
    used: &'a mut bool,
}

impl<S: YcsbStore> Usertable<'_, S> {
    async fn used(&mut self) -> Result<()> {
        if !*self.used {
            self.store.ycsb_use(self.table).await?;
            *self.used = true;
        }
        Ok(())
    }
}

impl<S: YcsbStore> Place for Usertable<'_, S> {
    async fn write(&mut self, marker: &Marker) -> Result<()> {
        self.used().await?;
        let value = format!("{} {}", marker.at.timestamp_millis(), marker.told);
        let values = vec![value; self.table.fields.len()];
        self.store.ycsb_insert(&marker.name, &values).await
    }

    async fn read(&mut self, name: &str) -> Result<Option<(DateTime<Utc>, u64)>> {
        self.used().await?;
        let Some(fields) = self.store.ycsb_read(name, Some(0)).await? else {
            return Ok(None);
        };
        let value = fields.into_iter().next().flatten().unwrap_or_default();
        let parsed = value.split_once(' ').and_then(|(at, told)| {
            let at = Utc.timestamp_millis_opt(at.parse().ok()?).single()?;
            Some((at, told.parse().ok()?))
        });
        parsed
            .map(Some)
            .with_context(|| format!("marker {name} holds {value:?}, not a marker's value"))
    }
}

/// One client's part in a run shared by several.
pub(super) struct Shared {
    rendezvous: Rendezvous,
    table: YcsbTable,
    /// Whether connection 0 uses the table yet.
    used: bool,
    /// The last run's inserts: its first new record number, the rows of `N` numbers it
    /// marked, this client's inserts.
    last: Option<(i64, u64, u64)>,
}

impl Shared {
    pub fn new(rendezvous: Rendezvous, table: YcsbTable) -> Self {
        Shared {
            rendezvous,
            table,
            used: false,
            last: None,
        }
    }

    /// The meeting place on `store` (connection 0).
    fn place<'a, S: YcsbStore>(
        &'a mut self,
        store: &'a mut S,
    ) -> (&'a mut Rendezvous, Usertable<'a, S>) {
        let place = Usertable {
            store,
            table: &self.table,
            used: &mut self.used,
        };
        (&mut self.rendezvous, place)
    }

    pub fn rendezvous(&self) -> &Rendezvous {
        &self.rendezvous
    }

    pub fn share(&self) -> Share {
        self.rendezvous.share()
    }

    /// Meets the others (`what` names the point).
    pub async fn meet<S: YcsbStore>(&mut self, store: &mut S, what: &str) -> Result<()> {
        let (rendezvous, mut place) = self.place(store);
        rendezvous.meet(&mut place, what).await
    }

    /// The last point: client 1 waits for every client; the others only write theirs.
    pub async fn finish<S: YcsbStore>(&mut self, store: &mut S) -> Result<()> {
        let (rendezvous, mut place) = self.place(store);
        rendezvous.finish(&mut place, "the end of the run").await
    }

    /// Marks this client as gone from the store, so that the others stop waiting.
    pub async fn give_up<S: YcsbStore>(&mut self, store: &mut S) {
        let (rendezvous, mut place) = self.place(store);
        rendezvous.give_up(&mut place).await;
    }

    /// Every client has loaded its share of `w`'s records: the others' are present.
    pub fn loaded(&self, truth: &Truth, w: &Workload) -> Result<()> {
        let share = self.share();
        let n = i64::from(share.count());
        for l in (0..share.count()).filter(|&l| l + 1 != share.number()) {
            let theirs = Share::new(l + 1, share.count()).map_err(anyhow::Error::msg)?;
            for j in 0..theirs.len_of(w.record_count) as i64 {
                let record = j * n + i64::from(l);
                truth.others(record, &w.key_name(record))?;
                truth.told(record, true)?;
            }
        }
        Ok(())
    }

    /// Meets the others before a run (`what`), telling how many records this client
    /// inserted in the run before; marks theirs present and the numbers no client reached
    /// never inserted. Returns the records present from then on, `0..` it (`present` when
    /// the run before made no inserts).
    pub async fn before_run<S: YcsbStore>(
        &mut self,
        store: &mut S,
        truth: &Truth,
        what: &str,
        present: i64,
    ) -> Result<i64> {
        let mine = self.last.map_or(0, |(_, _, mine)| mine);
        let (rendezvous, mut place) = self.place(store);
        let told = rendezvous.meet_telling(&mut place, what, mine).await?;
        let Some((from, rows, _)) = self.last.take() else {
            return Ok(present);
        };
        let n = self.share().count();
        let reached = told.iter().copied().max().unwrap_or(0);
        if reached > rows {
            anyhow::bail!("a client told {reached} inserts, more than the {rows} it may make");
        }
        for (l, &inserted) in told.iter().enumerate() {
            for j in 0..reached {
                let record = from + (j * u64::from(n) + l as u64) as i64;
                if l as u32 + 1 != self.share().number() || j >= inserted {
                    truth.told(record, j < inserted)?;
                }
            }
        }
        Ok(from + (reached * u64::from(n)) as i64)
    }

    /// A run of `w` that may insert starts with records `0..present`: the numbers the
    /// others may insert are theirs. Returns the draw's first insert and its stride.
    pub fn run_starts(&self, truth: &Truth, w: &Workload, present: i64) -> Result<(i64, i64)> {
        let share = self.share();
        let n = u64::from(share.count());
        let rows = Share::new(1, share.count())
            .map_err(anyhow::Error::msg)?
            .len_of(w.operation_count);
        if w.proportions.insert > 0.0 {
            for j in 0..rows {
                for l in (0..n).filter(|&l| l + 1 != u64::from(share.number())) {
                    let record = present + (j * n + l) as i64;
                    truth.others(record, &w.key_name(record))?;
                }
            }
        }
        Ok((present + i64::from(share.number()) - 1, n as i64))
    }

    /// The run that started with records `0..present` ended, this client having inserted
    /// `inserted`; told to the others at the next meeting.
    pub fn run_ended(&mut self, w: &Workload, present: i64, inserted: u64) -> Result<()> {
        let rows = Share::new(1, self.share().count())
            .map_err(anyhow::Error::msg)?
            .len_of(w.operation_count);
        if w.proportions.insert > 0.0 {
            self.last = Some((present, rows, inserted));
        }
        Ok(())
    }
}

/// Meets the other clients at `what`, when there are any.
pub(super) async fn meet<S: YcsbStore>(
    shared: &mut Option<Shared>,
    store: &mut S,
    what: &str,
) -> Result<()> {
    match shared {
        Some(s) => s.meet(store, what).await,
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_writes_its_own_versions_and_reads_the_others() {
        let one = Versions::new(Share::new(1, 2).unwrap(), 100);
        let two = Versions::new(Share::new(2, 2).unwrap(), 100);
        let written = |v: Versions| (0..4).map(|l| v.written(l).unwrap()).collect::<Vec<_>>();
        assert_eq!(written(one), [0, 1, 3, 5]);
        assert_eq!(written(two), [0, 2, 4, 6]);
        let value = |v| ycsb::value("user1", 2, v, 100);
        // Client 1's own versions within its window, and client 2's whatever they are.
        assert!(one.fits(&value(3), "user1", 2, 100, (2, 2)));
        assert!(
            !one.fits(&value(1), "user1", 2, 100, (2, 2)),
            "below its own settled"
        );
        assert!(
            !one.fits(&value(5), "user1", 2, 100, (0, 2)),
            "beyond its own last"
        );
        assert!(one.fits(&value(6), "user1", 2, 100, (2, 2)));
        assert!(
            !one.fits(&value(0), "user1", 2, 100, (1, 1)),
            "the insert's, again"
        );
        assert!(one.fits(&value(0), "user1", 2, 100, (0, 0)));
        // Never another record's, field's, or a version beyond any client's.
        assert!(!one.fits(&ycsb::value("user2", 2, 6, 100), "user1", 2, 100, (0, 9)));
        assert!(!one.fits(&ycsb::value("user1", 3, 6, 100), "user1", 2, 100, (0, 9)));
        assert!(!one.fits(&value(202), "user1", 2, 100, (0, 9)));
        // A lone client checks as it always has.
        let alone = Versions::new(Share::WHOLE, 100);
        assert_eq!(alone.written(3), Ok(3));
        assert!(alone.fits(&value(3), "user1", 2, 100, (3, 4)));
        assert!(!alone.fits(&value(2), "user1", 2, 100, (3, 4)));
    }
}
