"""Facts written once in the package, and tests that fail when a second copy appears: the
key-family rule, the snapshot time and its vocabulary, `--top`, "is this path a database?" and
the list of the tables that hold a dump's rows.  (The columns of `key_rows`: test_columns.py;
the compact-encoding thresholds: test_facts_once.py.)"""

from __future__ import annotations

import os
import re
import time

import click
import duckdb
import pytest
from common import ROOT

from rdbscan.cli.main import main as cli_main
from rdbscan.cli.options import MAX_TOP
from rdbscan.db import parquet, snapshot, store

PKG = ROOT / "rdbscan"


def _texts(*suffixes: str) -> dict[str, str]:
    """Source files of the package by path relative to the repository."""
    out = {}
    for suffix in suffixes:
        for path in sorted(PKG.rglob(f"*{suffix}")):
            out[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    return out


def _where(pattern: str, *suffixes: str, flags: int = 0) -> dict[str, int]:
    """Files of the package where `pattern` matches, with how many times."""
    rx = re.compile(pattern, flags)
    out = {}
    for name, text in _texts(*suffixes).items():
        n = len(rx.findall(text))
        if n:
            out[name] = n
    return out


# --- the key-family rule --------------------------------------------------------------------


def test_the_family_rule_is_the_macros():
    """key_pattern (macros.py) is the rule; key_family (macros.py) picks the stored family or the
    rule afresh; the loader fills a null family with the rule in one place (columns.py).  The
    compiled batch's twin (_batch.pyx) is compared with the macro by test_family.py."""
    sql = (".py", ".sql")
    assert _where(r"MACRO key_pattern\(", *sql) == {"rdbscan/db/macros.py": 1}
    assert _where(r"MACRO key_family\(", *sql) == {"rdbscan/db/macros.py": 1}
    assert _where(r"WHEN delimiters = ':' THEN family\b", *sql) == {"rdbscan/db/macros.py": 1}
    assert _where(r"fill=\"key_pattern\(key\)\"", *sql) == {"rdbscan/db/columns.py": 1}
    assert _where(r"coalesce\(\s*(?:family|plain_key)\s*,\s*\w", *sql) == {}  # columns.py builds it
    # a query's family of a key: key_family, never the rule spelled again
    queries = _where(r"key_pattern\((?:\w+\.)?key\b", ".sql")
    assert queries == {}, queries
    assert len(_where(r"key_family\(", ".sql")) >= 8


def test_the_loader_fills_the_family_with_the_rule():
    from rdbscan.db.columns import KEY_ROWS_FROM_BATCH

    assert KEY_ROWS_FROM_BATCH == (
        "SELECT * REPLACE (coalesce(family, key_pattern(key)) AS family, "
        "coalesce(plain_key, is_plain_key(key)) AS plain_key) FROM _rdbscan_keys"
    )
    assert KEY_ROWS_FROM_BATCH in parquet.KEYS_FROM_BATCH


# --- the snapshot time ----------------------------------------------------------------------


def test_the_snapshot_time_is_worked_out_in_one_function(tmp_path):
    assert snapshot.SOURCES == ("ctime", "file-mtime", "now")
    assert snapshot.snapshot_ms_of(1_700_000_000, None) == (1_700_000_000_000, "ctime")
    dump = tmp_path / "d.rdb"
    dump.write_bytes(b"REDIS0011")
    os.utime(dump, (1_600_000_000.5, 1_600_000_000.5))
    assert snapshot.snapshot_ms_of(None, str(dump)) == (1_600_000_000_500, "file-mtime")
    assert snapshot.snapshot_ms_of(1 << 62, str(dump))[1] == "file-mtime"  # a damaged ctime
    ms, source = snapshot.snapshot_ms_of(None, str(tmp_path / "gone.rdb"))
    assert source == "now" and abs(ms / 1000 - time.time()) < 60
    assert snapshot.snapshot_time(0) is None and str(snapshot.snapshot_time(86400)) == (
        "1970-01-02 00:00:00"
    )


def test_no_second_copy_of_the_snapshot_time():
    here = {"rdbscan/db/snapshot.py": 1}
    assert _where(r"st_mtime\b", ".py") == here
    assert _where(r"""["']file-mtime["']""", ".py") == here  # in SOURCES
    assert _where(r"snapshot_ms_of\(", ".py").keys() == {
        "rdbscan/db/load.py",
        "rdbscan/db/snapshot.py",
        "rdbscan/reports/diff/snapshots.py",
        "rdbscan/reports/engine/relations.py",
    }
    # one vocabulary, in the docs too
    docs = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md")}
    assert [n for n, text in docs.items() if "load-time" in text] == []
    assert _where("load-time", ".py", ".sql") == {}
    for page in ("json.md", "diff.md"):
        assert re.search(r"`ctime`, `file-mtime` or `now`", docs[page]), page


# --- --top ----------------------------------------------------------------------------------


def _commands(group: click.Group, prefix: str = ""):
    commands = group.every_command() if hasattr(group, "every_command") else group.commands
    for name, command in sorted(commands.items()):
        yield f"{prefix}{name}", command
        if isinstance(command, click.Group):
            yield from _commands(command, f"{prefix}{name} ")


def test_every_top_is_the_one_option():
    tops = {}
    for name, command in _commands(cli_main):
        for param in command.params:
            if param.name == "top":
                assert isinstance(param.type, click.IntRange), name
                assert param.type.max == MAX_TOP and param.type.min in (0, 1), name
                assert param.default == 10 and param.opts == ["--top"], name
                tops[name] = param.type.min
    assert tops == {"diff": 1, "report": 1, "trend": 0}  # trend: 0 lists every family
    assert _where(r"""["']--top["']""", ".py") == {"rdbscan/cli/options.py": 1}


@pytest.mark.parametrize(
    "args, bad",
    [
        (["report", "x.rdb", "--top", "0"], "0 is not in the range 1<=x<=100000"),
        (["diff", "a.rdb", "b.rdb", "--top", "100001"], "100001 is not in the range 1<=x<=100000"),
        (["trend", "h.duckdb", "--top", "-1"], "-1 is not in the range 0<=x<=100000"),
    ],
)
def test_a_top_out_of_range_is_one_usage_error(cli, args, bad):
    res = cli(*args)
    assert res.exit_code == 2
    assert res.stderr.splitlines()[-1] == f"Error: Invalid value for '--top': {bad}."
    assert "Traceback" not in res.stderr


# --- is this path a database? ---------------------------------------------------------------


def test_one_function_says_whether_a_path_is_a_database(tmp_path, sample_db):
    dataset = tmp_path / "ds"
    dataset.mkdir()
    (dataset / parquet.DATASET_FILE).write_text("{}")
    dump = ROOT / "sample_dumps" / "redis-7.4.1.rdb"
    assert parquet.is_database_path(sample_db) and parquet.is_database_path(str(dataset))
    assert not parquet.is_database_path(str(dump))
    assert not parquet.is_database_path(str(tmp_path / "missing.duckdb"))
    assert not parquet.is_database_path(str(tmp_path))


def test_no_second_copy_of_is_database():
    assert _where(r"is_database_file\(\w+\)\s*or\s*is_dataset\(", ".py") == {
        "rdbscan/db/parquet.py": 1
    }
    assert _where(r"is_dataset\(\w+\)\s*or\s*is_database_file\(", ".py") == {}
    assert _where(r"b\"DUCK\"|b'DUCK'", ".py") == {"rdbscan/db/store.py": 1}
    # the layers above ask is_database_path (a dataset is a database too); only the db layer,
    # diff's "not a DuckDB database" (after its dataset branch), the outputs (a database to
    # write is a DuckDB file, never a dataset) and migrate's input (it reads one DuckDB file)
    # test for a DuckDB file alone
    assert _where(r"is_database_file\(", ".py").keys() == {
        "rdbscan/db/store.py",
        "rdbscan/db/parquet.py",
        "rdbscan/reports/diff/workspace.py",
        "rdbscan/cli/targets.py",
        "rdbscan/cli/migrate.py",
    }


# --- the tables that hold a dump's rows ------------------------------------------------------


def test_the_dump_tables_are_every_table_with_a_dump_id():
    con = duckdb.connect()
    con.execute(store.DDL)
    with_dump_id = {
        r[0]
        for r in con.execute(
            "SELECT c.table_name FROM information_schema.columns c JOIN "
            "information_schema.tables t USING (table_name) WHERE c.column_name = 'dump_id' "
            "AND t.table_type = 'BASE TABLE'"
        ).fetchall()
    }
    assert set(store.DUMP_TABLES) == with_dump_id
    assert store.DUMP_TABLES[-1] == "dumps"  # the commit mark, last
    assert store.LOADED_TABLES == (
        "key_rows",
        "streams",
        "stream_groups",
        "db_sizes",
        "slot_info",
        "dumps",
    )
    assert parquet.TABLES == ("keys", *store.LOADED_TABLES[1:])


def test_no_second_copy_of_the_dump_tables():
    """A tuple or list naming three or more of them, outside store.py, is a second copy."""
    names = "|".join(t for t in store.DUMP_TABLES if t != "dumps")
    rx = rf"""[(\[]\s*(?:["'](?:{names}|dumps|keys)["'],\s*){{2,}}"""
    assert _where(rx, ".py") == {"rdbscan/db/store.py": 1}
