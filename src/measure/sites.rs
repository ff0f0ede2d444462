//! Where the client's allocations come from (`--alloc-sites`): the counting allocator takes
//! the call stack of every allocation it counts and tallies allocations and bytes per
//! stack; [`resolve`] then names each stack by its first frame outside the allocator and
//! the standard library (the call site) and the crate that frame belongs to (whose code it
//! is), per operation.
//!
//! Taking a stack costs microseconds, so a run with sites captured is slow: its allocation
//! counts are exact, its times are not for publishing. What the table allocates for itself
//! is neither counted nor captured (the allocator records inside its `uncounted` scope).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::report::model::{AllocOwner, AllocSite, AllocSites};

/// Frames kept of each stack: enough to pass the allocator's and the standard library's
/// frames and reach the call site and a few of its callers.
const DEPTH: usize = 40;
/// Callers shown beside each site's function.
const CALLERS: usize = 3;
/// Sites kept per phase, the most allocating first.
pub const TOP: usize = 12;
/// Sites kept besides those for their bytes: a site of few, large allocations (a buffer
/// per query) would otherwise fall off a table ranked by count.
pub const TOP_BY_BYTES: usize = 4;

/// Return addresses of one stack, innermost first, zero-padded.
type Stack = [usize; DEPTH];

/// Allocations and bytes counted at one stack.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    pub allocations: u64,
    pub bytes: u64,
}

/// Tallies by stack of one measured phase, from [`begin`] to [`end`].
#[derive(Debug, Clone, Default)]
pub struct Counts(HashMap<Stack, Tally>);

impl Counts {
    /// Adds another period's tallies (the measured runs of one phase).
    pub fn add(&mut self, other: &Counts) {
        for (stack, t) in &other.0 {
            let mine = self.0.entry(*stack).or_default();
            mine.allocations += t.allocations;
            mine.bytes += t.bytes;
        }
    }

    /// The total over every stack.
    pub fn total(&self) -> Tally {
        self.0.values().fold(Tally::default(), |a, t| Tally {
            allocations: a.allocations + t.allocations,
            bytes: a.bytes + t.bytes,
        })
    }
}

/// `--alloc-sites` was given: every measured phase captures.
static REQUESTED: AtomicBool = AtomicBool::new(false);
/// A phase is capturing now (between [`begin`] and [`end`]).
static CAPTURING: AtomicBool = AtomicBool::new(false);
static TABLE: Mutex<Option<HashMap<Stack, Tally>>> = Mutex::new(None);

/// Asks every measured phase from now on to capture the stack of every counted allocation
/// (`--alloc-sites`).
pub fn enable() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// Stops capturing, now and in later phases.
pub fn disable() {
    REQUESTED.store(false, Ordering::Relaxed);
    CAPTURING.store(false, Ordering::Relaxed);
}

/// A measured phase starts: when asked for, capturing begins on an empty table.
pub fn begin() {
    if REQUESTED.load(Ordering::Relaxed) {
        // Dropping the last table frees, which allocates nothing.
        *TABLE.lock().unwrap_or_else(|e| e.into_inner()) = None;
        CAPTURING.store(true, Ordering::Relaxed);
    }
}

/// The measured phase ends: capturing stops, and its tallies are returned (`None` when it
/// did not capture). What the report does afterwards is not captured.
pub fn end() -> Option<Counts> {
    if !CAPTURING.swap(false, Ordering::Relaxed) {
        return None;
    }
    // Capturing is off already, and taking the table moves it: nothing is allocated.
    let taken = TABLE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .unwrap_or_default();
    Some(Counts(taken))
}

/// Whether stacks are being captured.
#[inline]
pub fn capturing() -> bool {
    CAPTURING.load(Ordering::Relaxed)
}

/// Tallies one allocation of `bytes` at the caller's stack. Called by the allocator for
/// every allocation it counts while capturing, inside `uncounted`.
#[cold]
#[inline(never)]
pub(super) fn record(bytes: usize) {
    let mut stack: Stack = [0; DEPTH];
    let mut n = 0;
    // SAFETY: the unsynchronised walk is thread-safe with the unwinder of the platforms
    // this runs on (its lock is for Windows' dbghelp); the synchronised one would take a
    // process-wide lock at every allocation, serialising every thread and able to
    // deadlock against the dynamic loader's lock.
    unsafe {
        backtrace::trace_unsynchronized(|frame| {
            stack[n] = frame.ip() as usize;
            n += 1;
            n < DEPTH
        });
    }
    let mut table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    let t = table
        .get_or_insert_with(HashMap::new)
        .entry(stack)
        .or_default();
    t.allocations += 1;
    t.bytes += bytes as u64;
}

