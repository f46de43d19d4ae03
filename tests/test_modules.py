"""Module values: keys under the server's type name, vector sets read (element count,
dimensions, the server's own memory estimate), every other module type skipped with its name
kept and its memory marked a lower bound.  Against dumps of live servers (tests/fixtures/live)
and hand-built values."""

from __future__ import annotations

import io
import json
from pathlib import Path

import duckdb
import pytest
import rdbwriter as W

from rdbscan.db.load import load
from rdbscan.model.memory import jemalloc_class, select_profile, value_cost
from rdbscan.rdb.errors import CorruptError
from rdbscan.rdb.modules import MODULE_CHARSET, module_type_name, vectorset_mem_usage
from rdbscan.rdb.parser import DumpInfo, parse
from rdbscan.reports import report as rpt
from rdbscan.reports.engine.database import open_database
from rdbscan.reports.report.render import render_markdown

LIVE = Path(__file__).parent / "fixtures" / "live"
VECTORSETS = ["redis-8.2-vectorset", "redis-8.6-vectorset"]


def module_id(name: str, encver: int) -> int:
    """moduleTypeEncodeId (Redis src/module.c), written out independently of rdbscan."""
    mid = 0
    for ch in name:
        mid = (mid << 6) | MODULE_CHARSET.index(ch)
    return (mid << 10) | encver


def _manifest(name: str) -> dict:
    return json.loads((LIVE / name / "manifest.json").read_text())


def _records(name: str) -> tuple[DumpInfo, dict]:
    info = DumpInfo()
    with open(LIVE / name / "dump.rdb", "rb") as f:
        return info, {r.key.decode(): r for r in parse(f, info)}


@pytest.mark.parametrize(
    "name",
    [
        "vectorset",
        "graphdata",
        "ReJSON-RL",
        "TSDB-TYPE",
        "MBbloom--",
        "CMSk-TYPE",
        "TopK-TYPE",
        "hellotype",
    ],
)
def test_type_names_round_trip(name):
    for encver in (0, 1, 1023):
        assert module_type_name(module_id(name, encver)) == (name, encver)


@pytest.mark.parametrize("fixture", VECTORSETS)
def test_vector_sets_as_the_server_saw_them(fixture):
    m = _manifest(fixture)
    _, recs = _records(fixture)
    sets = [e for e in m["keys"] if e["type"] == "vectorset"]
    assert len(sets) == 8
    for e in sets:
        r = recs[e["key"]]
        f = r.module.fields
        v = e["vinfo"]
        assert (r.type, r.encoding, r.length) == ("module", "vectorset", e["length"])
        assert e["length"] == v["size"]
        assert f["dim"] == e["vdim"] == v["vector-dim"]
        assert f["quant"] == v["quant-type"]
        assert f["m"] == v["hnsw-m"]
        assert f["projection_input_dim"] == v["projection-input-dim"]
        assert f["attributes"] == v["attributes-count"]
    assert {recs[e["key"]].module.fields["quant"] for e in sets} == {"f32", "int8", "bin"}
    assert recs["vs:long-names:4d"].max_elem == len("element-0000-" + "x" * 40)


@pytest.mark.parametrize(
    "fixture,quantum", [("redis-8.2-vectorset", 8), ("redis-8.6-vectorset", 16)]
)
def test_vector_set_memory_is_the_servers_own_estimate(fixture, quantum):
    """VectorSetMemUsage recomputed from the dump equals MEMORY USAGE but for the key's object
    header (one allocation of 32-48 bytes for these short keys, the memory profile's part)."""
    m = _manifest(fixture)
    _, recs = _records(fixture)

    def J(n):
        return jemalloc_class(n, quantum)

    for e in m["keys"]:
        if e["type"] != "vectorset":
            continue
        r = recs[e["key"]]
        est = vectorset_mem_usage(r.module.fields["mem_usage_fields"], J)
        assert e["memory_usage"] - est in (32, 40, 48), e["key"]


def test_vector_set_memory_through_the_memory_model():
    """The memory column: an object header plus VectorSetMemUsage, within 1 % of MEMORY USAGE
    (the 8.0 profile's key cost, not yet Redis 8.2's kvobj, is the rest)."""
    m = _manifest("redis-8.2-vectorset")
    info, recs = _records("redis-8.2-vectorset")
    prof = select_profile(info)
    for e in m["keys"]:
        if e["type"] == "vectorset":
            r = recs[e["key"]]
            got = 16 + vectorset_mem_usage(r.module.fields["mem_usage_fields"], prof.j)
            assert int(value_cost(r, prof)) == got
            assert abs(got - e["memory_usage"]) / e["memory_usage"] < 0.01


