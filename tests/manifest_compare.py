"""Compare parsed KeyRecords with a corpus manifest.json; shared by the fixture tests and the
opt-in whole-corpus test."""

from __future__ import annotations

import base64
import json
import os
from collections import Counter

from rdbscan.rdb.parser import DumpInfo, parse


def manifest_key(entry: dict) -> bytes:
    if "key_b64" in entry:
        return base64.b64decode(entry["key_b64"])
    return entry["key"].encode()


# Strings the corpus grew in place (APPEND, SETRANGE, SETBIT, PFADD): the server keeps them
# raw whatever their size, which the dump does not show (populate.py).
GROWN_IN_PLACE = (b"hll:", b"str:append", b"str:setrange", b"bitmap:")


def grown_in_place(key: bytes) -> bool:
    return key.startswith(GROWN_IN_PLACE)


def compare(dump_path: str, manifest_path: str) -> tuple[list[str], DumpInfo, list]:
    """Differences between what the parser reads from dump_path and the manifest."""
    with open(manifest_path) as f:
        manifest = json.load(f)
    info = DumpInfo()
    with open(dump_path, "rb") as f:
        recs = list(parse(f, info, size=os.path.getsize(dump_path)))
    problems = []
    got = {(r.db, r.key): r for r in recs}
    if len(got) != len(recs):
        problems.append("duplicate (db, key) pairs in parsed output")
    want = {(e["db"], manifest_key(e)): e for e in manifest["keys"]}
    for k in want.keys() - got.keys():
        problems.append(f"missing key {k}")
    for k in got.keys() - want.keys():
        problems.append(f"unexpected key {k}")
    for k in want.keys() & got.keys():
        e, r = want[k], got[k]
        if r.type != e["type"]:
            problems.append(f"{k}: type {r.type} != {e['type']}")
        enc_ok = (
            r.encoding == e["encoding"]
            or (e["encoding"] == "raw" and r.encoding == "embstr" and e["length"] <= 44)
            or (e["encoding"] == "raw" and r.encoding == "embstr" and grown_in_place(r.key))
        )
        if not enc_ok:
            problems.append(f"{k}: encoding {r.encoding} != {e['encoding']} (len {e['length']})")
        if r.length != e["length"]:
            problems.append(f"{k}: length {r.length} != {e['length']}")
        exp = e.get("expire_at_ms")
        if exp is None:
            if r.expire_ms is not None:
                problems.append(f"{k}: expiry {r.expire_ms} but manifest has none")
        elif r.expire_ms is None:
            problems.append(f"{k}: no expiry but manifest has {exp}")
        elif e.get("expire_approx"):
            if abs(r.expire_ms - exp) > 2000:
                problems.append(f"{k}: expiry {r.expire_ms} != ~{exp}")
        elif r.expire_ms != exp:
            problems.append(f"{k}: expiry {r.expire_ms} != {exp}")
        if "lfu_freq" in e and r.freq != e["lfu_freq"]:
            problems.append(f"{k}: lfu {r.freq} != {e['lfu_freq']}")
    per_db = Counter(r.db for r in recs)
    want_db = {int(db): n for db, n in manifest.get("dbsize", {}).items()}
    if want_db and dict(per_db) != want_db:
        problems.append(f"per-db counts {dict(per_db)} != {want_db}")
    return problems, info, recs