/// Names every stack of `counts` by its call site and owner, and gives the `TOP` sites and
/// every owner per operation over `ops` operations.
pub fn resolve(counts: &Counts, ops: u64) -> AllocSites {
    let mut names: HashMap<usize, Vec<String>> = HashMap::new();
    let mut by_site: HashMap<(String, Vec<String>), Tally> = HashMap::new();
    for (stack, t) in &counts.0 {
        let mut frames = Vec::new();
        for &ip in stack.iter().take_while(|&&ip| ip != 0) {
            frames.extend(
                names
                    .entry(ip)
                    .or_insert_with(|| symbols(ip))
                    .iter()
                    .cloned(),
            );
        }
        let (site, callers) = call_site(&frames);
        let s = by_site.entry((site, callers)).or_default();
        s.allocations += t.allocations;
        s.bytes += t.bytes;
    }
    let per_op = |n: u64| if ops == 0 { 0.0 } else { n as f64 / ops as f64 };
    let mut owners: HashMap<String, Tally> = HashMap::new();
    for ((site, _), t) in &by_site {
        let o = owners.entry(owner(site)).or_default();
        o.allocations += t.allocations;
        o.bytes += t.bytes;
    }
    let most_first = |a: &Tally, b: &Tally| (b.allocations, b.bytes).cmp(&(a.allocations, a.bytes));
    let mut owners: Vec<(String, Tally)> = owners.into_iter().collect();
    owners.sort_by(|a, b| most_first(&a.1, &b.1).then_with(|| a.0.cmp(&b.0)));
    let sites = most_allocating(by_site.into_iter().collect());
    let total = counts.total();
    AllocSites {
        ops,
        allocs_per_op: per_op(total.allocations),
        bytes_per_op: per_op(total.bytes),
        owners: owners
            .into_iter()
            .map(|(owner, t)| AllocOwner {
                owner,
                allocs_per_op: per_op(t.allocations),
                bytes_per_op: per_op(t.bytes),
            })
            .collect(),
        sites: sites
            .into_iter()
            .map(|((function, callers), t)| AllocSite {
                owner: owner(&function),
                function,
                callers,
                allocs_per_op: per_op(t.allocations),
                bytes_per_op: per_op(t.bytes),
            })
            .collect(),
    }
}

/// The `TOP` sites by allocations, and the `TOP_BY_BYTES` by bytes among the others (a
/// site of few large allocations is worth seeing too), most allocations first.
fn most_allocating<K: Ord>(mut sites: Vec<(K, Tally)>) -> Vec<(K, Tally)> {
    let most_first = |a: &(K, Tally), b: &(K, Tally)| {
        (b.1.allocations, b.1.bytes)
            .cmp(&(a.1.allocations, a.1.bytes))
            .then_with(|| a.0.cmp(&b.0))
    };
    sites.sort_by(most_first);
    let mut rest = sites.split_off(TOP.min(sites.len()));
    rest.sort_by(|a, b| b.1.bytes.cmp(&a.1.bytes).then_with(|| a.0.cmp(&b.0)));
    rest.truncate(TOP_BY_BYTES);
    sites.extend(rest.into_iter().filter(|(_, t)| t.bytes > 0));
    sites.sort_by(most_first);
    sites
}

/// The function names at a return address, innermost (inlined) first, without hashes.
fn symbols(ip: usize) -> Vec<String> {
    let mut names = Vec::new();
    // A return address points after its call; one byte back is inside it.
    backtrace::resolve(ip.saturating_sub(1) as *mut std::ffi::c_void, |symbol| {
        if let Some(name) = symbol.name() {
            names.push(format!("{name:#}"));
        }
    });
    if names.is_empty() {
        names.push(format!("{ip:#x}"));
    }
    names
}

/// The call site of a stack (innermost first): its first frame outside the allocator, the
/// unwinder and the standard library, with up to [`CALLERS`] of the frames that called it.
fn call_site(frames: &[String]) -> (String, Vec<String>) {
    let mut outside = frames.iter().filter(|f| !is_plumbing(f));
    match outside.next() {
        Some(site) => (site.clone(), outside.take(CALLERS).cloned().collect()),
        // The standard library's own (a thread's start, the runtime): its innermost
        // function.
        None => (
            frames
                .iter()
                .find(|f| !is_capture(f) && f.contains("::"))
                .cloned()
                .unwrap_or_else(|| UNKNOWN.to_string()),
            Vec::new(),
        ),
    }
}

