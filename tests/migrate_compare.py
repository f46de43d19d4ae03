"""Projections of one corpus dump onto the other servers of the corpus, against each target's
own manifest (MEMORY USAGE and OBJECT ENCODING of the same data, written by that server): the
figures `rdbscan migrate` is held to (tests/test_migrate.py, docs/migrate.md)."""

from __future__ import annotations

import functools
import json
import os
import statistics
import tempfile
from pathlib import Path

import duckdb
from manifest_compare import grown_in_place, manifest_key

from rdbscan.migrate.run import migrate
from rdbscan.migrate.servers import parse_server


def target_spec(manifest: dict) -> str | None:
    """The `--to` of the server that wrote a corpus manifest (its allocator included), None
    for a server that is no release (Valkey unstable)."""
    server = manifest["server"]
    name, version = server["name"], server["version"]
    if version.startswith("255."):
        return None
    major, minor = version.split(".")[:2]
    spec = f"{name}-{major}.{minor}"
    notes = (manifest.get("server_build") or {}).get("build_notes") or ""
    if "system jemalloc" in notes or "Debian" in notes:
        # a distribution package linking the system jemalloc: 16-byte quantum, and jemalloc
        # 5.3.1 (Debian sid) rounds large allocations to whole pages
        allocator = (manifest.get("info_memory") or {}).get("mem_allocator") or ""
        spec += "/16p" if allocator == "jemalloc-5.3.1" else "/16"
    return spec


def corpus_dirs(root: Path, variant: str = "seed1") -> dict[str, Path]:
    """{server dir name: its `variant` dir} of the corpus dumps that have a manifest."""
    out = {}
    for d in sorted(root.iterdir()):
        m = d / variant / "manifest.json"
        if m.exists() and (d / variant / "dump.rdb").exists():
            out[d.name] = d / variant
    return out


@functools.cache
def _manifest(d: Path) -> dict:
    return json.loads((d / "manifest.json").read_text())


@functools.cache
def projections(source: Path, targets: tuple[str, ...]) -> tuple[dict, dict]:
    """({target: {(db, key): (encoding, memory_bytes)}}, {target: loads}) of one dump, through
    `rdbscan migrate`'s library call."""
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "p.duckdb")
        m = migrate([str(source / "dump.rdb")], list(targets), db)
        assert m.results[0].error is None, m.results[0].error
        con = duckdb.connect(db)
        rows = con.execute(
            "SELECT p.target, k.db, k.key_bytes, p.encoding, p.memory_bytes "
            "FROM key_projections p JOIN keys k USING (dump_id, file_offset)"
        ).fetchall()
        con.close()
    out: dict[str, dict] = {t["target"]: {} for t in m.report["summary"]}
    for target, dbn, key, enc, mem in rows:
        out[target][(dbn, bytes(key))] = (enc, mem)
    return out, {t["target"]: t["loads"] for t in m.report["summary"]}


def loads(source: Path, target: Path, targets: tuple[str, ...]) -> bool:
    """Whether `rdbscan migrate` says the target server loads the source dump."""
    spec = target_spec(_manifest(target))
    return spec is not None and projections(source, targets)[1][parse_server(spec).name]


def same_data(a: dict | None, b: dict) -> bool:
    """Whether two servers' manifests hold the same value for a key: the generator draws some
    values from a random stream that the newer servers' extra keys advance, so the same key
    can hold other data (equal values; for the large values a manifest leaves out, the same
    type and length)."""
    if a is None or a["type"] != b["type"] or a["length"] != b["length"]:
        return False
    if a.get("value") is None and b.get("value") is None:
        return True
    return a.get("value") == b.get("value")


def compare(source: Path, target: Path, targets: tuple[str, ...]) -> dict:
    """Per-key figures of the projection of `source` onto the server of `target`."""
    spec = target_spec(_manifest(target))
    assert spec is not None
    name = parse_server(spec).name
    got = projections(source, targets)[0][name]
    errors = []
    est = want_total = 0
    encodings = []
    written = {(e["db"], manifest_key(e)): e for e in _manifest(source)["keys"]}
    for e in _manifest(target)["keys"]:
        k = (e["db"], manifest_key(e))
        p = got.get(k)
        mu = e.get("memory_usage")
        if p is None or mu is None or not same_data(written.get(k), e):
            continue
        enc, mem = p
        errors.append(abs(mem - mu) / mu)
        est += mem
        want_total += mu
        if enc != e["encoding"] and not (
            (e["encoding"] == "raw" and enc == "embstr" and grown_in_place(k[1]))
            or (e["encoding"] == "unknown" and e["type"] == "stream")  # 5.0: no name for it
        ):
            encodings.append((k[1].decode("utf-8", "replace"), enc, e["encoding"]))
    errors.sort()
    return {
        "target": name,
        "keys": len(errors),
        "median": statistics.median(errors) if errors else 0.0,
        "p95": errors[int(0.95 * (len(errors) - 1))] if errors else 0.0,
        "total": (est - want_total) / want_total if want_total else 0.0,
        "encodings": encodings,
    }
