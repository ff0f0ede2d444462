#!/usr/bin/env python3
"""Several bench/peers.sh runs judged together, from the CSV each appended to (RECORD=file).

One run's median moves by 0.05-0.10 between runs on these shared VMs, so a row that sits at
its target meets it in one run and misses it in the next. This pools every repetition of
every run given and prints, per row with a target: the runs' medians (how many met it), the
median of all repetitions' ratios with its distribution-free 95% confidence interval (order
statistics of the binomial, no assumption about the ratios' distribution), and whether that
interval lies above the target, below it, or around it.

usage: bench/peers-pool.py [--all] FILE.csv [FILE.csv ...]   (--all: the rows without a target too)
"""
import csv
import statistics
import sys
from math import comb


def median_interval(values, confidence=0.95):
    """The sample median and the widest order-statistic interval that holds the true median
    with at least `confidence` (None when too few values for any)."""
    xs = sorted(values)
    n = len(xs)
    # The largest k with P(Binomial(n, 1/2) < k) <= (1 - confidence) / 2: [x_k, x_{n-k+1}].
    tail, k = 0.0, 0
    while k < n:
        nxt = tail + comb(n, k) / 2**n
        if nxt > (1 - confidence) / 2:
            break
        tail, k = nxt, k + 1
    interval = (xs[k - 1], xs[n - k]) if k >= 1 else None
    return statistics.median(xs), interval


def meets(value, target):
    """Whether a ratio meets a target written as ">=0.95" (at least) or ">1.0" (above)."""
    if target.startswith(">="):
        return value >= float(target[2:])
    return value > float(target[1:])


def main(argv):
    show_all = "--all" in argv
    files = [a for a in argv if a != "--all"]
    if not files:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    # (table, row, concurrency, target) -> run -> [ratios]
    rows, machines = {}, set()
    for path in files:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                machines.add(r["machine"])
                key = (r["table"], r["row"], r["concurrency"], r["target"])
                rows.setdefault(key, {}).setdefault(r["run"], []).append(float(r["ratio"]))
    if not rows:
        print("no rows in " + ", ".join(files), file=sys.stderr)
        return 1
    runs = sorted({run for per in rows.values() for run in per})
    print(f"{len(runs)} bench/peers.sh runs pooled, {runs[0][:16]} to {runs[-1][:16]}; machines: "
          + "; ".join(sorted(machines)))
    print(f"{'row':62} {'conc':>4} {'target':>6} {'run medians (met)':>22} {'pooled median (95% CI)':>24} verdict")
    for (table, label, conc, target), per in rows.items():
        if not target and not show_all:
            continue
        medians = [statistics.median(per[run]) for run in runs if run in per]
        pooled = [x for run in runs if run in per for x in per[run]]
        mid, interval = median_interval(pooled)
        met = f" ({sum(meets(m, target) for m in medians)} of {len(medians)})" if target else ""
        ci = f"({interval[0]:.2f}-{interval[1]:.2f})" if interval else "(too few)"
        verdict = ""
        if target and interval:
            if meets(interval[0], target):
                verdict = "met: the interval is above the target"
            elif not meets(interval[1], target):
                verdict = "missed: the interval is below the target"
            else:
                verdict = "at the target: the interval holds it"
        print(f"{table + ': ' + label:62} {conc:>4} {target:>6} "
              f"{f'{min(medians):.2f}-{max(medians):.2f}{met}':>22} "
              f"{f'{mid:.2f} {ci}':>24} {verdict}")
    print("ratios above 1: dbcompare does better (rates: its throughput over the tool's; CPU: the tool's"
          " per operation over its)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
