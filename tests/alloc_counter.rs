//! The counting allocator counts a known allocation pattern exactly.

use dbcompare::measure::{CountingAlloc, allocations, uncounted};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

// One test: the counter is process-wide, so anything else running in this process (another
// test, or the harness reporting one) would be counted too.
#[test]
fn counts_known_patterns_exactly() {
    one_thread();
    every_thread();
    the_tools_own_recording_is_left_out();
}

/// What runs inside `uncounted` (the tool's histograms and series) is not counted, also
/// nested and after a panic inside it; what follows it is again.
fn the_tools_own_recording_is_left_out() {
    CountingAlloc::enable();
    let (a0, _) = allocations().unwrap();
    let kept = uncounted(|| {
        let inner = uncounted(|| Box::new([1u8; 64]));
        (inner, Box::new([2u8; 64]))
    });
    let (a1, _) = allocations().unwrap();
    assert_eq!(a1, a0, "nothing counted inside");
    let caught = std::panic::catch_unwind(|| uncounted(|| panic!("inside")));
    assert!(caught.is_err());
    let (a2, b2) = allocations().unwrap();
    let after = std::hint::black_box(Box::new([3u8; 100]));
    let (a3, b3) = allocations().unwrap();
    assert_eq!(
        (a3 - a2, b3 - b2),
        (1, 100),
        "counted again, even after a panic"
    );
    drop((kept, after));
}

fn one_thread() {
    CountingAlloc::enable();
    let (a0, b0) = allocations().expect("counting is on");
    let boxes: Vec<Box<[u8; 100]>> = (0..10).map(|_| Box::new([0u8; 100])).collect();
    let (a1, b1) = allocations().unwrap();
    // Ten boxes of 100 bytes, and the Vec holding them: exactly 10 pointers, one allocation
    // (the iterator's exact size hint sizes it at once).
    assert_eq!(a1 - a0, 11);
    assert_eq!(b1 - b0, 10 * 100 + 10 * std::mem::size_of::<usize>() as u64);
    drop(boxes);
    let (a2, b2) = allocations().unwrap();
    assert_eq!((a2, b2), (a1, b1), "freeing is not allocating");

    let mut v: Vec<u64> = Vec::with_capacity(4);
    let (a3, b3) = allocations().unwrap();
    assert_eq!((a3 - a2, b3 - b2), (1, 32));
    v.reserve_exact(12);
    let (a4, b4) = allocations().unwrap();
    // Room for len (0) + 12 more: 96 bytes.
    assert_eq!(
        (a4 - a3, b4 - b3),
        (1, 96),
        "a reallocation counts once, at its new size"
    );
    drop(v);
}

/// Allocations of other threads, new ones included, are counted as exactly.
fn every_thread() {
    use std::sync::{Arc, Barrier};

    CountingAlloc::enable();
    const THREADS: usize = 4;
    const BOXES: usize = 1000;
    // What spawning allocates is done once every thread is ready, what joining allocates
    // comes after they are done: between the two readings only their boxes are allocated.
    let ready = Arc::new(Barrier::new(THREADS + 1));
    let go = Arc::new(Barrier::new(THREADS + 1));
    let done = Arc::new(Barrier::new(THREADS + 1));
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let (ready, go, done) = (ready.clone(), go.clone(), done.clone());
            std::thread::spawn(move || {
                ready.wait();
                go.wait();
                for i in 0..BOXES {
                    std::hint::black_box(Box::new([i as u8; 48]));
                }
                done.wait();
            })
        })
        .collect();
    ready.wait();
    let (a0, b0) = allocations().unwrap();
    go.wait();
    done.wait();
    let (a1, b1) = allocations().unwrap();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(a1 - a0, (THREADS * BOXES) as u64);
    assert_eq!(b1 - b0, (THREADS * BOXES * 48) as u64);
}
