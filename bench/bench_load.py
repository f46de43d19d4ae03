#!/usr/bin/env python3
"""Benchmark `rdbscan load` on a dump: wall time, keys/s, MB/s and peak RSS (median of N runs).

Usage: python bench/bench_load.py DUMP [--runs 3] [--profile]

Each run is a fresh `python -m rdbscan load DUMP -o <tmp>.duckdb -q` process; peak RSS is the
child's ru_maxrss.  --profile also runs the parser alone under cProfile and prints the top
functions (what to optimise next).
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def one_run(dump: str, extra: list[str]) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "bench.duckdb")
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:  # child: exec so ru_maxrss is the loader's alone
            os.execv(sys.executable, [sys.executable, "-m", "rdbscan", "load", "-q", dump,
                                      "-o", db, *extra])
        _, status, usage = os.wait4(pid, 0)
        wall = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) not in (0, 5):
            sys.exit(f"rdbscan load failed with exit code {os.waitstatus_to_exitcode(status)}")
        import duckdb
        keys = duckdb.connect(db, read_only=True).execute("SELECT count(*) FROM keys").fetchone()[0]
        return wall, keys, usage.ru_maxrss * 1024


def profile(dump: str) -> None:
    import cProfile
    import pstats

    from rdbscan.parser import DumpInfo, parse
    info = DumpInfo()
    pr = cProfile.Profile()
    with open(dump, "rb") as f:
        pr.enable()
        for _ in parse(f, info, size=os.path.getsize(dump)):
            pass
        pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(12)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dump")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("extra", nargs="*", help="extra arguments for rdbscan load")
    a = ap.parse_args()
    size = os.path.getsize(a.dump)
    runs = [one_run(a.dump, a.extra) for _ in range(a.runs)]
    wall = statistics.median(r[0] for r in runs)
    keys = runs[0][1]
    rss = max(r[2] for r in runs)
    print(f"dump            {a.dump} ({size / 1e6:.1f} MB, {keys:,} keys)")
    print(f"wall (median/{a.runs}) {wall:.2f} s   runs: " + ", ".join(f"{r[0]:.2f}" for r in runs))
    print(f"keys/s          {keys / wall:,.0f}")
    print(f"MB/s            {size / 1e6 / wall:.1f}")
    print(f"peak RSS        {rss / 1e6:.0f} MB")
    if a.profile:
        profile(a.dump)


if __name__ == "__main__":
    main()
