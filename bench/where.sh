#!/usr/bin/env bash
# Where the client's instructions per search go (not in CI): the classic suite at tiny size
# with 2 and then 12 searches per record under valgrind's callgrind, as bench/instructions.sh
# counts them; each function's own instructions in the searching thread differ by the 10,000
# searches between the two runs, and their differences, grouped by whose code it is, are
# printed per search: the driver, the async runtime, the allocator, the answer's check
# (decoding the record and comparing its digest), the measurement (clocks, histograms,
# allocation counting), the phase's own loop, and the rest. Work that follows the clock
# rather than the searches (the time series at the phase's end) is inflated by callgrind's
# slowdown and shown apart. Instructions in the kernel (system calls, wake-ups) are not
# counted by callgrind: `strace -c` gives those per query.
#   bench/where.sh STORE [BUILD]      # STORE: sqlite, postgres, mysql or redis
# BUILD is a dbcompare binary (a path from the repository's root; this checkout's release
# build by default); TOP (3) functions
# are shown per group. A server is started with `dbcompare server STORE`, unless URL is given.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bench/where.sh STORE [BUILD]" >&2; exit 2; }
store=$1
bin=${2:-./target/release/dbcompare}
[ $# -ge 2 ] || cargo build --release --locked --quiet
# shellcheck source=bench/servers.sh
source bench/servers.sh
tools valgrind
use_server "$store"

profile() { # $1 = searches per record: the busiest thread's functions, own instructions each
  callgrind_search "$bin" "$store" "$url" "$1"
  local busiest
  busiest=$(grep -H '^totals:' "$work"/cg/out.* | sort -t' ' -k2 -n | tail -1 | cut -d: -f1)
  callgrind_annotate --inclusive=no --threshold=100 "$busiest" > "$work/profile-$1"
}
profile 2
profile 12

python3 - "$work/profile-2" "$work/profile-12" "$store" <<'PY'
import collections, re, sys
def own(path):
    costs = collections.Counter()
    for line in open(path):
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(.*)$", line)
        if m and ":" in m.group(2):
            costs[m.group(2).split(":", 1)[1].strip()] += int(m.group(1).replace(",", ""))
    return costs
low, high = own(sys.argv[1]), own(sys.argv[2])
store = sys.argv[3]
# Whose code a function is, by the first rule its name matches.
owners = [
    # Work that follows the clock, not the searches (the time series' intervals merged and
    # read at the phase's end): callgrind's slowdown, about 50x, inflates it here.
    ("time series (inflated)", r"value_at_quantile|series::Interval::add|series::Series::(coarsen|figures|add)"),
    ("answer's check", r"dbcompare::store::\w+::decode|dbcompare::workload::record|dbcompare::suite::classic::phases::check|serde_json|bincode|foldhash|digest"),
    # PostgreSQL's and Redis's connections are dbcompare's own (store::conn and each store's
    # wire code); with whole-program optimisation much of them is inlined into the store's
    # `find`, which counts as the phase's loop.
    ("driver", r"^<?(mysql_async|mysql_common|redis|redis_protocol|rusqlite|libsqlite3_sys|tokio_postgres|postgres_protocol|bytes)\b|dbcompare::store::(conn|postgres::wire|redis::(resp2|direct|conn))"),
    # C functions in dbcompare's own binary: SQLite's (mimalloc's are named mi_ and caught below).
    ("driver", r"^(?!mi_|_mi_|__rust_|__rg_|__rdl_)[A-Za-z_][A-Za-z0-9_]* \[(?!/usr/lib)"),
    ("async runtime", r"^<?(tokio|futures|mio)\b|^epoll|^__libc_(recv|send)|^(recv|send)"),
    ("allocator", r"^_?mi_|^mi_|^<?mimalloc"),
    ("allocation counting", r"dbcompare::measure::alloc"),
    ("measurement", r"dbcompare::measure|hdrhistogram|clock_gettime|std::time|Instant|Timespec"),
    ("phase's loop", r"dbcompare::suite|dbcompare::store"),
]
groups = collections.Counter()
tops = collections.defaultdict(collections.Counter)
for fn in set(low) | set(high):
    # tiny is 1,000 records: 12 searches a record against 2 is 10,000 searches more.
    diff = (high[fn] - low[fn]) / 10000
    owner = next((o for o, rule in owners if re.search(rule, fn)), "other (libc, std, serde, ...)")
    groups[owner] += diff
    tops[owner][fn] += diff
# The clock-driven group is shown, and left out of the total and the shares.
inflated = "time series (inflated)"
total = sum(n for owner, n in groups.items() if owner != inflated)
print(f"{store}: the client's instructions per search by whose code they are (callgrind)")
for owner, n in groups.most_common():
    share = "(apart)" if owner == inflated else f"{n / total:6.1%}"
    print(f"{owner:32} {n:>8,.0f}  {share}")
    for fn, m in tops[owner].most_common(int(__import__("os").environ.get("TOP", "3"))):
        if m >= 50:
            name = re.sub(r" \[.*$", "", fn)[:100]
            print(f"    {m:>8,.0f}  {name}")
print(f"{'all':32} {total:>8,.0f}")
PY
