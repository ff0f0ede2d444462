# shellcheck shell=bash
# Sourced by the bench scripts: a work directory and throw-away servers started with
# `dbcompare server` ($bin), all stopped and deleted when the script exits; the tools and
# builds a script needs.
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

tools() { # Debian packages whose commands the script runs (sysbench, time): installed if missing
  local pkg
  for pkg in "$@"; do
    [ -x "/usr/bin/$pkg" ] || apt-get install -y -qq "$pkg" >/dev/null || sudo apt-get install -y -qq "$pkg" >/dev/null
  done
}

build_release() { # dbcompare's release build, and with $1 that bench/ crate's, in target/$1
  cargo build --release --locked --quiet
  if [ $# -gt 0 ]; then
    CARGO_TARGET_DIR="target/$1" cargo build --release --locked --quiet \
      --manifest-path "bench/$1/Cargo.toml"
  fi
}

password_of() { # the password in a URL (each throw-away server has its own)
  local userinfo=${1#*://}
  userinfo=${userinfo%%@*}
  echo "${userinfo#*:}"
}

start() { # $1 = store; its URL lands in $work/$1.url (not in a subshell: pids must stay)
  "${bin:?the dbcompare binary}" server "$1" > "$work/$1.url" 2> "$work/$1.log" &
  pids+=("$!")
  for _ in $(seq 1 300); do [ -s "$work/$1.url" ] && break; sleep 0.1; done
  [ -s "$work/$1.url" ] || { cat "$work/$1.log" >&2; exit 1; }
}

use_server() { # $1 = store: sets url to $URL, or to a throw-away server of the store it starts
  # (SQLite needs none); not in a subshell, so that the server's pid stays
  url=${URL:-}
  if [ -z "$url" ] && [ "$1" != sqlite ]; then
    start "$1"
    url=$(cat "$work/$1.url")
  fi
}

search_rate() { # $1 = a run.json: prints its first store's search phase's operations per second
  python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["stores"][0]
assert s["status"] == "ok", s.get("error")
print(next(p["ops_per_s"] for p in s["phases"] if p["kind"] == "search"))' "$1"
}

default_loops() { # $1 = store, $2 = concurrency: dbcompare's default client event loops
  # (one for Redis; a loop per core, up to the concurrency, for the others)
  local most=1
  [ "$1" = redis ] || most=$(nproc)
  echo $(($2 < most ? $2 : most))
}

search_figures() { # $1 = store, $2 = URL (empty for SQLite), $3 = concurrency, $4 = event loops: prints
  # "dbcompare OPS/S CPU-US/OP SERVER-CPU-US/OP" of the classic SEARCH small phase (10 searches
  # per record, after one warm-up run) on that server (the server's figure "-" where unread)
  local where=()
  [ -n "$2" ] && where=(--url "$1=$2")
  "$bin" run --store "$1" "${where[@]}" --sizes small --searches-per-insert 10 \
    --concurrency "$3" --client-threads "$4" \
    --durability relaxed --warmup-runs 1 --runs 1 --quiet --out "$work/ours" > /dev/null
  python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["stores"][0]
assert s["status"] == "ok", s.get("error")
p = next(p for p in s["phases"] if p["kind"] == "search")
server = p.get("server") or {}
cpu = [server.get(k) for k in ("cpu_user_us_per_op", "cpu_system_us_per_op")]
print("dbcompare %.0f %.2f %s" % (p["ops_per_s"], p["cpu_us_per_op"],
                                  "-" if None in cpu else "%.2f" % sum(cpu)))' "$work/ours/run.json"
}

pool_figures() { # $1 = store, $2 = URL: prints "dbcompare CALLS/S CPU-US/CALL" of the pool
  # suite's Large Result Set (one query of 33,000 rows, after one warm-up run) on that server
  "$bin" run --suite pool --store "$1" --url "$1=$2" --warmup-runs 1 --runs 1 --quiet \
    --out "$work/ours" > /dev/null
  python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["stores"][0]
assert s["status"] == "ok", s.get("error")
p = next(p for p in s["phases"] if p["size"]["name"] == "LargeResultSet")
print("dbcompare %.2f %.0f" % (p["ops_per_s"], p["cpu_us_per_op"]))' "$work/ours/run.json"
}

callgrind_search() { # $1 = build, $2 = store, $3 = URL (empty for SQLite), $4 = searches per
  # record: the classic suite at tiny size under valgrind's callgrind, a file per thread in $work/cg
  local where=()
  [ -n "$3" ] && where=(--url "$2=$3")
  rm -rf "$work/cg" && mkdir "$work/cg"
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$work/cg/out.%p" \
    "$1" run --store "$2" "${where[@]}" --sizes tiny --searches-per-insert "$4" \
    --durability relaxed --warmup-runs 0 --runs 1 --no-floor --quiet \
    --out "$work/ours" > /dev/null 2> "$work/cg/log"
}

ycsb_figures() { # $1 = store, $2 = URL, $3 = concurrency, $4 = event loops, $5 = YCSB
  # workload: prints "dbcompare OPS/S CPU-US/OP" of the workload's whole run (10,000
  # records, 50,000 operations, after one warm-up run) on that server (SQLite: none)
  local where=()
  [ -n "$2" ] && where=(--url "$1=$2")
  "$bin" run --suite ycsb --workload "$5" --store "$1" "${where[@]}" \
    -p recordcount=10000 -p operationcount=50000 \
    --concurrency "$3" --client-threads "$4" \
    --durability relaxed --warmup-runs 1 --runs 1 --quiet --out "$work/ours" > /dev/null
  python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["stores"][0]
assert s["status"] == "ok", s.get("error")
p = next(p for p in s["phases"] if p["size"]["name"] == sys.argv[2])
print("dbcompare %.0f %.2f" % (p["ops_per_s"], p["cpu_us_per_op"]))' "$work/ours/run.json" "$5"
}
