#!/usr/bin/env python3
"""The fleet benchmark (docs/fleet.md, "Scale"): Parquet datasets against DuckDB files, many dumps
with --jobs and on a local Dask cluster, and a report over the dataset.

    python bench/fleet_bench.py [--dir /tmp/rdbscan-bench] [--work /tmp/rdbscan-fleet-bench]
                                [--copies 4] [--skip-single]

1. Bytes per key: `rdbscan load D -o D.duckdb` and `rdbscan load D --parquet DIR` of the
   benchmark dumps `mixed` and `pop5m` (bench/run_bench.py makes them in --dir); size on disk,
   wall time, peak RSS.
2. A fleet: --copies copies of `mixed` (1.0 M keys each). A copy is the same dump, and a second
   load of the same dump is refused (docs/loading.md), so each copy gets its own stored CRC64 in
   its last 8 bytes and all are loaded with --no-verify-crc: distinct dumps with the same keys.
   Timed: `load --jobs 2 -o` (a database, for comparison), `load --jobs 2 --parquet`, and
   `load --dask ADDRESS --parquet` on a LocalCluster of two worker processes (one thread each).
3. `rdbscan report` on the dataset, and on the database, wall time and peak RSS.

Peak RSS is the largest resident set of the command's process and the processes it waited for
(os.wait4); a Dask cluster's workers are measured from their own processes (psutil, sampled).
Results: printed, and written to --work/fleet.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

RDBSCAN = [sys.executable, "-m", "rdbscan"]


def run(args: list[str], label: str) -> dict:
    """Run a command; its wall time and peak RSS (MiB) with its waited-for children."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        print(err, file=sys.stderr)
        raise SystemExit(f"{label}: exit {code}")
    out = {
        "label": label,
        "wall_s": round(wall, 2),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
    }
    print(json.dumps(out), flush=True)
    return out


def du(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def keys_of(db: Path) -> int:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT count(*) FROM keys").fetchone()[0]
    finally:
        con.close()


def bytes_per_key(dumps: Path, work: Path) -> list[dict]:
    rows = []
    for name in ("mixed", "pop5m"):
        dump = dumps / f"{name}.rdb"
        db, ds = work / f"{name}.duckdb", work / f"{name}-parquet"
        for p in (db, ds):
            shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
        a = run([*RDBSCAN, "load", "-q", str(dump), "-o", str(db)], f"{name}: load -o .duckdb")
        b = run(
            [*RDBSCAN, "load", "-q", str(dump), "--parquet", str(ds)], f"{name}: load --parquet"
        )
        keys = keys_of(db)
        row = {
            "dump": name,
            "dump_bytes": dump.stat().st_size,
            "keys": keys,
            "duckdb_bytes": du(db),
            "parquet_bytes": du(ds),
            "duckdb_bytes_per_key": round(du(db) / keys, 1),
            "parquet_bytes_per_key": round(du(ds) / keys, 1),
            "duckdb_load": a,
            "parquet_load": b,
        }
        print(json.dumps({k: v for k, v in row.items() if not k.endswith("_load")}), flush=True)
        rows.append(row)
    return rows


def make_copies(mixed: Path, work: Path, n: int) -> list[Path]:
    """n copies of `mixed`, each with its own stored CRC64 (the last 8 bytes)."""
    out = []
    for i in range(n):
        copy = work / "copies" / f"shard-{i:03d}.rdb"
        copy.parent.mkdir(parents=True, exist_ok=True)
        if not copy.exists() or copy.stat().st_size != mixed.stat().st_size:
            shutil.copyfile(mixed, copy)
            with open(copy, "r+b") as fh:
                fh.seek(-8, os.SEEK_END)
                fh.write((0x5EED0000 + i + 1).to_bytes(8, "little"))
        out.append(copy)
    return out


class RssSampler:
    """Peak summed RSS of a set of processes (a Dask cluster's workers), sampled every 0.2 s."""

    def __init__(self, pids: list[int]):
        import psutil

        self.procs = [psutil.Process(p) for p in pids]
        self.peak = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while not self.stop.is_set():
            total = 0
            for p in self.procs:
                try:
                    total += p.memory_info().rss
                except Exception:  # noqa: BLE001 - a worker gone
                    pass
            self.peak = max(self.peak, total)
            time.sleep(0.2)

    def finish(self) -> float:
        self.stop.set()
        self.thread.join()
        return round(self.peak / 2**20, 1)


def fleet(dumps: Path, work: Path, n: int) -> dict:
    copies = [str(p) for p in make_copies(dumps / "mixed.rdb", work, n)]
    total_bytes = sum(os.path.getsize(p) for p in copies)
    db, ds, ds_dask = work / "fleet.duckdb", work / "fleet-parquet", work / "fleet-parquet-dask"
    for p in (db, ds, ds_dask):
        shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
    common = ["load", "-q", "--no-verify-crc", "--instance", "bench", *copies]
    out: dict = {"copies": n, "dump_bytes": total_bytes}
    out["duckdb_jobs2"] = run([*RDBSCAN, *common, "-j", "2", "-o", str(db)], "fleet: load -j 2 -o")
    out["parquet_jobs2"] = run(
        [*RDBSCAN, *common, "-j", "2", "--parquet", str(ds)], "fleet: load -j 2 --parquet"
    )
    from dask.distributed import LocalCluster

    with LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    ) as cluster:
        pids = [w.process.pid for w in cluster.workers.values()]  # type: ignore[union-attr]
        sampler = RssSampler(pids)
        r = run(
            [*RDBSCAN, *common, "--dask", cluster.scheduler_address, "--parquet", str(ds_dask)],
            "fleet: load --dask (2 workers) --parquet",
        )
        r["workers_peak_rss_mib"] = sampler.finish()
        out["parquet_dask2"] = r
    out["dataset_bytes"] = du(ds)
    out["duckdb_bytes"] = du(db)
    out["report_dataset"] = run(
        [*RDBSCAN, "report", "-q", "--format", "json", str(ds)], "fleet: report DIR"
    )
    out["report_duckdb"] = run(
        [*RDBSCAN, "report", "-q", "--format", "json", str(db)], "fleet: report .duckdb"
    )
    for key in ("duckdb_jobs2", "parquet_jobs2", "parquet_dask2"):
        out[key]["mb_per_s"] = round(total_bytes / 1e6 / out[key]["wall_s"], 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default="/tmp/rdbscan-bench", type=Path, help="mixed.rdb, pop5m.rdb")
    ap.add_argument("--work", default="/tmp/rdbscan-fleet-bench", type=Path)
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--skip-single", action="store_true", help="skip the bytes-per-key part")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    results: dict = {"cores": os.cpu_count(), "load_average": os.getloadavg()}
    if not args.skip_single:
        results["bytes_per_key"] = bytes_per_key(args.dir, args.work)
    results["fleet"] = fleet(args.dir, args.work, args.copies)
    results["load_average_after"] = os.getloadavg()
    (args.work / "fleet.json").write_text(json.dumps(results, indent=1))
    print(f"written: {args.work / 'fleet.json'}")


if __name__ == "__main__":
    main()
