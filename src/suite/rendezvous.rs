//! Several load clients (`--client K/N`) meeting between the phases of a suite (the classic
//! and the YCSB suites), with the store under test as the meeting place ([`Place`]): no
//! coordinator. At each point of the suite every client writes a marker (its arrival time,
//! and a number it tells the others) and reads the others' until it has all N; the next
//! phase then begins at the last arrival plus a grace period, on every client's clock.
//! Share 1 writes its marker first (it may have just reset the store, which deletes every
//! marker before it); the others write theirs once they have seen it.
//!
//! Outside every measured window. The markers stay in the store: N records of about 100
//! bytes per point, in the sizes share 1 measures.

use std::time::Duration;

use anyhow::{Result, bail};
use chrono::{DateTime, TimeZone, Utc};

use crate::store::Store;
use crate::workload::record::{Data, Record};

/// One client's marker at one meeting point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    /// Below 0, unique per point and client: the classic table's id.
    pub id: i64,
    /// Unique per coordinated run, point and client: what it is found by.
    pub name: String,
    /// When the client arrived, to the millisecond.
    pub at: DateTime<Utc>,
    /// The number the client tells the others.
    pub told: u64,
}

/// Where the clients leave their markers: a store's own records.
pub trait Place: Send {
    /// Writes `marker`.
    fn write(&mut self, marker: &Marker) -> impl Future<Output = Result<()>> + Send;

    /// The marker named `name`: when its client arrived and what it told; `None` when it
    /// is not there (yet).
    fn read(
        &mut self,
        name: &str,
    ) -> impl Future<Output = Result<Option<(DateTime<Utc>, u64)>>> + Send;
}

/// The classic suite's place: a record of the benchmark's own table, with the marker's
/// negative id, its arrival time as `created_at` and what it tells as `created_by`.
impl<S: Store> Place for S {
    async fn write(&mut self, marker: &Marker) -> Result<()> {
        let record = Record {
            id: marker.id,
            unique_id: marker.name.clone(),
            created_by: i64::try_from(marker.told).unwrap_or(i64::MAX),
            updated_by: 0,
            deleted_by: 0,
            created_at: marker.at,
            data: Data {
                name: "rendezvous".to_string(),
                age: 0,
            },
        };
        self.insert(&record).await
    }

    async fn read(&mut self, name: &str) -> Result<Option<(DateTime<Utc>, u64)>> {
        let found = self.find(name).await?;
        Ok(found.map(|r| (r.created_at, u64::try_from(r.created_by).unwrap_or(0))))
    }
}
use crate::workload::share::{MAX_SHARES, Share};

/// From the last client's arrival to the next phase's start, for the others to see it.
const GRACE: Duration = Duration::from_millis(500);

/// Between two looks for the others' markers.
const POLL: Duration = Duration::from_millis(50);

/// The clients of one coordinated run, as one of them sees them.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendezvous {
    share: Share,
    /// When every client begins (`--start-at`).
    start_at: DateTime<Utc>,
    /// Names the coordinated run (from `--start-at`): another run's markers never count.
    token: String,
    /// How long a client waits for the others at one point (`None`: for ever).
    limit: Option<Duration>,
    /// Points met so far: every client meets the same points in the same order.
    met: u32,
}

impl Rendezvous {
    /// Share `share` of the run that begins at `start_at`; `limit` is how long it waits
    /// for the others at one point.
    pub fn new(share: Share, start_at: DateTime<Utc>, limit: Option<Duration>) -> Self {
        Rendezvous {
            share,
            start_at,
            token: format!("{:x}", start_at.timestamp_millis()),
            limit,
            met: 0,
        }
    }

    pub fn share(&self) -> Share {
        self.share
    }

    pub fn start_at(&self) -> DateTime<Utc> {
        self.start_at
    }

    /// Share `k`'s marker at point `point`, telling `told`.
    fn marker(&self, point: u32, k: u32, at: DateTime<Utc>, told: u64) -> Marker {
        Marker {
            id: -(i64::from(point) * i64::from(MAX_SHARES + 1) + i64::from(k)),
            name: format!("dbcompare-rendezvous-{}-{point}-{k}", self.token),
            at,
            told,
        }
    }

    /// Meets the other clients at the next point (`what` names it in messages): writes this
    /// client's marker, waits until every client's is there, then until the common start.
    pub async fn meet<P: Place>(&mut self, store: &mut P, what: &str) -> Result<()> {
        self.meet_with(store, what, Wait::All, 0).await.map(|_| ())
    }

    /// [`Rendezvous::meet`], telling the others `told` (how many records this client
    /// inserted, say): every client's number, client 1's first.
    pub async fn meet_telling<P: Place>(
        &mut self,
        store: &mut P,
        what: &str,
        told: u64,
    ) -> Result<Vec<u64>> {
        self.meet_with(store, what, Wait::All, told).await
    }