def test_module_keys_in_the_database_and_the_report(tmp_path):
    """Graphs (FalkorDB) are skipped with their name kept and a lower-bound memory; the vector
    set beside them is read; the keys view shows the server's TYPE; the report says it."""
    m = _manifest("redis-8.2-falkordb")
    db = str(tmp_path / "g.duckdb")
    [res] = load([str(LIVE / "redis-8.2-falkordb" / "dump.rdb")], db)
    assert res.complete
    con = duckdb.connect(db)
    rows = {
        k: (t, e, n, lb)
        for k, t, e, n, lb in con.execute(
            "SELECT key, type, encoding, length, memory_is_lower_bound FROM keys"
        ).fetchall()
    }
    assert rows == {
        e["key"]: (e["type"], e["encoding"], e.get("length", 1), e["type"] == "graphdata")
        for e in m["keys"]
    }
    # TYPE is the module type's name, OBJECT ENCODING `raw` (the server's for module values)
    assert rows["graph:small"] == ("graphdata", "raw", 1, True)
    assert rows["vs:beside-graph"] == ("vectorset", "raw", 1, False)
    ser = dict(con.execute("SELECT key, serialized_bytes FROM keys").fetchall())
    mem = dict(con.execute("SELECT key, memory_bytes FROM keys").fetchall())
    assert all(mem[k] >= ser[k] for k in ("graph:small", "graph:chain"))
    con.close()
    con = open_database(db)
    try:
        report = rpt.build_report(con, rpt.ReportOptions(sections=("overview", "big_keys")))
    finally:
        con.close()
    notes = report["overview"]["notes"]
    assert any(
        n.startswith("Memory of 2 module key(s) (graphdata; ") and "lower bound" in n for n in notes
    )
    top = {r["key"]: r for r in report["big_keys"]["top_by_memory"]}
    assert top["graph:chain"]["memory_is_lower_bound"] is True
    assert top["graph:chain"]["type"] == "graphdata"
    assert top["vs:beside-graph"]["memory_is_lower_bound"] is False
    text = render_markdown(report)
    assert "| graphdata | 1 | graph:chain | raw | 1 | >= 1.3 KiB |" in text


@pytest.mark.parametrize("name", [*VECTORSETS, "redis-8.2-falkordb"])
def test_keys_view_type_and_encoding_as_the_server_says(tmp_path, name):
    """TYPE and OBJECT ENCODING of every key of the dumps holding module values (the only
    manifests with module keys): a module value is `raw`, under its module type's name."""
    m = _manifest(name)
    db = str(tmp_path / "m.duckdb")
    load([str(LIVE / name / "dump.rdb")], db)
    con = duckdb.connect(db)
    got = {k: (t, e) for k, t, e in con.execute("SELECT key, type, encoding FROM keys").fetchall()}
    con.close()
    assert got == {e["key"]: (e["type"], e["encoding"]) for e in m["keys"]}
    assert sum(1 for t, e in got.values() if t in ("vectorset", "graphdata") and e == "raw") == (
        3 if name == "redis-8.2-falkordb" else 8
    )


def _vset_items(dim=2, count=2, quant=1, m=16, flags=0, vector=None, extra=b"", claimed=None):
    def uint(v):
        return W.length(2) + W.length(v)

    def string(b):
        return W.length(5) + W.string(b)

    body = (
        uint(dim)
        + uint(count if claimed is None else claimed)
        + uint(quant | (m << 8))
        + uint(flags)
    )
    for i in range(count):
        body += string(f"e{i}") + string(b"\x01" * (dim if vector is None else vector))
        body += uint(5) + uint(i) + uint(0) + uint(0) + uint(32) + uint(0)
    return body + extra


def _module_dump(name: str, encver: int, items: bytes) -> bytes:
    value = W.length(module_id(name, encver)) + items + W.length(0)
    return W.rdb(W.key(7, "m", value) + W.key(0, "after", W.string("x")), version=11)


def _parse(data: bytes):
    info = DumpInfo()
    return info, list(parse(io.BytesIO(data), info, size=len(data)))


def test_hand_built_vector_set():
    _, recs = _parse(_module_dump("vectorset", 0, _vset_items(dim=3, count=4)))
    r = recs[0]
    assert (r.key, r.type, r.encoding, r.length, r.max_elem) == (b"m", "module", "vectorset", 4, 2)
    assert r.module.fields["dim"] == 3 and r.module.items == 4 + 4 * 8
    assert recs[1].key == b"after"


@pytest.mark.parametrize(
    "items,message",
    [
        (_vset_items(vector=3), "vectorset vector of 3 bytes, not 2"),
        (_vset_items(claimed=3), "vectorset value ends after 2 of 3 elements"),
        (_vset_items(quant=7), "vectorset quantization 7 is not 0, 1 or 2"),
        (_vset_items(dim=0, count=0), r"vectorset dimension 0 is outside 1\.\.65536"),
        (_vset_items(extra=W.length(2) + W.length(1)), "goes on after its 2 elements"),
        (
            W.length(5) + W.string("x"),
            "vectorset dimension: expected a unsigned integer, found a string",
        ),
    ],
)
def test_a_vector_set_its_loader_would_refuse_is_corrupt(items, message):
    with pytest.raises(CorruptError, match=message) as e:
        _parse(_module_dump("vectorset", 0, items))
    assert e.value.key == b"m"


def test_a_huge_claimed_element_count_is_not_an_allocation():
    """2^40 elements announced, two present: the reader counts, it does not reserve."""
    items = _vset_items(count=2, claimed=1 << 40)
    with pytest.raises(CorruptError, match=r"ends after 2 of 1099511627776 elements"):
        _parse(_module_dump("vectorset", 0, items))


@pytest.mark.parametrize(
    "name,encver", [("ReJSON-RL", 3), ("TSDB-TYPE", 6), ("MBbloom--", 4), ("vectorset", 1)]
)
def test_unknown_module_values_are_skipped_with_their_name(name, encver):
    """A type (or an encoding version) rdbscan cannot read: walked item by item, 1 as its
    length, its serialized size as a lower bound of its memory."""
    items = (
        (W.length(2) + W.length(7))
        + (W.length(5) + W.string(b"{" * 300))
        + (W.length(4) + b"\x00" * 8)
        + (W.length(3) + b"\x00" * 4)
    )
    data = _module_dump(name, encver, items)
    _, recs = _parse(data)
    r = recs[0]
    assert (r.type, r.encoding, r.length, r.module.items, r.module.fields) == (
        "module",
        name,
        1,
        4,
        None,
    )
    assert [x.key for x in recs] == [b"m", b"after"]
