//! `--alloc-sites`: the counting allocator's by-call-site view names a known allocation
//! pattern's sites and counts them exactly, on one thread and on several (a run through the
//! binary is in `end_to_end.rs`).

use dbcompare::measure::{CountingAlloc, allocations, sites};
use dbcompare::report::model::{AllocSite, AllocSites};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// `n` blocks of 48 bytes, into room already made.
#[inline(never)]
fn small_blocks(out: &mut Vec<Vec<u8>>, n: usize) {
    for _ in 0..n {
        out.push(Vec::with_capacity(48));
    }
}

/// `n` strings of 1,000 bytes (through the standard library's `repeat`), into room
/// already made.
#[inline(never)]
fn big_strings(out: &mut Vec<String>, n: usize) {
    for _ in 0..n {
        out.push("x".repeat(1000));
    }
}

fn site<'a>(sites: &'a AllocSites, function: &str) -> &'a AllocSite {
    sites
        .sites
        .iter()
        .find(|s| s.function.ends_with(function))
        .unwrap_or_else(|| panic!("no site {function} in {:#?}", sites.sites))
}

// One test: the site table is process-wide, so anything else running in this process
// (another test) would be captured too.
#[test]
fn a_known_pattern_is_counted_at_its_call_sites() {
    CountingAlloc::enable();
    sites::enable();
    let mut blocks = Vec::with_capacity(400);
    let mut strings = Vec::with_capacity(10);
    sites::begin();
    let (a0, _) = allocations().expect("counting is on");
    small_blocks(&mut blocks, 100);
    big_strings(&mut strings, 10);
    let (a1, _) = allocations().unwrap();
    let counts = sites::end().expect("capturing");
    // Over 10 "operations".
    let view = sites::resolve(&counts, 10);
    let small = site(&view, "small_blocks");
    assert_eq!((small.allocs_per_op, small.bytes_per_op), (10.0, 480.0));
    assert_eq!(small.owner, "alloc_sites", "this test's crate: {small:?}");
    assert!(
        small.callers[0].ends_with("a_known_pattern_is_counted_at_its_call_sites"),
        "{small:?}"
    );
    // `repeat` is the standard library's: the site is the function that called it.
    let big = site(&view, "big_strings");
    assert_eq!((big.allocs_per_op, big.bytes_per_op), (1.0, 1000.0));
    assert!(
        view.sites.iter().all(|s| !s.function.starts_with("alloc::")
            && !s.function.contains("CountingAlloc")
            && !s.function.starts_with("backtrace::")),
        "{:#?}",
        view.sites
    );
    // The counter and the table agree: what the table allocated for itself is in neither.
    assert_eq!(counts.total().allocations, a1 - a0);
    assert_eq!(view.allocs_per_op, (a1 - a0) as f64 / 10.0);
    let mine = view
        .owners
        .iter()
        .find(|o| o.owner == "alloc_sites")
        .unwrap();
    assert_eq!(mine.allocs_per_op, 11.0);

    // Four threads at once, each its 100 blocks: 400 at the one site.
    sites::begin();
    let threads: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                let mut mine = Vec::with_capacity(100);
                small_blocks(&mut mine, 100);
                mine.len()
            })
        })
        .collect();
    let made: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(made, 400);
    let view = sites::resolve(&sites::end().unwrap(), 1);
    let small = site(&view, "small_blocks");
    assert_eq!(
        (small.allocs_per_op, small.bytes_per_op),
        (400.0, 400.0 * 48.0)
    );
    sites::disable();
    sites::begin();
    assert!(sites::end().is_none(), "nothing is captured once off");
}
