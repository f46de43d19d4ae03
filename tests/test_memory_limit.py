"""DuckDB's memory limit for the queries (--memory-limit, RDBSCAN_MEMORY_LIMIT) and the one line a
query that runs out of it ends with (exit 8, docs/exit-codes.md), through the real command line."""

from __future__ import annotations

import os

import pytest
from common import FIXTURES, run_cli

from rdbscan.db import connections
from rdbscan.errors import EXIT_MEMORY, EXIT_OK, EXIT_USAGE

DUMP = str(FIXTURES / "redis-7.0.15" / "small" / "dump.rdb")
OLD = str(FIXTURES / "diff" / "old.rdb")
NEW = str(FIXTURES / "diff" / "new.rdb")

# A list aggregate cannot spill: 30 M integers need far more than 16 MB.
GREEDY = "SELECT sum(len(l)) FROM (SELECT list(range) AS l FROM range(30000000))"


@pytest.fixture(scope="module")
def db(loaded) -> str:
    return loaded(DUMP)


@pytest.fixture(autouse=True)
def default_limit(monkeypatch):
    monkeypatch.delenv(connections.MEMORY_LIMIT_ENV, raising=False)
    connections.set_memory_limit(None)
    yield
    connections.set_memory_limit(None)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("128MB", "128000000B"),
        ("1GB", "1000000000B"),
        ("2GiB", "2147483648B"),
        ("512 mb", "512000000B"),
        ("16MB", "16000000B"),
        ("20000000", "20000000B"),
    ],
)
def test_sizes(text, value):
    assert connections.parse_memory_limit(text) == value


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("abc", "'abc' is not a size (examples: 512MB, 2GB, 1GiB)"),
        ("", "'' is not a size (examples: 512MB, 2GB, 1GiB)"),
        ("12XB", "'12XB' is not a size (examples: 512MB, 2GB, 1GiB)"),
        ("1MB", "'1MB' is below the 16MB minimum"),
    ],
)
def test_sizes_refused(text, why):
    with pytest.raises(ValueError) as e:
        connections.parse_memory_limit(text)
    assert str(e.value) == why


def test_out_of_memory_is_one_line_and_exit_8(db):
    p = run_cli("sql", db, GREEDY, "--memory-limit", "16MB")
    assert p.returncode == EXIT_MEMORY
    assert p.stdout == ""
    assert len(p.stderr.splitlines()) == 1
    assert p.stderr.startswith(
        "rdbscan: error: DuckDB ran out of memory at its 16MB limit and could not spill enough to "
        "disk (Out of Memory Error: "
    )
    assert p.stderr.endswith(
        "raise the limit with --memory-limit (for example --memory-limit 1GB) or "
        "RDBSCAN_MEMORY_LIMIT\n"
    )


def test_the_environment_variable_sets_the_limit_and_the_option_wins(db):
    p = run_cli("sql", db, GREEDY, env={connections.MEMORY_LIMIT_ENV: "16MB"})
    assert p.returncode == EXIT_MEMORY
    assert "at its 16MB limit" in p.stderr
    p = run_cli(
        "sql",
        db,
        GREEDY,
        "--memory-limit",
        "2GB",
        "-f",
        "csv",
        env={connections.MEMORY_LIMIT_ENV: "16MB"},
    )
    assert (p.returncode, p.stderr) == (EXIT_OK, "")
    assert p.stdout.splitlines()[-1] == "30000000"  # the sum the query gives


@pytest.mark.parametrize(
    "command",
    [
        ["report", DUMP],
        ["query", "DB", "big_keys"],
        ["schema", "DB"],
        ["diff", OLD, NEW],
        ["trend", "DB"],
        ["sql", "DB", "SELECT 1"],
    ],
)
def test_every_query_command_takes_the_option(db, command):
    command = [db if a == "DB" else a for a in command]
    p = run_cli(*command, "--memory-limit", "lots")
    assert p.returncode == EXIT_USAGE
    assert p.stderr.endswith(
        "Error: Invalid value for '--memory-limit': 'lots' is not a size (examples: 512MB, "
        "2GB, 1GiB)\n"
    )
    p = run_cli(*command, env={connections.MEMORY_LIMIT_ENV: "lots"})
    assert p.returncode == EXIT_USAGE
    assert p.stderr.endswith(
        "Error: RDBSCAN_MEMORY_LIMIT: 'lots' is not a size (examples: 512MB, 2GB, 1GiB)\n"
    )


def _setting(con) -> str:
    return con.execute("SELECT current_setting('memory_limit')").fetchone()[0]


def test_report_and_diff_connections_take_the_chosen_limit(db):
    from rdbscan.reports.diff.workspace import Workspace
    from rdbscan.reports.engine.database import open_database

    def limits() -> tuple[str, str]:
        con = open_database(db, read_only=True)
        ws = Workspace()
        try:
            return _setting(con), _setting(ws.con)
        finally:
            con.close()
            ws.close()

    default = limits()
    # a database's report runs after its load in the same process: a lower limit than diff's
    assert default == ("45.7 MiB", "122.0 MiB")
    assert connections.DATABASE_MEMORY_LIMIT == "48MB"
    assert connections.DEFAULT_MEMORY_LIMIT == "128MB"
    connections.set_memory_limit("3GiB")
    assert limits() == ("3.0 GiB", "3.0 GiB")
    connections.set_memory_limit(None)
    assert limits() == default
    os.environ[connections.MEMORY_LIMIT_ENV] = "2GiB"
    try:
        assert limits() == ("2.0 GiB", "2.0 GiB")
    finally:
        del os.environ[connections.MEMORY_LIMIT_ENV]
