//! The counting allocator: every allocation (and its bytes) of every thread, counted in a
//! slot of the thread's own, so that allocs/op and B/op can be reported per phase.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Allocation counters of one thread: written by that thread alone (a load and a store, no
/// locked instruction), read by anyone. A cache line each, so threads never share one.
#[repr(align(64))]
struct Counters {
    allocations: AtomicU64,
    bytes: AtomicU64,
}

impl Counters {
    const fn new() -> Self {
        Counters {
            allocations: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        }
    }
}

/// One slot per thread that ever allocated while counting (a slot outlives its thread, so
/// nothing counted is lost); threads beyond them share [`SHARED`].
const SLOTS: usize = 1024;
static PER_THREAD: [Counters; SLOTS] = [const { Counters::new() }; SLOTS];
static SLOTS_TAKEN: AtomicUsize = AtomicUsize::new(0);
/// Counters of the threads beyond [`SLOTS`], updated with atomic additions.
static SHARED: Counters = Counters::new();

thread_local! {
    /// This thread's slot, taken on its first counted allocation. Const-initialised and
    /// without a destructor, so the allocator can use it at any point of a thread's life.
    static SLOT: Cell<usize> = const { Cell::new(usize::MAX) };
    /// Set while this thread does the tool's own bookkeeping ([`uncounted`]): its
    /// allocations are then neither counted nor captured.
    static UNCOUNTED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with the calling thread's allocations left out of the counts (and of
/// `--alloc-sites`): for the tool's own recording (latency histograms, time series, the
/// site table itself), which is not the client's cost of an operation. Nests.
pub fn uncounted<T>(f: impl FnOnce() -> T) -> T {
    /// Puts the thread's flag back, also when `f` panics.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            UNCOUNTED.with(|u| u.set(self.0));
        }
    }
    let _restore = Restore(UNCOUNTED.with(|u| u.replace(true)));
    f()
}
static COUNTING: AtomicBool = AtomicBool::new(false);

/// The client's allocator, mimalloc, counting every allocation (and its bytes) of every
/// thread once [`CountingAlloc::enable`] was called. The binary installs it as the global
/// allocator; a reallocation counts as one allocation of its new size, as Go's allocs/op
/// does. mimalloc rather than the C library's: the drivers allocate per row and per value,
/// and with glibc's malloc the client spent about 40% of a Large Result Set's CPU in
/// malloc and free (mimalloc cut its client CPU by about a quarter).
pub struct CountingAlloc;

impl CountingAlloc {
    /// Starts counting (the binary calls this unless `DBCOMPARE_ALLOC_COUNTING=off`).
    pub fn enable() {
        COUNTING.store(true, Ordering::Relaxed);
    }

    /// Stops counting (`allocations()` is then `None`); used to measure what counting costs.
    pub fn disable() {
        COUNTING.store(false, Ordering::Relaxed);
    }

    #[inline]
    fn count(bytes: usize) {
        if !COUNTING.load(Ordering::Relaxed) {
            return;
        }
        if UNCOUNTED.with(Cell::get) {
            return;
        }
        let slot = SLOT.with(|slot| {
            if slot.get() == usize::MAX {
                slot.set(SLOTS_TAKEN.fetch_add(1, Ordering::Relaxed));
            }
            slot.get()
        });
        match PER_THREAD.get(slot) {
            // Only this thread writes its slot: a plain read-modify-write is exact.
            Some(mine) => {
                let add = |c: &AtomicU64, n: u64| {
                    c.store(c.load(Ordering::Relaxed) + n, Ordering::Relaxed)
                };
                add(&mine.allocations, 1);
                add(&mine.bytes, bytes as u64);
            }
            None => {
                SHARED.allocations.fetch_add(1, Ordering::Relaxed);
                SHARED.bytes.fetch_add(bytes as u64, Ordering::Relaxed);
            }
        }
        if super::sites::capturing() {
            uncounted(|| super::sites::record(bytes));
        }
    }
}

// SAFETY: every call is forwarded unchanged to mimalloc.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::count(layout.size());
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { mimalloc::MiMalloc.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::count(layout.size());
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::count(new_size);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }
}

/// Allocations and allocated bytes so far, or `None` when nothing counts them (the library
/// used without the counting allocator, or counting turned off).
pub fn allocations() -> Option<(u64, u64)> {
    COUNTING.load(Ordering::Relaxed).then(|| {
        let taken = SLOTS_TAKEN.load(Ordering::Relaxed).min(SLOTS);
        PER_THREAD[..taken]
            .iter()
            .chain(std::iter::once(&SHARED))
            .fold((0, 0), |(a, b), c| {
                (
                    a + c.allocations.load(Ordering::Relaxed),
                    b + c.bytes.load(Ordering::Relaxed),
                )
            })
    })
}
