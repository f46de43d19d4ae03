#!/usr/bin/env python3
"""Where the time of a key goes (issue 28): one dump through each stage of the pipeline.

    python bench/stages.py DUMP [--runs 3] [--queries]
    python bench/stages.py DB.duckdb [--runs 3] [--queries]    (the report's sections only, over a loaded database)

Each stage runs the pipeline up to that stage and stops there, so a stage's cost is the
difference to the one before:

  read        the file's bytes through the reader (decompression, no parsing)
  parse       + the record loop filling the compiled row batch (taken and dropped)
  arrow       + the batch turned into Arrow arrays (rows.take_keys), dropped
  load        + DuckDB ingestion: `rdbscan load` (db/load.load) into a new database
  report      the report's sections over that database, one by one (on_section)

Figures are process CPU seconds (user + system, every thread: resource.getrusage), which a
loaded machine inflates far less than wall time, and wall seconds beside them; the median of
--runs runs.  The same CPU figure of `redis-check-rdb DUMP` is the yardstick.  Given a database
written by `rdbscan load`, only the report's sections run (a change to their SQL compared
before and after without loading the dump each time).  --queries: also the CPU of each query
of the report, and of each base relation (rslots, rfamilies, ...) where the query that first
reads it creates it.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def child_cpu(cmd: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def stage_read(path: str) -> None:
    from rdbscan.rdb.source import open_source

    src = open_source(path)
    while src.stream.read(1 << 20):
        pass


def stage_parse(path: str, arrow: bool) -> int:
    from rdbscan.db.rows import RowBuilder
    from rdbscan.rdb.parser import DumpInfo, parse
    from rdbscan.rdb.source import open_source

    info = DumpInfo()
    src = open_source(path)
    rows = RowBuilder(1, info)
    for rec in parse(src.stream, info, size=src.size, initial=src.initial, sink=rows.sink):
        if rec is not None:
            rows.add(rec)
        if rows.full:
            rows.take_keys() if arrow else rows.sink.take()  # (take: the compiled batch)
            rows.reset()
    rows.take_keys() if arrow else rows.sink.take()  # (take: the compiled batch)
    return info.keys


def stage_load(path: str, db: str) -> None:
    from rdbscan.db.load import load

    load([path], db)


def stage_report(db: str) -> dict[str, float]:
    from rdbscan.reports.engine.database import open_report_database
    from rdbscan.reports.report.build import build_report

    marks: list[tuple[str, float]] = []
    con = open_report_database(db)
    try:
        build_report(con, on_section=lambda name: marks.append((name, cpu())))
        marks.append(("(end)", cpu()))
    finally:
        con.close()
    return {marks[i][0]: marks[i + 1][1] - marks[i][1] for i in range(len(marks) - 1)}


def stage_queries(db: str) -> dict[str, float]:
    """CPU seconds of each query of one report over `db` (its rows, run once per parameters),
    and of the base relations each query created first ("+ rslots, rhashtags")."""
    from rdbscan.reports.engine import relations
    from rdbscan.reports.engine.database import open_report_database
    from rdbscan.reports.report.build import build_report

    spent: dict[str, float] = {}
    prepare, run_dicts = relations.prepare, relations.run_dicts

    def timed_prepare(con, values=None, needs=None, created=None):
        before, c0 = set(created or ()), cpu()
        made = prepare(con, values, needs, created)
        if made - before:
            name = "+ " + ", ".join(sorted(made - before))
            spent[name] = spent.get(name, 0.0) + cpu() - c0
        return made

    def timed_run(con, query, values=None):
        c0 = cpu()
        rows = run_dicts(con, query, values)
        spent[query.name] = spent.get(query.name, 0.0) + cpu() - c0
        return rows

    relations.prepare, relations.run_dicts = timed_prepare, timed_run  # what Runner.rows calls
    con = open_report_database(db)
    try:
        build_report(con)
    finally:
        con.close()
        relations.prepare, relations.run_dicts = prepare, run_dicts
    return spent


def timed(fn, *args) -> tuple[float, float]:
    c0, t0 = cpu(), time.perf_counter()
    fn(*args)
    return cpu() - c0, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dump")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--queries", action="store_true", help="also the CPU of each report query")
    a = ap.parse_args()
    results: dict[str, list[tuple[float, float]]] = {}
    sections: dict[str, list[float]] = {}
    queries: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.runs):
            if a.dump.endswith(".duckdb"):
                c0, t0 = cpu(), time.perf_counter()
                for name, secs in stage_report(a.dump).items():
                    sections.setdefault(name, []).append(secs)
                results.setdefault("report queries", []).append(
                    (cpu() - c0, time.perf_counter() - t0)
                )
                if a.queries:
                    for name, secs in stage_queries(a.dump).items():
                        queries.setdefault(name, []).append(secs)
                continue
            if shutil.which("redis-check-rdb"):
                results.setdefault("redis-check-rdb", []).append(
                    child_cpu(["redis-check-rdb", a.dump])
                )
            results.setdefault("read", []).append(timed(stage_read, a.dump))
            results.setdefault("parse", []).append(timed(stage_parse, a.dump, False))
            results.setdefault("arrow", []).append(timed(stage_parse, a.dump, True))
            db = os.path.join(tmp, f"run{i}.duckdb")
            results.setdefault("load", []).append(timed(stage_load, a.dump, db))
            c0, t0 = cpu(), time.perf_counter()
            for name, secs in stage_report(db).items():
                sections.setdefault(name, []).append(secs)
            results.setdefault("report queries", []).append((cpu() - c0, time.perf_counter() - t0))
            if a.queries:
                for name, secs in stage_queries(db).items():
                    queries.setdefault(name, []).append(secs)
    base = statistics.median(c for c, _ in results.get("redis-check-rdb", [(float("nan"), 0)]))
    print(f"{a.dump}: median of {a.runs} runs; CPU s (user+sys, all threads), wall s\n")
    print("| stage | CPU s | x redis-check-rdb CPU | wall s |")
    print("|---|---:|---:|---:|")
    for name, runs in results.items():
        c = statistics.median(r[0] for r in runs)
        w = statistics.median(r[1] for r in runs)
        print(f"| {name} | {c:.2f} | {c / base:.2f} | {w:.2f} |")
    print("\n| report section | CPU s |")
    print("|---|---:|")
    for name, runs in sorted(sections.items(), key=lambda kv: -statistics.median(kv[1])):
        print(f"| {name} | {statistics.median(runs):.2f} |")
    if queries:
        print("\n| report query (+ base relations it created) | CPU s |")
        print("|---|---:|")
        for name, runs in sorted(queries.items(), key=lambda kv: -statistics.median(kv[1])):
            print(f"| {name} | {statistics.median(runs):.3f} |")


if __name__ == "__main__":
    sys.exit(main())