    /// The last point of a run of the suite, before client 1 resets the store for the next
    /// one: client 1 waits for every client (none may still be searching), the others only
    /// until they have written theirs (they saw client 1's first), since the reset deletes
    /// the markers they would wait for.
    pub async fn finish<P: Place>(&mut self, store: &mut P, what: &str) -> Result<()> {
        let wait = if self.share.is_first() {
            Wait::All
        } else {
            Wait::Written
        };
        self.meet_with(store, what, wait, 0).await.map(|_| ())
    }

    /// Marks this client as gone from this store (it failed there), so that the others stop
    /// waiting for it at once; best effort.
    pub async fn give_up<P: Place>(&self, store: &mut P) {
        let marker = self.gave_up(self.share.number(), Utc::now());
        let _ = store.write(&marker).await;
    }

    /// Client `k`'s marker that it gave up on the store.
    fn gave_up(&self, k: u32, at: DateTime<Utc>) -> Marker {
        let mut marker = self.marker(0, k, at, 0);
        marker.name = format!("dbcompare-rendezvous-{}-gave-up-{k}", self.token);
        marker
    }

    /// Meets the others at the next point, telling them `told`: what each client told (0
    /// for those not waited for).
    async fn meet_with<P: Place>(
        &mut self,
        store: &mut P,
        what: &str,
        wait: Wait,
        told: u64,
    ) -> Result<Vec<u64>> {
        self.met += 1;
        let point = self.met;
        let started = tokio::time::Instant::now();
        let n = self.share.count();
        let me = self.share.number();
        let mut arrivals: Vec<Option<(DateTime<Utc>, u64)>> = vec![None; n as usize];
        let mut last_error: Option<String> = None;
        let mut written = false;
        loop {
            crate::liveness::alive();
            if crate::interrupt::requested() {
                bail!("interrupted while waiting for the other clients at {what}");
            }
            // Share 1 first; the others once they have seen share 1's marker.
            if !written && (me == 1 || arrivals[0].is_some()) {
                let now = millis(Utc::now());
                store
                    .write(&self.marker(point, me, now, told))
                    .await
                    .map_err(|e| {
                        e.context(format!(
                            "client {}: writing its marker at {what}",
                            self.share
                        ))
                    })?;
                arrivals[me as usize - 1] = Some((now, told));
                written = true;
            }
            for k in 1..=n {
                if arrivals[k as usize - 1].is_some() {
                    continue;
                }
                let name = self.marker(point, k, Utc::now(), 0).name;
                match store.read(&name).await {
                    Ok(Some(found)) => arrivals[k as usize - 1] = Some(found),
                    Ok(None) => {}
                    // Share 1's reset may not have made the table yet.
                    Err(e) => last_error = Some(crate::error::chain(&e)),
                }
            }
            if written && (wait == Wait::Written || arrivals.iter().all(Option::is_some)) {
                break;
            }
            // A client that failed on this store never comes.
            for k in (1..=n).filter(|k| arrivals[*k as usize - 1].is_none()) {
                if let Ok(Some(_)) = store.read(&self.gave_up(k, Utc::now()).name).await {
                    bail!(
                        "client {k}/{n} gave up on this store before {what} (its own run says why)"
                    );
                }
            }
            if let Some(limit) = self.limit
                && started.elapsed() > limit
            {
                let missing: Vec<String> = (1..=n)
                    .filter(|k| arrivals[*k as usize - 1].is_none())
                    .map(|k| format!("{k}/{n}"))
                    .collect();
                let why = last_error.map_or(String::new(), |e| format!(" (last error: {e})"));
                bail!(
                    "client {} waited {limit:?} at {what} for client(s) {} of the same \
                     --start-at{why}",
                    self.share,
                    missing.join(", ")
                );
            }
            tokio::time::sleep(POLL).await;
        }
        if wait == Wait::All {
            let last = arrivals
                .iter()
                .flatten()
                .map(|(at, _)| *at)
                .max()
                .unwrap_or_else(Utc::now);
            sleep_until(last + chrono::Duration::from_std(GRACE).unwrap_or_default()).await;
        }
        Ok(arrivals
            .into_iter()
            .map(|a| a.map_or(0, |(_, told)| told))
            .collect())
    }
}

/// Whom a client waits for at a meeting point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// Every client's marker, then the common start.
    All,
    /// Its own marker written (after client 1's was seen).
    Written,
}

/// Waits until the wall clock reads `at` (at once if it has, early on Ctrl-C), keeping the
/// stall watchdog told that the run is alive: a wait is not a stall.
pub async fn sleep_until(at: DateTime<Utc>) {
    while let Ok(wait) = (at - Utc::now()).to_std() {
        if wait.is_zero() || crate::interrupt::requested() {
            return;
        }
        crate::liveness::alive();
        tokio::time::sleep(wait.min(Duration::from_millis(500))).await;
    }
}