/// The owner and site of what could not be named (no symbol at the address).
const UNKNOWN: &str = "(unknown)";

/// Frames of the capture itself: this module, the counting allocator, the unwinder.
fn is_capture(frame: &str) -> bool {
    frame.contains("dbcompare::measure::sites::")
        || frame.contains("dbcompare::measure::alloc::")
        || frame.starts_with("backtrace::")
        || frame.starts_with("__rust")
        || frame.starts_with("__rdl")
        || frame.starts_with("__rg_")
        || frame.starts_with("_Unwind")
        || frame.starts_with("mi_")
        || frame.starts_with("_mi_")
}

/// Frames that allocate on a caller's behalf (the capture, the standard library's and the
/// common container crates' containers, formatting, a future's box): the call site is the
/// first frame after them.
fn is_plumbing(frame: &str) -> bool {
    is_capture(frame)
        // C frames (`start_thread`, `clone3`, `main`), addresses without a symbol, and
        // inlined functions named without their path (line tables alone do that).
        || !has_path(frame)
        // `.boxed()` is a `Box::pin`: the site is the function that boxed its future.
        || frame.starts_with("futures_util::future::future::FutureExt::boxed")
        || frame.starts_with("futures_util::stream::stream::StreamExt::boxed")
        || matches!(
            owner(frame).as_str(),
            "std"
                | "core"
                | "alloc"
                | "hashbrown"
                | "indexmap"
                | "bytes"
                | "smallvec"
                | "mimalloc"
        )
}

/// Whether a function's name has its path (`a::b::f`, `<T as a::Trait>::f`), not only
/// its own name (`f`, `f<a::B>`).
fn has_path(function: &str) -> bool {
    function.starts_with('<') || function.split('<').next().is_some_and(|n| n.contains("::"))
}

