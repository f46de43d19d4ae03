"""Reports over many dumps at the default memory limit (128 MB): a Parquet dataset of 20 fixture
dumps reads as the same dumps in one database, section by section, without raising the limit
(docs/report.md, "Several dumps"; docs/fleet.md)."""

from __future__ import annotations

import collections
import json

import pytest
from common import FIXTURES

from rdbscan.db.load import load

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
