#!/usr/bin/env python3
"""Accuracy of rdbscan's memory model against the server's own `MEMORY USAGE key SAMPLES 0`.

For every dump with a manifest.json (the corpus layout: <server>-<version>/{small,seed1,
variants/*}/), parse the dump, estimate each key with the profile rdbscan would pick, and
compare with the manifest's `memory_usage`.  Prints, as Markdown:

1. per dump: keys compared, median and 95th percentile of |estimate - MEMORY USAGE| /
   MEMORY USAGE, the error of the totals, and the same figures for rdbtools' memory
   profiler on RDB <= 9 dumps (when rdbtools is installed);
2. per server version and type/encoding (all that version's dumps together).

Usage:
    python bench/memory_accuracy.py                     # tests/fixtures
    python bench/memory_accuracy.py --corpus /work/shared/dumps
    python bench/memory_accuracy.py --target 7.2 DIR... # force a profile

Cluster dumps of Redis 7.0/7.2 carry no cluster marker, so the operator has to say it
(`--target 7.0+cluster`); this script does that for dumps whose manifest says
`server.mode = cluster`, as an operator would.  Damaged dumps are compared on the keys read
before the damage.

(Here, beside tests/test_memory.py, which imports it; `python bench/memory_accuracy.py` runs its main.)
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rdbscan.model import memory  # noqa: E402
from rdbscan.model.estimate import estimate  # noqa: E402
from rdbscan.rdb.errors import RDBError  # noqa: E402
from rdbscan.rdb.parser import DumpInfo, parse  # noqa: E402


def manifest_key(entry: dict) -> bytes:
    if "key_b64" in entry:
        return base64.b64decode(entry["key_b64"])
    return entry["key"].encode()


def find_dumps(root: Path) -> list[Path]:
    """Directories under root holding a manifest.json (not the third-party `public/`)."""
    out = []
    for m in sorted(root.rglob("manifest.json")):
        if "public" in m.relative_to(root).parts:
            continue
        out.append(m.parent)
    return out


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile of sorted values."""
    if not values:
        return float("nan")
    return values[max(0, math.ceil(q * len(values)) - 1)]


# Strings the corpus grew in place (APPEND, SETRANGE, SETBIT, PFADD): the server keeps them raw
# whatever their size, which no dump shows; their encoding is not counted as wrong.
GROWN_IN_PLACE = (b"hll:", b"str:append", b"str:setrange", b"bitmap:")


def read_dump(d: Path, quantum: int = 8):
    with open(d / "manifest.json") as f:
        manifest = json.load(f)
    path = d / (manifest.get("rdb_file") or "dump.rdb")
    info = DumpInfo()
    recs = []
    error = None
    try:
        with open(path, "rb") as f:
            for r in parse(f, info, size=os.path.getsize(path), quantum=quantum):
                recs.append(r)
    except RDBError as e:
        error = e.describe() if hasattr(e, "describe") else str(e)
    return manifest, path, info, recs, error


def profile_for_dump(manifest: dict, info, target: str | None):
    if target:
        return memory.select_profile(info, target)
    prof = memory.select_profile(info, None)
    notes = (manifest.get("server_build") or {}).get("build_notes") or ""
    if str(manifest.get("format", "")).startswith("rdbscan-live-fixture") and prof.quantum == 8:
        # tests/fixtures/live: made with ../shared/tools/servers, Debian's packages (system
        # jemalloc: 5.3.0 in trixie for Redis 8.0 / Valkey 8.1, 5.3.1 in sid for 8.6 / 9.x).
        return prof.with_quantum(16, prof.name.startswith(("8.6", "valkey-9")))
    if "system jemalloc" in notes and prof.quantum == 8:
        # A distribution package linking the system jemalloc (16-byte quantum): what the
        # operator says with `--target <version>/16`, or `/16p` for Debian sid's jemalloc
        # 5.3.1 (large allocations in whole pages).
        allocator = (manifest.get("info_memory") or {}).get("mem_allocator") or ""
        prof = prof.with_quantum(16, allocator == "jemalloc-5.3.1")
    mode = (manifest.get("server") or {}).get("mode")
    if mode == "cluster" and not prof.cluster and prof.cluster_key_extra:
        # What the operator tells rdbscan for a cluster dump without slot records.
        prof = memory.select_profile(info, prof.name + "+cluster")
    return prof


def evaluate(d: Path, target: str | None = None) -> dict | None:
    """Per-key relative errors of one dump; None when the manifest has no MEMORY USAGE."""
    manifest, path, info, recs, error = read_dump(d)
    prof = profile_for_dump(manifest, info, target)
    if prof.quantum != 8:  # the allocator also decides some encodings (kv.py): read again
        manifest, path, info, recs, error = read_dump(d, prof.quantum)
    want = {(e["db"], manifest_key(e)): e for e in manifest["keys"]}
    errors = []
    by_enc: dict[tuple[str, str], list[float]] = defaultdict(list)
    est_total = mu_total = 0
    enc_wrong = []
    for r in recs:
        e = want.get((r.db, r.key))
        if (
            e is not None
            and r.encoding != e["encoding"]
            and not (
                e["encoding"] == "raw"
                and r.encoding == "embstr"
                and r.key.startswith(GROWN_IN_PLACE)
            )
        ):
            enc_wrong.append(r.key)
        if e is None or e.get("memory_usage") is None:
            continue
        mu = e["memory_usage"]
        est = estimate(r, prof)
        err = abs(est - mu) / mu
        errors.append(err)
        by_enc[(r.type, r.encoding)].append(err)
        est_total += est
        mu_total += mu
    if not errors:
        return None
    errors.sort()
    return {
        "dir": d,
        "path": path,
        "manifest": manifest,
        "info": info,
        "profile": prof,
        "error": error,
        "n": len(errors),
        "median": statistics.median(errors),
        "p95": pct(errors, 0.95),
        "total": (est_total - mu_total) / mu_total,
        "est_total": est_total,
        "mu_total": mu_total,
        "by_enc": by_enc,
        "want": want,
        "enc_wrong": enc_wrong,
    }


