"""Reports over many dumps at the default memory limit (48 MB, a query that needs more grown to 80
MB, 96 MB, then 128 MB): a Parquet dataset of 20 fixture dumps reads as the same dumps in one database,
section by section, without a chosen limit (docs/report.md, "Several dumps"; docs/fleet.md)."""

from __future__ import annotations

import collections
import json

import pytest
from common import FIXTURES
from test_report_width import WIDTHS, _render, _report, check_tables

from rdbscan.db.load import load
from rdbscan.reports.format import fmt_time
from rdbscan.reports.report.render import document
from rdbscan.reports.report.sections.big_keys.charts import charts as big_keys_charts

TWENTY = sorted(str(p) for p in FIXTURES.glob("*/*/dump.rdb"))[:20]


@pytest.fixture(scope="module")
def twenty(tmp_path_factory, cli) -> tuple[str, str]:
    """The 20 dumps as a Parquet dataset and as one database (dump ids 1..20 in both)."""
    tmp = tmp_path_factory.mktemp("twenty")
    ds, db = str(tmp / "ds"), str(tmp / "twenty.duckdb")
    assert cli("load", "-q", "--parquet", ds, *TWENTY).exit_code == 0
    assert all(r.complete for r in load(TWENTY, db))
    return ds, db


@pytest.mark.slow
def test_a_dataset_of_twenty_dumps_is_reported_at_the_default_memory_limit(cli, twenty):
    ds, db = twenty
    assert len(TWENTY) == 20
    # the whole report, every section, at the default 48 MB: one scan per query, whatever the
    # number of files and threads (big_keys_top ran out of memory here: 13 scans of 20 files)
    result = cli("report", ds, "-f", "json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    got = json.loads(result.stdout)
    want = json.loads(cli("report", db, "-f", "json").stdout)
    assert len(got["dumps"]) == 20
    for name in ("big_keys", "patterns", "ttl", "slots", "streams", "values", "cold", "encodings"):
        assert got[name] == want[name], name
    for field in ("keys", "memory_bytes", "types", "dbs"):  # the rest: load times
        assert got["overview"][field] == want["overview"][field], field
    assert got["findings"] == want["findings"]
    top = got["big_keys"]["top_by_memory"]
    # the 10 largest of each type, module values together (the vector sets of dumps 2 and 3)
    assert collections.Counter(r["type"] for r in top) == dict.fromkeys(
        ("hash", "list", "set", "stream", "string", "vectorset", "zset"), 10
    )
    assert top[0] == {
        "ranking": "memory",
        "type": "hash",
        "rank": 1,
        "dump_id": 5,
        "db": 0,
        "key": "hash:large",
        "encoding": "hashtable",
        "length": 3000,
        "memory_bytes": 296232,
        "memory_is_lower_bound": False,
        "has_ttl": False,
    }
    assert len(got["big_keys"]["top_by_length"]) == 60  # no length ranking for strings


TWO = [str(FIXTURES / "diff" / "old.rdb"), str(FIXTURES / "diff" / "new.rdb")]


@pytest.fixture(scope="module")
def two_db(tmp_path_factory) -> str:
    """Two snapshots with expiry herds (cache:item:{id}) as two dumps of one database."""
    db = str(tmp_path_factory.mktemp("two") / "two.duckdb")
    assert [r.dump_id for r in load(TWO, db)] == [1, 2]
    return db


def _herd_table(report: dict):
    blocks = [b for b in document(report) if b.kind == "table" and b.table]
    return next(b.table for b in blocks if b.table.title.startswith("Expiries bunched"))


@pytest.mark.parametrize("width", WIDTHS)
def test_a_herd_names_its_dump_over_several_dumps(two_db, width):
    """A herd of expiries is one dump's: over two dumps the table opens with that dump (`#2`),
    every cell whole from 80 columns up; the JSON rows carry dump_id."""
    report = _report(two_db)
    herd = report["ttl"]["herd"]["seconds"] + report["ttl"]["herd"]["minutes"]
    assert len(herd) == 20
    assert {h["dump_id"] for h in herd} == {1, 2}
    t = _herd_table(report)
    assert t.headers[0] == "dump"
    assert [r[0] for r in t.rows] == [f"#{h['dump_id']}" for h in herd]
    assert [r[3] for r in t.rows] == [h["pattern"] for h in herd]
    assert t.rows[0] == [
        "#1",
        fmt_time(herd[0]["moment_ms"]),
        "second",
        "cache:item:{id}",
        "12",
        "<0.01",
        "69,120",
        "practically none",
    ]
    text = _render(report, width)
    ttl = [b for b in document(report) if b.kind == "table" and b.table.title == t.title]
    assert check_tables(ttl, text, width) == 20 * 8


def test_a_herd_of_one_dump_has_no_dump_column(loaded):
    report = _report(loaded(FIXTURES / "diff" / "old.rdb"))
    herd = report["ttl"]["herd"]["seconds"]
    assert herd and {h["dump_id"] for h in herd} == {1}
    t = _herd_table(report)
    assert t.headers == [
        "moment",
        "per",
        "family",
        "keys",
        "evenly spread",
        "times that",
        "by chance",
    ]


SAMPLE_DUMPS = sorted(str(p) for p in (FIXTURES.parent.parent / "sample_dumps").glob("*.rdb"))

# The tables with a row per key, as (column of the dump over several dumps, the rows' objects).
KEY_TABLES = {
    "Big keys, critical first": (1, lambda r: r["big_keys"]["items"]),
    "Top keys by memory, per type": (
        3,
        lambda r: [x for x in r["big_keys"]["top_by_memory"] if x["rank"] <= 3],
    ),
    "Top collections by element count, per type": (
        3,
        lambda r: [x for x in r["big_keys"]["top_by_length"] if x["rank"] <= 3],
    ),
    "Largest streams": (1, lambda r: r["streams"]["items"]),
    "Hashes with field TTLs": (1, lambda r: r["streams"]["hash_field_ttl"]),
    "Collections with an element over 4.0 KiB": (1, lambda r: r["values"]["big_elements"]["items"]),
    "Just over a threshold": (1, lambda r: r["encodings"]["near_threshold"]),
}


@pytest.fixture(scope="module")
def samples_db(tmp_path_factory) -> str:
    """The four bundled sample dumps (Redis 6.2 and 7.4, a 7.4 cluster, Valkey 8.0) together."""
    db = str(tmp_path_factory.mktemp("samples") / "samples.duckdb")
    assert [r.dump_id for r in load(SAMPLE_DUMPS, db)] == [1, 2, 3, 4]
    return db


def test_key_tables_name_each_rows_dump_over_several_dumps(samples_db):
    """The four dumps hold the same keys (list:large in each): every table of keys says whose
    row it is (`#3`, after the key), so that four rows of one name read as four dumps' keys, not
    as a repeat; every cell whole at every width."""
    from rdbscan.reports.format import fmt_db_key

    report = _report(samples_db)
    tables = {b.table.title: b for b in document(report) if b.kind == "table" and b.table}
    assert set(KEY_TABLES) <= set(tables)
    for title, (at, items) in KEY_TABLES.items():
        t, rows = tables[title].table, items(report)
        assert t.headers[at] == "dump", title
        assert len(t.rows) == len(rows) > 0, title
        assert [r[at] for r in t.rows] == [f"#{x['dump_id']}" for x in rows], title
        assert [r[at - 1] for r in t.rows] == [fmt_db_key(x) for x in rows], title
    big = report["big_keys"]["items"]
    assert [(x["key"], x["dump_id"]) for x in big[:4]] == [("list:large", d) for d in (2, 3, 4, 1)]
    for width in WIDTHS:
        check_tables([tables[t] for t in KEY_TABLES], _render(report, width), width)
    (chart,) = big_keys_charts(report)  # the chart's bars name their dump too
    assert [ln for ln in ("list:large #1", "list:large #2", "list:large #4") if ln in chart] == [
        "list:large #1",
        "list:large #2",
        "list:large #4",
    ]


def test_key_tables_of_one_dump_have_no_dump_column(loaded):
    report = _report(loaded(SAMPLE_DUMPS[2]))
    (chart,) = big_keys_charts(report)
    assert "list:large</text>" in chart and "#1" not in chart
    tables = {b.table.title: b.table for b in document(report) if b.kind == "table" and b.table}
    assert set(KEY_TABLES) <= set(tables)
    assert all("dump" not in t.headers for t in tables.values())


def test_the_overview_of_several_dumps_names_each_server_once_in_version_order(samples_db):
    report = _report(samples_db)
    (kv,) = [
        dict(b.items) for b in document(report) if b.kind == "kv" and "Servers" in dict(b.items)
    ]
    assert kv["Dumps"] == "4"
    assert kv["Servers"] == "redis 6.2.16, redis 7.4.1, valkey 8.0.1"
    assert kv["RDB versions"] == "9, 11, 12"  # numbers, not strings: 9 before 11
    assert kv["Snapshots"] == "2026-11-21 01:06:50 UTC to 2026-11-21 02:13:28 UTC (ctime)"
    assert kv["Memory models"] == (
        "redis 6.2, redis 7.4 and valkey 8.0 profiles, 8-byte allocator quantum "
        "(official builds; --target /16 for distribution packages)"
    )


def test_the_overview_of_dumps_with_and_without_a_save_time(tmp_path):
    """Redis 2.8 writes no ctime: its snapshot time is the file's mtime. Over it and a 7.4 dump
    the overview gives both sources (the times compared as numbers, not as text and number)."""
    db = str(tmp_path / "mixed.duckdb")
    old = FIXTURES / "redis-2.8.24" / "small" / "dump.rdb"
    assert [r.dump_id for r in load([str(old), SAMPLE_DUMPS[2]], db)] == [1, 2]
    report = _report(db)
    (kv,) = [
        dict(b.items) for b in document(report) if b.kind == "kv" and "Servers" in dict(b.items)
    ]
    assert kv["Servers"] == "?, redis 7.4.1"  # 2.8 records no version either
    assert kv["RDB versions"] == "6, 12"
    times = sorted(d["snapshot_ms"] for d in report["overview"]["dumps"])
    assert kv["Snapshots"] == f"{fmt_time(times[0])} to {fmt_time(times[1])} (ctime, file-mtime)"