/// `at` to the millisecond, as every store keeps `created_at`.
fn millis(at: DateTime<Utc>) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(at.timestamp_millis())
        .single()
        .unwrap_or(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Durability, StoreOptions};
    use crate::store::ConnectSpec;
    use crate::store::sqlite::SqliteStore;

    fn open(path: &std::path::Path) -> SqliteStore {
        SqliteStore::open(&ConnectSpec {
            url: None,
            data_dir: None,
            durability: Durability::Relaxed,
            connect_timeout: Duration::from_secs(5),
            options: StoreOptions {
                sqlite_path: Some(path.to_path_buf()),
                ..Default::default()
            },
        })
        .unwrap()
    }

    #[test]
    fn markers_never_collide_with_records_or_each_other() {
        let r = Rendezvous::new(Share::new(2, 3).unwrap(), Utc::now(), None);
        let mut ids = std::collections::HashSet::new();
        for point in 1..50 {
            for k in 1..=MAX_SHARES {
                let m = r.marker(point, k, Utc::now(), 0);
                assert!(m.id < 0);
                assert!(ids.insert(m.id), "{point} {k}");
            }
        }
    }

    /// Three clients on one SQLite file meet twice, the second time each telling a number;
    /// each starts after the last arrival, and a client alone gives up with the missing
    /// ones named.
    #[tokio::test(flavor = "multi_thread")]
    async fn clients_meet_at_every_point_and_a_missing_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("meet.sqlite");
        let mut made = open(&path);
        made.reset().await.unwrap();
        let mut tasks = Vec::new();
        let start = Utc::now();
        for k in [3, 1, 2] {
            let path = path.clone();
            tasks.push(tokio::spawn(async move {
                let mut store = open(&path);
                let share = Share::new(k, 3).unwrap();
                let mut r = Rendezvous::new(share, start, Some(Duration::from_secs(20)));
                if k == 3 {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                }
                r.meet(&mut store, "point one").await.unwrap();
                let after_one = Utc::now();
                let told = r.meet_telling(&mut store, "point two", u64::from(k) * 10);
                assert_eq!(told.await.unwrap(), [10, 20, 30], "every client's number");
                after_one
            }));
        }
        let mut ends = Vec::new();
        for t in tasks {
            ends.push(t.await.unwrap());
        }
        let spread = *ends.iter().max().unwrap() - *ends.iter().min().unwrap();
        assert!(spread < chrono::Duration::milliseconds(150), "{spread}");
        let mut first = open(&dir.path().join("alone.sqlite"));
        first.reset().await.unwrap();
        let mut alone = Rendezvous::new(
            Share::new(1, 2).unwrap(),
            start + chrono::Duration::seconds(1),
            Some(Duration::from_millis(300)),
        );
        let e = alone.meet(&mut first, "the reset").await.unwrap_err();
        let e = format!("{e:#}");
        assert!(
            e.contains("client 1/2 waited") && e.contains("client(s) 2/2"),
            "{e}"
        );
    }

    /// A client that gave up on the store is not waited for; at the end of a run the others
    /// go on once they have written their marker, and client 1 waits for every one.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_client_that_gave_up_is_not_waited_for_and_the_end_waits_for_all() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gave-up.sqlite");
        let mut store = open(&path);
        store.reset().await.unwrap();
        let start = Utc::now();
        let limit = Some(Duration::from_secs(20));
        let two = Rendezvous::new(Share::new(2, 2).unwrap(), start, limit);
        two.give_up(&mut store).await;
        let mut one = Rendezvous::new(Share::new(1, 2).unwrap(), start, limit);
        let began = std::time::Instant::now();
        let e = one.meet(&mut store, "INSERT tiny").await.unwrap_err();
        assert!(
            format!("{e:#}").contains("client 2/2 gave up on this store before INSERT tiny"),
            "{e:#}"
        );
        assert!(began.elapsed() < Duration::from_secs(5));

        let other = dir.path().join("end.sqlite");
        let mut store = open(&other);
        store.reset().await.unwrap();
        let mut one = Rendezvous::new(Share::new(1, 2).unwrap(), start, limit);
        let mut two = Rendezvous::new(Share::new(2, 2).unwrap(), start, limit);
        let first = tokio::spawn({
            let other = other.clone();
            async move {
                let mut store = open(&other);
                one.finish(&mut store, "the end of the run").await.unwrap();
                std::time::Instant::now()
            }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!first.is_finished(), "client 1 waits for client 2");
        two.finish(&mut store, "the end of the run").await.unwrap();
        let second_done = std::time::Instant::now();
        let first_done = first.await.unwrap();
        assert!(first_done + Duration::from_millis(100) >= second_done);
    }
}