/// The crate a function belongs to: the first path segment of its name, or of its self
/// type in `<Type as Trait>::method` (so a crate's impl of `Clone` is the crate's).
pub fn owner(function: &str) -> String {
    // `<(A, B) as Trait>` and `<T as Trait>`: a tuple's or a type parameter's, in a blanket
    // impl of the standard library's.
    if let Some(self_type) = function
        .strip_prefix('<')
        .and_then(|rest| rest.split_once(" as "))
        .map(|(t, _)| t)
        && (self_type.starts_with('(') || !self_type.contains("::"))
    {
        return "core".to_string();
    }
    if !has_path(function) {
        return UNKNOWN.to_string();
    }
    let mut name = function;
    loop {
        let trimmed = name
            .trim_start_matches(['<', '&', '*', '(', '[', ' '])
            .trim_start_matches("mut ")
            .trim_start_matches("const ")
            .trim_start_matches("dyn ");
        if trimmed == name {
            break;
        }
        name = trimmed;
    }
    let end = name
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(name.len());
    match &name[..end] {
        "" => UNKNOWN.to_string(),
        // A primitive's or a blanket impl's method (`<[u8]>::to_vec`, `<T as ToString>`).
        "bool" | "char" | "str" | "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8"
        | "i16" | "i32" | "i64" | "i128" | "isize" | "f32" | "f64" | "T" => "core".to_string(),
        _ if function.starts_with("<[") => "core".to_string(),
        first => first.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_of_few_large_allocations_is_kept_beside_the_most_allocating() {
        let tally = |allocations, bytes| Tally { allocations, bytes };
        // TOP sites of 100 allocations of 10 bytes, then small sites, one of them a single
        // allocation of 64 kB and one of nothing but counts.
        let mut sites: Vec<(String, Tally)> = (0..TOP)
            .map(|i| (format!("many{i:02}"), tally(100, 1_000)))
            .collect();
        sites.push(("buffer".into(), tally(1, 65_536)));
        sites.extend((0..10).map(|i| (format!("few{i}"), tally(2, 20 + i))));
        let kept = most_allocating(sites);
        let names: Vec<&str> = kept.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(kept.len(), TOP + TOP_BY_BYTES);
        assert!(
            names[..TOP].iter().all(|n| n.starts_with("many")),
            "{names:?}"
        );
        // By count: the three kept for their bytes among the few, then the buffer.
        assert_eq!(&names[TOP..], ["few9", "few8", "few7", "buffer"]);
        // Fewer sites than the table holds: every one kept, once.
        let small = most_allocating(vec![
            ("a".to_string(), tally(1, 0)),
            ("b".into(), tally(3, 9)),
        ]);
        assert_eq!(
            small,
            vec![("b".to_string(), tally(3, 9)), ("a".into(), tally(1, 0))]
        );
    }

    #[test]
    fn the_owner_is_the_first_segment_or_the_self_type() {
        assert_eq!(owner("mysql_async::conn::Conn::read_packet"), "mysql_async");
        assert_eq!(
            owner("<mysql_common::value::Value as core::clone::Clone>::clone"),
            "mysql_common"
        );
        assert_eq!(
            owner("<alloc::vec::Vec<T> as core::clone::Clone>::clone"),
            "alloc"
        );
        assert_eq!(
            owner("<&mut tokio::io::Foo as core::ops::Drop>::drop"),
            "tokio"
        );
        assert_eq!(
            owner("<[u8] as alloc::slice::hack::ConvertVec>::to_vec"),
            "core"
        );
        assert_eq!(owner("<T as alloc::string::ToString>::to_string"), "core");
        assert_eq!(
            owner("<[mysql_common::value::Value] as core::fmt::Debug>::fmt"),
            "core"
        );
        assert_eq!(owner("0x55d0c0ffee"), "(unknown)");
        assert_eq!(owner("start_thread"), "(unknown)");
        assert_eq!(owner("try_allocate_in<alloc::alloc::Global>"), "(unknown)");
        assert_eq!(
            owner("<&mut &tokio::sync::Notify as core::ops::Drop>::drop"),
            "tokio"
        );
        assert_eq!(
            owner("<(ExA,ExB) as core::iter::traits::collect::Extend<(A,B)>>::extend_reserve"),
            "core"
        );
        assert_eq!(
            owner("<ExtendT as core::iter::traits::collect::SpecExtend<I>>::extend"),
            "core"
        );
        assert_eq!(owner("<str as alloc::borrow::ToOwned>::to_owned"), "core");
    }

    #[test]
    fn the_call_site_is_the_first_frame_past_the_plumbing() {
        let frames: Vec<String> = [
            "backtrace::backtrace::trace",
            "dbcompare::measure::sites::record",
            "<dbcompare::measure::alloc::CountingAlloc as core::alloc::global::GlobalAlloc>::alloc",
            "__rustc::__rust_alloc",
            "alloc::raw_vec::RawVec<T,A>::grow_one",
            "<alloc::string::String as core::fmt::Write>::write_str",
            "core::fmt::write",
            "alloc::fmt::format::format_inner",
            "dbcompare::store::mysql::MysqlStore::find",
            "<core::pin::Pin<P> as core::future::future::Future>::poll",
            "dbcompare::suite::classic::phases::search",
            "tokio::runtime::task::harness::poll_future",
            "tokio::runtime::task::raw::poll",
        ]
        .map(String::from)
        .into();
        let (site, callers) = call_site(&frames);
        assert_eq!(site, "dbcompare::store::mysql::MysqlStore::find");
        assert_eq!(
            callers,
            [
                "dbcompare::suite::classic::phases::search",
                "tokio::runtime::task::harness::poll_future",
                "tokio::runtime::task::raw::poll"
            ]
        );
        let only_std: Vec<String> = [
            "dbcompare::measure::sites::record",
            "std::thread::Builder::spawn_unchecked",
            "std::rt::lang_start",
            "main",
        ]
        .map(String::from)
        .into();
        assert_eq!(
            call_site(&only_std).0,
            "std::thread::Builder::spawn_unchecked"
        );
        let unnamed: Vec<String> = [
            "0x1234",
            "finish_grow<alloc::alloc::Global>",
            "dbcompare::suite::driver::run_test",
        ]
        .map(String::from)
        .into();
        assert_eq!(call_site(&unnamed).0, "dbcompare::suite::driver::run_test");
    }

    #[test]
    fn counts_add_up_per_stack() {
        let mut a = Counts::default();
        let mut stack = [0; DEPTH];
        stack[0] = 1;
        a.0.insert(
            stack,
            Tally {
                allocations: 2,
                bytes: 10,
            },
        );
        let mut b = a.clone();
        stack[0] = 2;
        b.0.insert(
            stack,
            Tally {
                allocations: 1,
                bytes: 5,
            },
        );
        a.add(&b);
        assert_eq!(a.0.len(), 2);
        assert_eq!(
            a.total(),
            Tally {
                allocations: 5,
                bytes: 25
            }
        );
    }
}
