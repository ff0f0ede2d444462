#!/usr/bin/env bash
# dbcompare beside the native tools, on the same throw-away servers in one run (not in CI).
# Prints the ratio of dbcompare's throughput to each tool's at equal concurrency:
#   Redis GET            vs redis-benchmark -t get -P 1 (100-byte values, --threads as below)
#   PostgreSQL point select (prepared) vs pgbench -S -M prepared (scale 10, -j as below)
#   MySQL point select (prepared)      vs sysbench oltp_point_select (100,000 rows)
#   and both again with the tool running dbcompare's own query on dbcompare's table
#   (bench/same_query.pgbench, bench/same_query.lua): the same server work on both sides,
#   so the ratio is the clients' difference alone; and MySQL's same query once more at
#   concurrency 8 with an event loop per connection, as sysbench has a thread per connection
#   pool suite Large Result Set and Connection Pool vs asyncmy, same queries, same table (the
#   Large Result Set on its query's own time, as asyncmy's is timed)
# dbcompare's side is its classic SEARCH small phase (a prepared point lookup by a unique
# index, every record decoded and checked): a heavier query than the tools' built-in ones
# (a wider row with a JSON document, a text key), hence the same-query rows.
# A second table gives each side's client CPU per operation (dbcompare's cpu_us_per_op; the
# tool's user + system time from /usr/bin/time over its operations): steadier than
# throughput on a shared machine, and what a client's own overhead is; a third the server's
# CPU per operation (dbcompare's from run.json; the tool's read from /proc around its run),
# with no target: whose CPU a rate that falls short went to. The last line names
# the targets met and missed (docs/performance.md): 0.95 of the tool's rate and client CPU
# on the same query at concurrency 1 and 8, asyncmy's time 1.2x on the Large Result Set and
# ahead on the Connection Pool, judged on the medians of the per-repetition ratios.
# Installs what it needs: sysbench and time (Debian), asyncmy (PyPI, in .tools/venv).
# Settings: RUNS (alternated repetitions, 5), SECONDS_PER_RUN (pgbench and sysbench, 5),
# CLIENT_THREADS (dbcompare's --client-threads; unset: its default, a loop per core up to the
# concurrency for PostgreSQL and MySQL, one loop for Redis), STORES (which rows, a
# space-separated list of redis, postgres, mysql and pool; all by default), BIN (a dbcompare
# binary to measure instead of this checkout's release build; a path from the repository's
# root), RECORD (a CSV file, also from the repository's root, to which each row's
# per-repetition ratios are appended, for bench/peers-pool.py to judge several runs together).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${SECONDS_PER_RUN:-5}
runs=${RUNS:-5}
client_threads=${CLIENT_THREADS:-}
cores=$(nproc)
stores=${STORES:-redis postgres mysql pool}
for what in $stores; do
  case $what in redis|postgres|mysql|pool) ;; *) echo "STORES: unknown $what" >&2; exit 2 ;; esac
done

# shellcheck source=bench/servers.sh
source bench/servers.sh
provisioning/install.sh postgres mysql redis
tools sysbench time
if [ ! -x .tools/venv/bin/python ]; then
  python3 -m venv .tools/venv
  .tools/venv/bin/pip install -q asyncmy
fi
bin=${BIN:-./target/release/dbcompare}
[ -n "${BIN:-}" ] || cargo build --release --locked --quiet
pgbin=$(dirname "$(find /usr/lib/postgresql -name pgbench -type f | sort -V | tail -n 1)")

start redis
start postgres
start mysql
redis_url=$(cat "$work/redis.url")
pg_url=$(cat "$work/postgres.url")
my_url=$(cat "$work/mysql.url")

