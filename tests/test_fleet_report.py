"""Reports over many dumps at the default memory limit (128 MB): a Parquet dataset of 20 fixture
dumps reads as the same dumps in one database, section by section, without raising the limit
(docs/report.md, "Several dumps"; docs/fleet.md)."""

from __future__ import annotations

import collections
import json

import pytest
from common import FIXTURES
from test_report_width import WIDTHS, _render, _report, check_tables

from rdbscan.db.load import load
from rdbscan.reports.format import fmt_time
from rdbscan.reports.report.render import document

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
    # the whole report, every section, at the default 128 MB: one scan per query, whatever the
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
