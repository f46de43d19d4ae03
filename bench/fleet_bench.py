#!/usr/bin/env python3
"""The fleet benchmark (docs/fleet.md, "Scale"): Parquet datasets against DuckDB files, many dumps
with --jobs and on a local Dask cluster, and a report over the dataset.

    python bench/fleet_bench.py [--dir /tmp/rdbscan-bench] [--work /tmp/rdbscan-fleet-bench]
                                [--copies 4] [--skip-single]
    python bench/fleet_bench.py --scale 100 [--keys 1000000] [--work /tmp/rdbscan-fleet-scale]

1. Bytes per key: `rdbscan load D -o D.duckdb` and `rdbscan load D --parquet DIR` of the
   benchmark dumps `mixed` and `pop5m` (bench/run_bench.py makes them in --dir); size on disk,
   wall time, peak RSS.
2. A fleet: --copies copies of `mixed` (1.0 M keys each). A copy is the same dump, and a second
   load of the same dump is refused (docs/loading.md), so each copy gets its own stored CRC64 in
   its last 8 bytes and all are loaded with --no-verify-crc: distinct dumps with the same keys.
   Timed: `load --jobs 2 -o` (a database, for comparison), `load --jobs 2 --parquet`, and
   `load --dask ADDRESS --parquet` on a LocalCluster of two worker processes (one thread each).
3. `rdbscan report` on the dataset, and on the database, wall time and peak RSS.

--scale N is the issue's scale run instead: N distinct dumps of --keys keys each, made once by a
real redis-server (`DEBUG POPULATE KEYS sNNN`, one SAVE per dump: distinct dumps, each with its
own key names and CRC64, so no load refuses one as already loaded), then, timed, `load --jobs 2
--parquet` and `load --dask` on a two-worker LocalCluster (each into its own dataset; the Dask
one is measured and removed, to keep the disk use down), and `rdbscan report` over the --jobs
dataset (peak RSS: DuckDB spills past its 128 MB).  The load average is sampled every 5 s
during each step.  Results in --work/fleet-scale.json.

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

HERE = Path(__file__).resolve().parent

RDBSCAN = [sys.executable, "-m", "rdbscan"]


def run(args: list[str], label: str) -> dict:
    """Run a command; its wall time, CPU time and peak RSS (MiB) with its waited-for children
    (the CPU time of a Dask cluster's workers is not among them)."""
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
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),  # with its waited-for children
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
    }
    print(json.dumps(out), flush=True)
    return out


class LoadSampler:
    """The 1-minute load average, sampled every 5 s while a step runs (min, mean, max)."""

    def __init__(self):
        self.seen = [os.getloadavg()[0]]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while not self.stop.wait(5):
            self.seen.append(os.getloadavg()[0])

    def finish(self) -> dict:
        self.stop.set()
        self.thread.join()
        self.seen.append(os.getloadavg()[0])
        return {
            "min": round(min(self.seen), 2),
            "mean": round(sum(self.seen) / len(self.seen), 2),
            "max": round(max(self.seen), 2),
        }


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


def make_populated(n: int, keys: int, out: Path, port: int) -> list[Path]:
    """n distinct dumps of `keys` keys (DEBUG POPULATE keys sNNN on a real redis-server), made
    once in out/."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"s{i:03d}.rdb" for i in range(n)]
    todo = [p for p in paths if not p.exists()]
    if not todo:
        return paths
    sys.path.insert(0, str(HERE.parent / "tests" / "fixtures" / "diff"))
    from make_pairs import Redis, start_server, stop_server  # the fixtures' RESP client

    (out / "server.rdb").unlink(missing_ok=True)
    proc = start_server(port, out, "server")
    try:
        r = Redis(port)
        t0 = time.perf_counter()
        for p in todo:
            r("FLUSHALL")
            r("DEBUG", "POPULATE", keys, p.stem)
            r("SAVE")
            os.replace(out / "server.rdb", p)
        print(f"made {len(todo)} dumps of {keys:,} keys in {time.perf_counter() - t0:.0f} s")
    finally:
        stop_server(proc, port)
    return paths


def scale(work: Path, n: int, keys: int, port: int) -> dict:
    """The scale run: n dumps of `keys` keys, --jobs 2 and a 2-worker cluster, a report."""
    dumps = [str(p) for p in make_populated(n, keys, work / "dumps", port)]
    total_bytes = sum(os.path.getsize(p) for p in dumps)
    ds, ds_dask = work / "dataset-jobs2", work / "dataset-dask2"
    for p in (ds, ds_dask):
        shutil.rmtree(p, ignore_errors=True)
    common = ["load", "-q", "--instance", "scale", *dumps]
    out: dict = {"dumps": n, "keys_per_dump": keys, "dump_bytes": total_bytes}

    def step(name: str, args: list[str], label: str, sampler=None) -> dict:
        loads = LoadSampler()
        r = run(args, label)
        if sampler is not None:
            r["workers_peak_rss_mib"] = sampler.finish()
        r["load_average"] = loads.finish()
        out[name] = r
        print(json.dumps({name: r}), flush=True)
        (work / "fleet-scale.json").write_text(json.dumps(out, indent=1))
        return r

    step("parquet_jobs2", [*RDBSCAN, *common, "-j", "2", "--parquet", str(ds)], "load -j 2")
    out["dataset_bytes"] = du(ds)
    from dask.distributed import LocalCluster

    with LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    ) as cluster:
        pids = [w.process.pid for w in cluster.workers.values()]  # type: ignore[union-attr]
        step(
            "parquet_dask2",
            [*RDBSCAN, *common, "--dask", cluster.scheduler_address, "--parquet", str(ds_dask)],
            "load --dask (2 workers)",
            RssSampler(pids),
        )
    out["dataset_dask_bytes"] = du(ds_dask)
    shutil.rmtree(ds_dask)
    for key in ("parquet_jobs2", "parquet_dask2"):
        out[key]["mb_per_s"] = round(total_bytes / 1e6 / out[key]["wall_s"], 1)
        out[key]["keys_per_s"] = round(n * keys / out[key]["wall_s"])
    step("report_dataset", [*RDBSCAN, "report", "-q", "--format", "json", str(ds)], "report DIR")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default="/tmp/rdbscan-bench", type=Path, help="mixed.rdb, pop5m.rdb")
    ap.add_argument(
        "--work", type=Path, help="default: /tmp/rdbscan-fleet-bench (--scale: ...-fleet-scale)"
    )
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--skip-single", action="store_true", help="skip the bytes-per-key part")
    ap.add_argument("--scale", type=int, metavar="N", help="the scale run: N dumps (above)")
    ap.add_argument("--keys", type=int, default=1_000_000, help="keys per dump of --scale")
    ap.add_argument("--port", type=int, default=16411, help="redis-server's port for --scale")
    args = ap.parse_args()
    if args.scale:
        work = args.work or Path("/tmp/rdbscan-fleet-scale")
        work.mkdir(parents=True, exist_ok=True)
        began = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
        out = {
            "cores": os.cpu_count(),
            "began": began,
            **scale(work, args.scale, args.keys, args.port),
        }
        (work / "fleet-scale.json").write_text(json.dumps(out, indent=1))
        print(f"written: {work / 'fleet-scale.json'}")
        return
    args.work = args.work or Path("/tmp/rdbscan-fleet-bench")
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