# Repetitions alternate dbcompare and the native tools store by store (odd ones dbcompare
# first, even ones the tools first), so a slow spell of a shared machine falls on both sides
# alike; the table gives each side's median and the median (min-max) of the per-repetition
# ratios.
redis_port=${redis_url##*:}; redis_port=${redis_port%%/*}
redis_pw=$(password_of "$redis_url")
PGPASSWORD=$(password_of "$pg_url")
export PGPASSWORD
my_pw=$(password_of "$my_url")
# redis-benchmark's GET reads one key that only its SET test writes: set it once (100 bytes),
# so its GETs return a value as dbcompare's do, not an empty reply.
redis-benchmark -h 127.0.0.1 -p "$redis_port" -a "$redis_pw" -t set -d 100 -n 1 -q > /dev/null
pg_port=${pg_url##*:}; pg_port=${pg_port%%/*}
my_port=${my_url##*:}; my_port=${my_port%%/*}
listener() { # $1 = a TCP port: the outermost process listening on it (a child may share its socket)
  local listed pid
  listed=$(ss -Hltnp "sport = :$1" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u)
  for pid in $listed; do
    grep -qx "$(awk '/^PPid:/ { print $2 }' "/proc/$pid/status")" <<< "$listed" || { echo "$pid"; return; }
  done
  echo "no process listens on port $1" >&2
  exit 1
}
# Each server's process tree, as dbcompare's reader finds it: from the process on its port.
declare -A server_root
server_root[redis]=$(listener "$redis_port")
server_root[postgres]=$(listener "$pg_port")
server_root[mysql]=$(listener "$my_port")
"$pgbin/pgbench" -h 127.0.0.1 -p "$pg_port" -U bench -i -s 10 -q postgres > /dev/null 2>&1
sbconn=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$my_port" --mysql-user=root --mysql-password="$my_pw" --mysql-db=dbcompare)
sb=(sysbench oltp_point_select "${sbconn[@]}" --tables=1 --table-size=100000)
sbsame=(sysbench bench/same_query.lua "${sbconn[@]}")
"${sb[@]}" prepare > /dev/null
# Each tool run leaves in $work/<name>-<concurrency>-<repetition> its rate, in .ops the
# operations it made, in .cpu its user and system seconds and in .server the server's CPU
# ticks over the run (as dbcompare's run.json has the server's CPU per operation).
tree_ticks() { # $1 = a pid: the CPU ticks of it and its descendants (user, system, reaped children's)
  local sum kid
  sum=$(awk '{ sub(/.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0)
  # Each file is a list of pids, a word each.
  # shellcheck disable=SC2013
  for kid in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
    sum=$((sum + $(tree_ticks "$kid")))
  done
  echo "$sum"
}
timed() { # $1 = output file, $2 = the store whose server it runs on, then the command
  local out=$1 root=${server_root[$2]} before
  shift 2
  before=$(tree_ticks "$root")
  /usr/bin/time -f "%U %S" -o "$out.cpu" "$@"
  # A PostgreSQL backend's time reaches its parent's once the client is gone and it is reaped.
  sleep 0.5
  echo $(($(tree_ticks "$root") - before)) > "$out.server"
}
# pgbench and redis-benchmark drive their clients with as many threads as dbcompare has
# event loops (-j for pgbench, --threads for redis-benchmark, each thread an event loop of
# its own, as dbcompare's): CLIENT_THREADS, else dbcompare's default for the store, up to
# the concurrency (the summary checks that each run.json recorded as many); sysbench needs
# a thread per connection.
loops() { # $1 = store, $2 = concurrency
  if [ -n "$client_threads" ]; then
    echo $(($2 < client_threads ? $2 : client_threads))
  else
    default_loops "$1" "$2"
  fi
}
# dbcompare's --client-threads, when CLIENT_THREADS is set.
given_threads=()
[ -n "$client_threads" ] && given_threads=(--client-threads "$client_threads")
pgb() { # $1 = output name, $2 = concurrency, $3 = repetition, then pgbench's script options
  local out="$work/$1-$2-$3" c=$2
  local j
  j=$(loops postgres "$c")
  shift 3
  timed "$out" postgres "$pgbin/pgbench" -h 127.0.0.1 -p "$pg_port" -U bench "$@" -M prepared -c "$c" -j "$j" -T "$seconds" postgres 2>/dev/null \
    | awk -v rate="$out" -v ops="$out.ops" \
        '/^number of transactions actually processed/ { split($NF, n, "/"); print n[1] > ops }
         /^tps/ { print $3 > rate; exit }'
}
rb() { # $1 = concurrency, $2 = repetition
  local out="$work/redis-$1-$2" n=$((100000 * $1)) threads=()
  echo "$n" > "$out.ops"
  # One loop: redis-benchmark's own single-threaded mode (no --threads).
  [ "$(loops redis "$1")" -gt 1 ] && threads=(--threads "$(loops redis "$1")")
  timed "$out" redis redis-benchmark -h 127.0.0.1 -p "$redis_port" -a "$redis_pw" -t get -P 1 -d 100 -c "$1" -n "$n" "${threads[@]}" --csv -q \
    | awk -F'"' -v rate="$out" '/GET/ { print $4 > rate }'
}
sysb() { # $1 = output name, $2 = concurrency, $3 = repetition, then sysbench's command
  local out="$work/$1-$2-$3" c=$2
  shift 3
  timed "$out" mysql "$@" --threads="$c" --time="$seconds" run \
    | awk -v rate="$out" -v ops="$out.ops" '/queries:/ { print $2 > ops; print substr($3, 2) > rate }'
}

# One store at a time, so that no other server's aftermath of dbcompare's inserts
# (checkpoints, page flushing, vacuum) falls on a measurement.
ours() { # $1 = store (or pool), $2 = repetition
  case $1 in
    # Each pool test lasts well under a second: both sides take the median of 5 runs.
    pool) "$bin" run --suite pool --store mysql --url "mysql=$my_url" --warmup-runs 1 --runs 5 \
            --quiet --out "$work/pool-$2" ;;
    *) local url_var="${1}_url"
       [ "$1" = postgres ] && url_var=pg_url
       [ "$1" = mysql ] && url_var=my_url
       # One invocation per concurrency, so that each measured search phase lasts about as
       # long as a tool's run (several seconds): 100,000 searches at concurrency 1, 400,000
       # at 8 (a c8 phase of 100,000 lasted under 2 s, and its ratio moved the most).
       local c spi
       for c in 1 8; do
         spi=$((c == 1 ? 10 : 40))
         "$bin" run --store "$1" --url "$1=${!url_var}" --sizes small --searches-per-insert "$spi" \
           --warmup-runs 1 --runs 1 --concurrency "$c" "${given_threads[@]}" --quiet \
           --out "$work/$1-ours-c$c-$2"
       done
       # sysbench drives each connection from a thread of its own. Once more with
       # sysbench's structure, a loop per connection, so that one row compares the clients
       # alone.
       if [ "$1" = mysql ] && [ "$(loops mysql 8)" -lt 8 ]; then
         "$bin" run --store mysql --url "mysql=$my_url" --sizes small --searches-per-insert 40 \
           --warmup-runs 1 --runs 1 --concurrency 8 --client-threads 8 --quiet \
           --out "$work/mysql-ours-c8t8-$2"
       fi ;;
  esac
}
theirs() { # $1 = store (or pool), $2 = repetition
  for c in 1 8; do
    case $1 in
      redis) rb "$c" "$2" ;;
      postgres) pgb pg "$c" "$2" -S
                pgb pgsq "$c" "$2" -f bench/same_query.pgbench ;;
      mysql) sysb my "$c" "$2" "${sb[@]}"
             sysb mysq "$c" "$2" "${sbsame[@]}" ;;
    esac
  done
  if [ "$1" = pool ]; then
    .tools/venv/bin/python bench/asyncmy_pool.py "$my_url" 5 > "$work/asyncmy-$2.json"
  fi
}
# The VM's steal time, each second of the repetitions (printed under the table's title): on a
# shared machine, what the hypervisor took is part of the spread.
vmstat_pid=
if command -v vmstat > /dev/null; then
  stdbuf -oL vmstat -n 1 > "$work/vmstat" &
  vmstat_pid=$!
  pids+=("$vmstat_pid")
