#!/usr/bin/env python3
"""The scale benchmark of `rdbscan diff` (docs/diff.md, "Scale"): two snapshots of the `mixed`
keyspace (1.0 M keys, bench/run_bench.py's dump) diffed in at most the time of loading them
plus a second.

    python bench/diff_bench.py [--mixed /tmp/rdbscan-bench/mixed.rdb] [--dir /tmp/rdbscan-diff-bench]
                               [--runs 3] [--port 27230]

1. The old snapshot is the `mixed` dump (made by `python bench/run_bench.py --dumps mixed` if it
   is missing).  A real redis-server (Debian's 7.0) loads it, takes a scripted set of changes
   (below), and saves the new snapshot: old.rdb and new.rdb in --dir, made once.
2. Times, under /usr/bin/time -v, median of --runs: `rdbscan load OLD.rdb NEW.rdb` (both dumps
   in one load, as the diff loads them), `rdbscan load` of each dump, `rdbscan diff OLD.rdb
   NEW.rdb` (loads both, then diffs), and `rdbscan diff` of the two loaded databases (the diff
   alone); prints wall time, CPU time and peak RSS, and the diff's margin over the load.

Changes (seeded, on keys found by SCAN): 50,000 keys deleted, 60,000 new keys in a new family
(order:{id}), 50,000 strings rewritten longer, 20,000 hashes given a 100-byte field (listpack ->
hashtable), 20,000 keys PERSISTed, 20,000 given an expiry, 100 lists grown by 20,000 elements.

    python bench/diff_bench.py --populate 20000000 [--runs 1] [--steps diff-dumps,...]

makes the pair with DEBUG POPULATE instead (the scale of bounded memory: N small strings
`key:0`..), in --dir (default /tmp/rdbscan-diff-bench-N): old = DEBUG POPULATE N; new = 1 % of
the keys deleted, N/20 keys added in a new family (DEBUG POPULATE N/20 order), 1 % rewritten
longer (APPEND), 1 % given an expiry.  Run it at `nice -n 19` on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "fixtures" / "diff"))
from make_pairs import Redis, start_server, stop_server  # noqa: E402  (the fixtures' RESP client)

BATCH = 2000


def pipeline(r: Redis, commands) -> None:
    for i in range(0, len(commands), BATCH):
        r.pipeline(commands[i : i + BATCH])


def scan_keys(r: Redis) -> list[str]:
    keys, cursor = [], b"0"
    while True:
        cursor, batch = r("SCAN", cursor, "COUNT", 10000)
        keys.extend(k.decode() for k in batch)
        if cursor == b"0":
            return keys


def make_pair(mixed: Path, work: Path, port: int) -> None:
    if (work / "new.rdb").exists():
        return
    work.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(mixed, work / "old.rdb")
    shutil.copyfile(mixed, work / "server.rdb")
    proc = start_server(port, work, "server")  # loads server.rdb (the old snapshot)
    try:
        r = Redis(port)
        rng = random.Random(7)
        keys = scan_keys(r)
        types = dict(
            zip(
                keys,
                [
                    t
                    for i in range(0, len(keys), BATCH)
                    for t in r.pipeline([("TYPE", k) for k in keys[i : i + BATCH]])
                ],
            )
        )
        rng.shuffle(keys)
        strings = [k for k in keys if types[k] == "string"]
        hashes = [k for k in keys if types[k] == "hash"]
        lists = [k for k in keys if types[k] == "list"]
        gone = keys[:50_000]
        pipeline(r, [("DEL", k) for k in gone])
        rest = set(gone)
        pipeline(r, [("SET", f"order:{i}", "o" * (50 + i % 200)) for i in range(60_000)])
        pipeline(
            r, [("APPEND", k, "x" * 64) for k in [k for k in strings if k not in rest][:50_000]]
        )
        pipeline(
            r,
            [("HSET", k, "bio", "b" * 100) for k in [k for k in hashes if k not in rest][:20_000]],
        )
        tail = [k for k in keys[50_000:] if k not in rest]
        pipeline(r, [("PERSIST", k) for k in tail[:20_000]])
        pipeline(r, [("EXPIRE", k, 86400 * 3) for k in tail[20_000:40_000]])
        for k in [k for k in lists if k not in rest][:100]:
            pipeline(r, [("RPUSH", k, *["e" * 16] * 1000) for _ in range(20)])
        r("SAVE")
        shutil.copyfile(work / "server.rdb", work / "new.rdb")
    finally:
        stop_server(proc, port)
        (work / "server.rdb").unlink(missing_ok=True)


def make_populated_pair(n: int, work: Path, port: int) -> None:
    """old.rdb = DEBUG POPULATE n; new.rdb = old with the changes of the module's docstring."""
    if (work / "new.rdb").exists():
        return
    work.mkdir(parents=True, exist_ok=True)
    (work / "server.rdb").unlink(missing_ok=True)
    proc = start_server(port, work, "server")
    try:
        r = Redis(port)
        t0 = time.perf_counter()
        r("DEBUG", "POPULATE", n)
        r("SAVE")
        shutil.copyfile(work / "server.rdb", work / "old.rdb")
        print(f"old.rdb: {n:,} keys in {time.perf_counter() - t0:.0f} s", flush=True)
        rng = random.Random(7)
        picked = rng.sample(range(n), 3 * (n // 100))
        gone, longer, expiring = (picked[i::3] for i in range(3))
        pipeline(r, [("DEL", f"key:{i}") for i in gone])
        r("DEBUG", "POPULATE", n // 20, "order", 40)
        pipeline(r, [("APPEND", f"key:{i}", "x" * 64) for i in longer])
        pipeline(r, [("EXPIRE", f"key:{i}", 86400 * 3) for i in expiring])
        r("SAVE")
        shutil.copyfile(work / "server.rdb", work / "new.rdb")
        print(f"new.rdb: changes and save in {time.perf_counter() - t0:.0f} s", flush=True)
    finally:
        stop_server(proc, port)
        (work / "server.rdb").unlink(missing_ok=True)


def timed(cmd: list[str]) -> tuple[float, int, float, str]:
    """Wall seconds, peak RSS (KB), CPU seconds (user + system) and standard output of a
    command under /usr/bin/time -v.  CPU time says more than wall time on a machine others are
    using."""
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 3):
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr[-2000:]}")

    def field(name: str) -> float:
        return float(re.search(rf"{name}: ([0-9.]+)", p.stderr).group(1))

    rss = int(field(r"Maximum resident set size \(kbytes\)"))
    cpu = field(r"User time \(seconds\)") + field(r"System time \(seconds\)")
    return wall, rss, cpu, p.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mixed", type=Path, default=Path("/tmp/rdbscan-bench/mixed.rdb"))
    ap.add_argument("--dir", type=Path, default=Path("/tmp/rdbscan-diff-bench"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--port", type=int, default=27230)
    ap.add_argument(
        "--populate", type=int, metavar="N", help="a DEBUG POPULATE pair of N keys instead"
    )
    ap.add_argument(
        "--steps",
        default=",".join(STEPS),
        help="comma-separated, of: " + ", ".join(STEPS) + " (diff-databases needs the loads)",
    )
    args = ap.parse_args()
    steps = [x for x in args.steps.split(",") if x]
    if args.populate:
        work = (
            args.dir
            if args.dir != Path("/tmp/rdbscan-diff-bench")
            else Path(f"/tmp/rdbscan-diff-bench-{args.populate}")
        )
        make_populated_pair(args.populate, work, args.port)
    else:
        work = args.dir
        _make_mixed_pair(args, work)
    run_steps(work, steps, args.runs)


STEPS = ("load-both", "load-old", "load-new", "diff-dumps", "diff-databases")


def _make_mixed_pair(args, work: Path) -> None:
    if not args.mixed.exists():
        subprocess.run(
            [
                sys.executable,
                str(HERE / "run_bench.py"),
                "--dumps",
                "mixed",
                "--dir",
                str(args.mixed.parent),
                "--runs",
                "0",
            ],
            check=True,
        )
    make_pair(args.mixed, work, args.port)


def run_steps(work: Path, steps: list[str], runs: int) -> None:
    rdbscan = shutil.which("rdbscan") or sys.exit("rdbscan not installed")
    results: dict[str, list[tuple[float, int, float]]] = {}

    def once(name, cmd, clean=()):
        if name.replace(" ", "-") not in steps:
            return
        for c in clean:
            Path(c).unlink(missing_ok=True)
        w, r, c, out = timed(cmd)
        results.setdefault(name, []).append((w, r, c))
        queries = ""
        if out.startswith("{"):  # a diff's JSON: the time of its queries, what it found
            d = json.loads(out)
            k = d["keys"]
            queries = (
                f"; queries {d['diff_seconds']:.2f} s wall; {k['added']:,} added, "
                f"{k['removed']:,} removed, {k['changed']:,} changed"
            )
        print(
            f"  {name}: {w:.2f} s wall, {c:.2f} s CPU, {r / 1024:.0f} MB peak RSS "
            f"(load average {os.getloadavg()[0]:.1f}){queries}",
            flush=True,
        )

    for _ in range(runs):
        once(
            "load both",
            [
                rdbscan,
                "load",
                "-q",
                str(work / "old.rdb"),
                str(work / "new.rdb"),
                "-o",
                str(work / "both.duckdb"),
            ],
            [work / "both.duckdb"],
        )
        once(
            "load old",
            [rdbscan, "load", "-q", str(work / "old.rdb"), "-o", str(work / "old.duckdb")],
            [work / "old.duckdb"],
        )
        once(
            "load new",
            [rdbscan, "load", "-q", str(work / "new.rdb"), "-o", str(work / "new.duckdb")],
            [work / "new.duckdb"],
        )
        once(
            "diff dumps",
            [rdbscan, "diff", "-q", "-f", "json", str(work / "old.rdb"), str(work / "new.rdb")],
        )
        once(
            "diff databases",
            [rdbscan, "diff", "-f", "json", str(work / "old.duckdb"), str(work / "new.duckdb")],
        )
    med = {
        n: (
            statistics.median(w for w, _, _ in v),
            max(r for _, r, _ in v),
            statistics.median(c for _, _, c in v),
        )
        for n, v in results.items()
    }
    sizes = {n: os.path.getsize(work / f"{n}.rdb") for n in ("old", "new")}
    print(f"old.rdb {sizes['old']:,} B, new.rdb {sizes['new']:,} B; median of {runs} runs")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("| step | wall | CPU (user + system) | peak RSS |\n|---|---:|---:|---:|")
    for n, (w, r, c) in med.items():
        print(f"| {n} | {w:.2f} s | {c:.2f} s | {r / 1024:.0f} MB |")
    # the same load the diff does (both dumps, one `rdbscan load`, default --jobs)
    if "load both" not in med or "diff dumps" not in med:
        return
    loads, cpu = med["load both"][0], med["load both"][2]
    print(
        f"diff of the dumps - both loads: wall {med['diff dumps'][0] - loads:+.2f} s, "
        f"CPU {med['diff dumps'][2] - cpu:+.2f} s (target: <= +1 s)"
    )


if __name__ == "__main__":
    main()
