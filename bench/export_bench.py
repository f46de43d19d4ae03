#!/usr/bin/env python3
"""Speed and memory of `rdbscan export` and of filtered loads (issue 30), against
redis-check-rdb on the same dump in the same run.

    python bench/export_bench.py /tmp/rdbscan-bench/mixed.rdb [--runs 3]

Each case runs under /usr/bin/time -v (--runs times, the median wall time and the largest peak
RSS are kept); the table (markdown) goes to standard output.  The `mixed` dump is made by
bench/run_bench.py (bench/populate_mixed.py --seed 42): its prefixes `product:` and `counter:`
hold 10 % of its keys.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile


def timed(cmd: list[str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds (user + system), peak RSS in MB) of one run of cmd."""
    out = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", out.stderr)
    assert wall, out.stderr
    h, m, s = wall.groups()
    seconds = int(h or 0) * 3600 + int(m) * 60 + float(s)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr).group(1))
    cpu = sum(
        float(re.search(rf"{kind} time \(seconds\): ([\d.]+)", out.stderr).group(1))
        for kind in ("User", "System")
    )
    return seconds, cpu, rss // 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dump")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="rdbscan-export-bench-")
    db = os.path.join(work, "full.duckdb")
    exe = [sys.executable, "-m", "rdbscan"]
    prefix = ["--match", "product:*", "--match", "counter:*"]
    cases: list[tuple[str, list[str], str | None]] = []
    if shutil.which("redis-check-rdb"):
        cases.append(("redis-check-rdb", ["redis-check-rdb", args.dump], None))
    cases += [
        ("load (all keys)", [*exe, "load", "-q", args.dump, "-o", db], db),
        (
            "load --match 'product:*' --match 'counter:*' (10 %; C prefix check)",
            [*exe, "load", "-q", args.dump, "-o", os.path.join(work, "f.duckdb"), *prefix],
            os.path.join(work, "f.duckdb"),
        ),
        (
            "load --regex '^(product|counter):' (10 %; Python per key)",
            [
                *exe,
                "load",
                "-q",
                args.dump,
                "-o",
                os.path.join(work, "f.duckdb"),
                "--regex",
                "^(product|counter):",
            ],
            os.path.join(work, "f.duckdb"),
        ),
        (
            "load --db 99 (no key kept: the parse alone)",
            [*exe, "load", "-q", args.dump, "-o", os.path.join(work, "f.duckdb"), "--db", "99"],
            os.path.join(work, "f.duckdb"),
        ),
        (
            "load --type zset (C type check)",
            [*exe, "load", "-q", args.dump, "-o", os.path.join(work, "f.duckdb"), "--type", "zset"],
            os.path.join(work, "f.duckdb"),
        ),
        (
            "export dump -> CSV (default columns)",
            [*exe, "export", "-q", args.dump, "-o", os.path.join(work, "k.csv"), "--force"],
            None,
        ),
        (
            "export dump -> CSV --columns rdbtools",
            [
                *exe,
                "export",
                "-q",
                args.dump,
                "-o",
                os.path.join(work, "k.csv"),
                "--force",
                "--columns",
                "rdbtools",
            ],
            None,
        ),
        (
            "export dump -> Parquet",
            [*exe, "export", "-q", args.dump, "-o", os.path.join(work, "k.parquet"), "--force"],
            None,
        ),
        (
            "export dump -> CSV, 10 % prefix",
            [
                *exe,
                "export",
                "-q",
                args.dump,
                "-o",
                os.path.join(work, "k.csv"),
                "--force",
                *prefix,
            ],
            None,
        ),
        (
            "export database -> CSV (default columns)",
            [*exe, "export", "-q", db, "-o", os.path.join(work, "k.csv"), "--force"],
            None,
        ),
    ]
    # Rounds: every case once per round, so that the load of a shared machine falls on all alike.
    walls: dict[str, list[float]] = {name: [] for name, _, _ in cases}
    cpus: dict[str, list[float]] = {name: [] for name, _, _ in cases}
    peaks: dict[str, int] = {name: 0 for name, _, _ in cases}
    for _ in range(args.runs):
        for name, cmd, remove in cases:
            if remove and os.path.exists(remove):  # a load into a new database each run
                os.remove(remove)
            w, c, r = timed(cmd)
            walls[name].append(w)
            cpus[name].append(c)
            peaks[name] = max(peaks[name], r)
            print(f"{name}: {w:.2f} s, CPU {c:.2f} s, {r} MB", file=sys.stderr)
    wall = {n: statistics.median(v) for n, v in walls.items()}
    cpu = {n: statistics.median(v) for n, v in cpus.items()}
    size = os.path.getsize(os.path.join(work, "k.csv"))
    base = "redis-check-rdb" if "redis-check-rdb" in wall else None
    print(
        "| case | wall | × redis-check-rdb | CPU (user+sys) | × redis-check-rdb | peak RSS |\n"
        "|---|---|---|---|---|---|"
    )
    for name in wall:
        rw = f"{wall[name] / wall[base]:.2f}" if base else "-"
        rc = f"{cpu[name] / cpu[base]:.2f}" if base else "-"
        print(
            f"| {name} | {wall[name]:.2f} s | {rw} | {cpu[name]:.2f} s | {rc} | {peaks[name]} MB |"
        )
    print(f"\n(last CSV written: {size / 1e6:.0f} MB)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