fi
for rep in $(seq 1 "$runs"); do
  echo "repetition $rep of $runs" >&2
  for what in $stores; do
    if [ $((rep % 2)) -eq 1 ]; then ours "$what" "$rep"; theirs "$what" "$rep"
    else theirs "$what" "$rep"; ours "$what" "$rep"; fi
  done
done
[ -z "$vmstat_pid" ] || kill "$vmstat_pid"

python3 - "$work" "$runs" "$client_threads" "$stores" "$cores" "${RECORD:-}" <<'PY'
import csv, json, os, statistics, sys
work, runs, threads, stores, cores, record = (sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split(),
                                              int(sys.argv[5]), sys.argv[6])
def threads_of(store, c):
    most = int(threads) if threads else (1 if store == "redis" else cores)
    return min(c, most)
reps = range(1, runs + 1)
def load(path):
    return json.load(open(path))
def search(rep, store, c, figure="ops_per_s", loops=""):
    s = load(f"{work}/{store}-ours-c{c}{loops}-{rep}/run.json")["stores"][0]
    assert s["status"] == "ok", s.get("error")
    # The tools were given as many threads as dbcompare's default gives the store.
    assert loops or s.get("client_threads") == threads_of(store, c), (store, c, s.get("client_threads"))
    return next(p for p in s["phases"] if p["kind"] == "search" and p["concurrency"] == c)[figure]
def number(path):
    return float(open(path).read().split()[0])
def native(name, c, rep):
    return number(f"{work}/{name}-{c}-{rep}")
def native_cpu(name, c, rep):
    # Microseconds of the tool's user + system time per operation.
    base = f"{work}/{name}-{c}-{rep}"
    user, system = (float(v) for v in open(base + ".cpu").read().split()[-2:])
    return (user + system) / number(base + ".ops") * 1e6
