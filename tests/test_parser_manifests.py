"""Every key of every fixture dump against the manifest the server wrote next to it:
db, type, encoding, length, expiry, LFU counter, per-db counts, checksum status."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from common import FIXTURES
from manifest_compare import compare, grown_in_place, manifest_key

from rdbscan.model.slots import key_slot

DAMAGED = {"truncated", "corrupt-value", "corrupt-type", "aof-preamble"}


def _intact(root: Path):
    out = []
    for m in (
        sorted(root.glob("*/small/manifest.json"))
        + sorted(root.glob("*/variants/*/manifest.json"))
        + sorted(root.glob("*/seed1/manifest.json"))
    ):
        if m.parent.name in DAMAGED:
            continue
        if (m.parent / "dump.rdb").exists():
            out.append(m)
    return out


FIXTURE_MANIFESTS = _intact(FIXTURES)


def test_every_version_has_a_fixture():
    versions = {m.parts[-3] for m in FIXTURE_MANIFESTS if m.parent.name == "small"}
    assert len(versions) == 18


@pytest.mark.parametrize(
    "manifest",
    FIXTURE_MANIFESTS,
    ids=[str(m.parent.relative_to(FIXTURES)) for m in FIXTURE_MANIFESTS],
)
def test_fixture_matches_manifest(manifest):
    problems, info, recs = compare(str(manifest.parent / "dump.rdb"), str(manifest))
    assert problems == []
    m = json.loads(manifest.read_text())
    assert len(recs) == m["key_count"]
    assert info.rdb_version == m["rdb_version"]
    assert info.magic == m["rdb_magic"]
    expected_crc = "disabled" if m["config"].get("rdbchecksum") == "no" else "ok"
    assert info.checksum == expected_crc
    assert info.complete
    if m["server"]["version"] not in ("2.8.24",):
        assert info.server == m["server"]["name"]
        assert info.server_version == m["server"]["version"]
    if m.get("functions"):
        assert info.functions == [f["library_name"] for f in m["functions"]]


def test_lru_and_lfu_variants():
    for name, attr, field in (("lru", "idle", "lru_idle_s"), ("lfu", "freq", "lfu_freq")):
        d = FIXTURES / "redis-7.0.15" / "variants" / name
        problems, info, recs = compare(str(d / "dump.rdb"), str(d / "manifest.json"))
        assert problems == []
        want = {
            (e["db"], manifest_key(e)): e[field]
            for e in json.loads((d / "manifest.json").read_text())["keys"]
        }
        got = {(r.db, r.key): getattr(r, attr) for r in recs}
        assert all(v is not None for v in got.values())
        if name == "lfu":
            assert got == want
        else:
            # IDLE is saved some seconds after the manifest read it; never less.
            assert all(0 <= got[k] - want[k] <= 30 for k in want)


@pytest.mark.parametrize(
    "version", ["redis-7.0.15", "redis-7.4.1", "redis-8.0-m01", "valkey-8.0.1"]
)
def test_cluster_slots(version):
    d = FIXTURES / version / "variants" / "cluster"
    m = json.loads((d / "manifest.json").read_text())
    problems, info, recs = compare(str(d / "dump.rdb"), str(d / "manifest.json"))
    assert problems == []
    by_key = {manifest_key(e): e["slot"] for e in m["keys"]}
    assert {r.key: key_slot(r.key) for r in recs} == by_key
    computed = Counter(key_slot(r.key) for r in recs)
    assert dict(computed) == {int(s): n for s, n in m["cluster"]["slot_key_counts"].items()}
    announced = {slot: keys for slot, keys, _ in info.slot_info}
    records = m["cluster"]["rdb_slot_records"]
    if version == "redis-7.0.15":
        assert announced == {}  # 7.0 writes no slot records
    else:
        assert len(info.slot_info) == len(records["records"])
        assert announced == dict(computed)
        expires = Counter(key_slot(r.key) for r in recs if r.expire_ms is not None)
        assert {s: e for s, _, e in info.slot_info if e} == dict(expires)
        assert info.slot_info_source == (
            "aux-slot-info" if version.startswith("valkey") else "opcode-244"
        )


def test_quicklist_plain_nodes():
    """7.4 stores list elements over 8 KiB as PLAIN quicklist nodes."""
    d = FIXTURES / "redis-7.4.1" / "small"
    _, _, recs = compare(str(d / "dump.rdb"), str(d / "manifest.json"))
    rec = next(r for r in recs if r.key == b"list:plain")
    assert rec.rdb_type == 18
    assert rec.max_elem == 10_000
    assert 10_000 in rec.nodes and 9_000 in rec.nodes


def test_streams_and_hash_field_ttls():
    d = FIXTURES / "redis-7.4.1" / "small"
    m = json.loads((d / "manifest.json").read_text())
    _, _, recs = compare(str(d / "dump.rdb"), str(d / "manifest.json"))
    got = {(r.db, r.key): r for r in recs}
    checked = 0
    for e in m["keys"]:
        r = got[(e["db"], manifest_key(e))]
        if e["type"] == "stream":
            s = e["stream"]
            assert r.stream.last_id == s["last-generated-id"]
            assert r.stream.entries_added == s["entries-added"]
            assert r.stream.max_deleted_id == s["max-deleted-entry-id"]
            assert len(r.stream.groups) == s["groups"]
            for g, want in zip(
                sorted(r.stream.groups, key=lambda g: g.name),
                sorted(s["groups_detail"], key=lambda g: g["name"]),
            ):
                assert g.name.decode() == want["name"]
                assert g.pending == want["pending"]
                assert len(g.consumers) == want["consumers"]
                assert g.last_delivered_id == want["last-delivered-id"]
            checked += 1
        if "fields_with_ttl" in e or e["encoding"] == "listpackex":
            assert r.field_ttls.fields_with_ttl == e.get("fields_with_ttl", 0)
            fe = e.get("field_expires") or {}
            assert r.field_ttls.min_field_expire_ms == (min(fe.values()) if fe else None)
            checked += 1
    assert checked >= 20


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("RDBSCAN_CORPUS"),
    reason="set RDBSCAN_CORPUS to the shared dumps folder to walk the corpus",
)
def test_whole_corpus():
    root = Path(os.environ["RDBSCAN_CORPUS"])
    manifests = _intact(root)
    assert len(manifests) >= 35
    failures = {}
    for m in manifests:
        problems, _, _ = compare(str(m.parent / "dump.rdb"), str(m))
        if problems:
            failures[str(m)] = problems[:5]
    assert failures == {}


def _encoding_mismatches(manifest: Path) -> list:
    """Keys whose encoding is not the server's OBJECT ENCODING, compared exactly (compare()
    lets a short string read embstr for raw).  Strings grown in place (APPEND, SETRANGE,
    SETBIT, PFADD) stay out: the server keeps them raw, which the dump does not show."""
    m = json.loads(manifest.read_text())
    _, _, recs = compare(str(manifest.parent / "dump.rdb"), str(manifest))
    got = {(r.db, r.key): r.encoding for r in recs}
    return [
        (manifest_key(e), got[(e["db"], manifest_key(e))], e["encoding"])
        for e in m["keys"]
        if not grown_in_place(manifest_key(e)) and got[(e["db"], manifest_key(e))] != e["encoding"]
    ]


CLUSTER_FIXTURES = sorted(FIXTURES.glob("*/variants/cluster/manifest.json"))


@pytest.mark.parametrize("manifest", CLUSTER_FIXTURES, ids=[m.parts[-4] for m in CLUSTER_FIXTURES])
def test_cluster_dump_encodings_exact(manifest):
    assert _encoding_mismatches(manifest) == []


def test_redis82_cluster_hashtag_sessions_are_raw():
    """Redis 8.2.3 in cluster mode: three sessions with a TTL whose key and value fill the
    64-byte object exactly are raw (the expiry counts in 8.2, not in 8.6)."""
    d = FIXTURES / "redis-8.2.3" / "variants" / "cluster"
    m = json.loads((d / "manifest.json").read_text())
    _, _, recs = compare(str(d / "dump.rdb"), str(d / "manifest.json"))
    got = {r.key: r for r in recs}
    for key, klen, vlen in (
        (b"{user:42}:session:0", 19, 22),
        (b"{user:42}:session:16", 20, 21),
        (b"{user:7}:session:28", 19, 18),
    ):
        r = got[key]
        assert (r.key_length, r.length, r.expire_ms is not None) == (klen, vlen, True)
        assert r.encoding == "raw"
    assert m["server"]["mode"] == "cluster" and len(recs) == m["key_count"] == 722


@pytest.mark.skipif(
    not os.environ.get("RDBSCAN_CORPUS"),
    reason="set RDBSCAN_CORPUS to the shared dumps folder to walk the corpus",
)
def test_cluster_encodings_whole_corpus():
    """Every cluster-mode dump of the corpus (Redis 7.0-8.6, Valkey 8.0-9.1): not one key
    whose encoding differs from OBJECT ENCODING."""
    manifests = sorted(Path(os.environ["RDBSCAN_CORPUS"]).glob("*/variants/cluster/manifest.json"))
    assert len(manifests) >= 8
    failures = {str(m): bad for m in manifests if (bad := _encoding_mismatches(m))}
    assert failures == {}