# -- rdbtools ---------------------------------------------------------------------------------


def rdbtools_errors(path: Path, info, want: dict) -> dict | None:
    """Errors of rdbtools' memory profiler on the same dump (RDB <= 9 only)."""
    if (info.rdb_version or 99) > 9:
        return None
    try:
        from rdbtools import MemoryCallback, RdbParser
    except ImportError:
        return None

    class Sink:
        def __init__(self):
            self.records = []

        def next_record(self, record):
            self.records.append(record)

        def end_rdb(self):
            pass

    sink = Sink()
    major, minor = info.version_tuple()
    cb = MemoryCallback(sink, 64, redis_version=f"{major}.{minor}", string_escape=None)
    try:
        RdbParser(cb).parse(str(path))
    except Exception:  # noqa: BLE001 - rdbtools fails on input it does not know; keep what it read
        pass
    errors = []
    est_total = mu_total = 0
    for rec in sink.records:
        if rec.key is None:
            continue
        key = rec.key if isinstance(rec.key, bytes) else str(rec.key).encode()
        e = want.get((rec.database, key))
        if e is None or e.get("memory_usage") is None:
            continue
        mu = e["memory_usage"]
        errors.append(abs(rec.bytes - mu) / mu)
        est_total += rec.bytes
        mu_total += mu
    if not errors:
        return None
    errors.sort()
    return {
        "n": len(errors),
        "median": statistics.median(errors),
        "p95": pct(errors, 0.95),
        "total": (est_total - mu_total) / mu_total,
    }


# -- output -----------------------------------------------------------------------------------


def fmt(x: float, signed: bool = False) -> str:
    if x != x:
        return "-"
    return f"{x * 100:+.2f}%" if signed else f"{x * 100:.2f}%"


def version_label(r: dict) -> str:
    parts = r["dir"].parts
    for _i, p in enumerate(parts):
        if p.startswith(("redis-", "valkey-")):
            return p
    return r["info"].server_version or "?"


def dump_label(r: dict, root: Path) -> str:
    try:
        return str(r["dir"].relative_to(root))
    except ValueError:
        return str(r["dir"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="*", help="dump directories (default: all under the root)")
    ap.add_argument("--corpus", metavar="DIR", help="corpus root (default: tests/fixtures)")
    ap.add_argument("--target", help="force a memory profile (e.g. 7.2, valkey-8.0)")
    ap.add_argument("--no-rdbtools", action="store_true", help="skip the rdbtools comparison")
    args = ap.parse_args(argv)
    root = Path(args.corpus or ROOT / "tests" / "fixtures").resolve()
    dirs = [Path(d).resolve() for d in args.dirs] or find_dumps(root)

    results = []
    skipped = []
    for d in dirs:
        r = evaluate(d, args.target)
        if r is None:
            skipped.append(d)
            continue
        r["rdbtools"] = (
            None if args.no_rdbtools else rdbtools_errors(r["path"], r["info"], r["want"])
        )
        results.append(r)

    print("### Per dump\n")
    print(
        "| dump | profile | keys | median | p95 | total | encodings wrong | rdbtools median "
        "| rdbtools p95 | rdbtools total |"
    )
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for r in results:
        t = r["rdbtools"]
        note = " (damaged: keys before the damage)" if r["error"] else ""
        print(
            f"| {dump_label(r, root)}{note} | {r['profile'].name} | {r['n']} | "
            f"{fmt(r['median'])} | {fmt(r['p95'])} | {fmt(r['total'], True)} | "
            f"{len(r['enc_wrong'])} | "
            + (
                f"{fmt(t['median'])} | {fmt(t['p95'])} | {fmt(t['total'], True)} |"
                if t
                else "- | - | - |"
            )
        )
    if skipped:
        print(
            f"\nNo MEMORY USAGE in the manifest (not compared): "
            f"{', '.join(dump_label({'dir': d}, root) for d in skipped)}"
        )

    print("\n### Per server version and type/encoding (all its dumps)\n")
    print("| version | type/encoding | keys | median | p95 | max |")
    print("|---|---|--:|--:|--:|--:|")
    grouped: dict[str, dict[tuple[str, str], list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        g = grouped[version_label(r)]
        for k, v in r["by_enc"].items():
            g[k].extend(v)
    for ver in sorted(grouped, key=_version_key):
        for (typ, enc), errs in sorted(grouped[ver].items()):
            errs.sort()
            print(
                f"| {ver} | {typ}/{enc} | {len(errs)} | {fmt(statistics.median(errs))} | "
                f"{fmt(pct(errs, 0.95))} | {fmt(errs[-1])} |"
            )
    return 0


def _version_key(label: str):
    server, _, ver = label.partition("-")
    nums = [int(x) if x.isdigit() else 0 for x in ver.replace("-", ".").split(".")[:3]]
    return (server != "redis", nums)


if __name__ == "__main__":
    sys.exit(main())