def native_server(name, c, rep):
    # Microseconds of the server's CPU per operation over the tool's run.
    base = f"{work}/{name}-{c}-{rep}"
    return number(base + ".server") / os.sysconf("SC_CLK_TCK") / number(base + ".ops") * 1e6
def server_cpu(rep, store, c):
    # dbcompare's: the server's user + system time per operation over the phase.
    cost = search(rep, store, c, "server")
    return cost["cpu_user_us_per_op"] + cost["cpu_system_us_per_op"]
def pool_phase(rep, test):
    s = load(f"{work}/pool-{rep}/run.json")["stores"][0]
    assert s["status"] == "ok", s.get("error")
    return next(p for p in s["phases"] if p["size"]["name"] == test)
def pool_runs(rep, test):
    # Each run's wall time and its operations' p50 (a phase of one run lists none).
    p = pool_phase(rep, test)
    return p.get("runs") or [{"wall_ms": p["wall_ms"], "p50_us": p["latency_us"]["p50"]}]
def pool(rep, test):
    # The Large Result Set timed as the seed and asyncmy time it: the query with every row
    # read and decoded (its operation's own time, p50 of one operation a run: the median
    # run); the check of each row against the table comes after, outside it (below). The
    # Connection Pool: the whole test, pool opened inside it, as asyncmy's.
    if test == "LargeResultSet":
        return statistics.median(r["p50_us"] for r in pool_runs(rep, test)) / 1e6
    return pool_phase(rep, test)["wall_ms"] / 1000
def checked(rep):
    # Milliseconds per Large Result Set run after its query's time: every row compared with
    # the table, then dropped (what asyncmy's side, which counts the rows, does not pay).
    return [r["wall_ms"] - r["p50_us"] / 1000 for r in pool_runs(rep, "LargeResultSet")]
# The targets, judged on the median of the per-repetition ratios: (what, its ratio, the
# target, whether it is met).
targets = []
# Every row's per-repetition ratios, for RECORD: (table, row, concurrency, target, ratios).
kept = []
table = "rate"
def row(label, conc, ours, theirs, fmt, target=None):
    ratios = [o / t for o, t in zip(ours, theirs)]
    kept.append((table, label.removesuffix(" (ops/s)").removesuffix(" (s)"), conc,
                 f"{'>' if target[2] else '>='}{target[1]}" if target else "", ratios))
    print(f"{label:56} {conc:>4} {fmt(statistics.median(ours)):>10} {fmt(statistics.median(theirs)):>10}"
          f" {statistics.median(ratios):>6.2f} ({min(ratios):.2f}-{max(ratios):.2f})")
    if target:
        what, least, ahead = target
        ratio = statistics.median(ratios)
        targets.append((what, ratio, f"{'above' if ahead else 'at least'} {least}",
                        ratio > least if ahead else ratio >= least))
# The rows with a target: each store's search beside the tool on the same query.
same = {"redis": "redis", "postgres": "pgsq", "mysql": "mysq"}
first = load(f"{work}/{stores[0]}-ours-c1-1/run.json" if stores[0] != "pool" else f"{work}/pool-1/run.json")
m = first["machine"]
print(f"dbcompare beside the native tools, {first['finished_at'][:10]}, {m['cpu_model']}, {m['cores']} cores,"
      f" {runs} alternated repetitions, client threads at concurrency 8: "
      + ", ".join(f"{s} {threads_of(s, 8)}" for s in ("redis", "postgres", "mysql") if s in stores))
def steal():
    # vmstat's "st" column, a line a second after its two header lines.
    try:
        lines = [l.split() for l in open(f"{work}/vmstat")]
    except OSError:
        return None
    column = next((l.index("st") for l in lines if "st" in l), None)
    seconds = [int(l[column]) for l in lines if column is not None and len(l) > column and l[column].isdigit()][1:]
    if not seconds:
        return None
    return (f"steal (vmstat, each second): above 0% in {sum(s > 0 for s in seconds):,} of {len(seconds):,}"
            f" seconds, at most {max(seconds)}%")
if steal():
    print(steal())
print(f"{'workload':56} {'conc':>4} {'dbcompare':>10} {'native':>10} {'ratio (min-max)':>17}")
tools = [t for t in [("redis", "redis-benchmark GET -P 1", "redis"),
                     ("postgres", "pgbench -S -M prepared", "pg"),
                     ("postgres", "pgbench, same query", "pgsq"),
                     ("mysql", "sysbench oltp_point_select", "my"),
                     ("mysql", "sysbench, same query", "mysq")] if t[0] in stores]
