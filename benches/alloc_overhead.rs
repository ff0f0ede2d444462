//! What counting allocations costs the SQLite search path: blocks of searches with the
//! counting allocator counting and not counting, alternated in one process over the same
//! database (so drift on a noisy machine falls on both sides), medians and their ratio.
//! Target: counting changes the search throughput by less than 5%.
//!
//! Run with `bench/alloc-overhead.sh` (or `cargo bench --bench alloc_overhead`).

use std::time::{Duration, Instant};

use dbcompare::catalog::Durability;
use dbcompare::measure::{CountingAlloc, allocations};
use dbcompare::report::stats::Spread;
use dbcompare::store::sqlite::SqliteStore;
use dbcompare::store::{ConnectSpec, Store};
use dbcompare::workload::record::generate;

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

const BLOCK: usize = 20_000;
const PAIRS: usize = 25;

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let spec = ConnectSpec {
            url: None,
            data_dir: None,
            durability: Durability::Relaxed,
            connect_timeout: Duration::from_secs(10),
            options: Default::default(),
        };
        let mut store = SqliteStore::open(&spec).unwrap();
        store.reset().await.unwrap();
        let records = generate(1, &"small".parse().unwrap(), 1);
        for r in &records {
            store.insert(r).await.unwrap();
        }
        let order = dbcompare::workload::record::search_order(1, &"small".parse().unwrap(), (BLOCK * PAIRS * 2) as u64);
        let mut chunks = order.chunks(BLOCK);
        let mut rates = [Vec::new(), Vec::new()];
        let mut allocs_per_search = 0.0;
        for pair in 0..PAIRS {
            // Alternate which side goes first, so neither always follows the other.
            let sides = if pair % 2 == 0 { [true, false] } else { [false, true] };
            for counting in sides {
                if counting {
                    CountingAlloc::enable();
                } else {
                    CountingAlloc::disable();
                }
                let chunk = chunks.next().unwrap();
                let before = allocations();
                let start = Instant::now();
                for &i in chunk {
                    let r = &records[i as usize];
                    let found = store.find(&r.unique_id).await.unwrap();
                    assert_eq!(found.as_ref(), Some(r));
                }
                let rate = chunk.len() as f64 / start.elapsed().as_secs_f64();
                if let (Some(b), Some(a)) = (before, allocations()) {
                    allocs_per_search = (a.0 - b.0) as f64 / chunk.len() as f64;
                }
                rates[usize::from(counting)].push(rate);
            }
        }
        let on = Spread::of(&rates[1]).unwrap();
        let off = Spread::of(&rates[0]).unwrap();
        println!("SQLite search, {PAIRS} alternated pairs of {BLOCK}-search blocks (searches/s)");
        println!("  counting on : median {:>9.0}  (min {:.0}, max {:.0}); {allocs_per_search:.1} allocs/search", on.median, on.min, on.max);
        println!("  counting off: median {:>9.0}  (min {:.0}, max {:.0})", off.median, off.min, off.max);
        let change = (off.median - on.median) / off.median * 100.0;
        println!("  ratio on/off: {:.3}; counting costs {change:+.1}% of throughput (target < 5%)", on.median / off.median);
    });
}