for store, tool, name in tools:
    for c in (1, 8):
        row(f"{store} point lookup vs {tool} (ops/s)", c,
            [search(r, store, c) for r in reps], [native(name, c, r) for r in reps], lambda v: f"{v:.0f}",
            (f"{store} at {c}, rate", 0.95, False) if same[store] == name else None)
# dbcompare with a loop per connection, sysbench's structure (absent when CLIENT_THREADS >= 8).
eight = "mysql" in stores and os.path.exists(f"{work}/mysql-ours-c8t8-1")
if eight:
    row("mysql ..., same query, a loop per connection (ops/s)", 8,
        [search(r, "mysql", 8, loops="t8") for r in reps], [native("mysq", 8, r) for r in reps],
        lambda v: f"{v:.0f}")
for test in ("LargeResultSet", "ConnectionPool") if "pool" in stores else ():
    version = load(f"{work}/asyncmy-1.json")["asyncmy"]
    # Times: the ratio is the tool's time over dbcompare's (above 1: dbcompare is faster).
    ours = [pool(r, test) for r in reps]
    theirs = [load(f"{work}/asyncmy-{r}.json")[test] for r in reps]
    row(f"mysql {test} vs asyncmy {version} (s)", "", [1 / o for o in ours], [1 / t for t in theirs],
        lambda v: f"{1 / v:.3f}",
        (test, 1.2, False) if test == "LargeResultSet" else (test, 1.0, True))
    if test == "LargeResultSet":
        after = [ms for r in reps for ms in checked(r)]
        print(f"  (dbcompare's check of the rows, after the query's time: {statistics.median(after):.1f} ms"
              f" a run, {min(after):.1f}-{max(after):.1f})")
print("ratio: dbcompare's throughput over the tool's, per repetition (above 1: dbcompare is faster)")
print()
table = "client CPU"
print(f"{'client CPU per operation (us)':56} {'conc':>4} {'dbcompare':>10} {'native':>10} {'ratio (min-max)':>17}")
for store, tool, name in tools:
    for c in (1, 8):
        # Inverted so that the ratio reads like the one above: the tool's CPU over dbcompare's.
        row(f"{store} point lookup vs {tool}", c,
            [1 / search(r, store, c, "cpu_us_per_op") for r in reps],
            [1 / native_cpu(name, c, r) for r in reps], lambda v: f"{1 / v:.1f}",
            (f"{store} at {c}, client CPU", 0.95, False) if same[store] == name else None)
if eight:
    row("mysql ..., same query, a loop per connection", 8,
        [1 / search(r, "mysql", 8, "cpu_us_per_op", loops="t8") for r in reps],
        [1 / native_cpu("mysq", 8, r) for r in reps], lambda v: f"{1 / v:.1f}")
print("ratio: the tool's client CPU per operation over dbcompare's (above 1: dbcompare uses less)")
print()
# No target: where a rate falls short while the client spends less, whether the server spent
# more per operation on dbcompare's side (on 2 cores, at concurrency 8 both share them).
table = "server CPU"
print(f"{'server CPU per operation (us)':56} {'conc':>4} {'dbcompare':>10} {'native':>10} {'ratio (min-max)':>17}")
for store, tool, name in tools:
    for c in (1, 8):
        row(f"{store} point lookup vs {tool}", c, [1 / server_cpu(r, store, c) for r in reps],
            [1 / native_server(name, c, r) for r in reps], lambda v: f"{1 / v:.1f}")
print("ratio: the server's CPU per operation for the tool over that for dbcompare (above 1: less for dbcompare)")
print()
# Three decimals: a miss by less than 0.005 would otherwise read as the target itself.
missed = [f"{what} {ratio:.3f} (target: {want})" for what, ratio, want, met in targets if not met]
print(f"targets met: {len(targets) - len(missed)} of {len(targets)}"
      + (f"; missed: {', '.join(missed)}" if missed else ""))
if record:
    # One line per row and repetition, the run named by when its first dbcompare run finished.
    fresh = not os.path.exists(record) or os.path.getsize(record) == 0
    with open(record, "a", newline="") as f:
        out = csv.writer(f)
        if fresh:
            out.writerow(["run", "machine", "table", "row", "concurrency", "target", "repetition", "ratio"])
        for what, label, conc, want, ratios in kept:
            for rep, ratio in enumerate(ratios, 1):
                out.writerow([first["finished_at"], f"{m['cpu_model']}, {m['cores']} cores", what, label, conc,
                              want, rep, f"{ratio:.4f}"])
PY
