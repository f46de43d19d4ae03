"""DuckDB's memory limit for the queries (--memory-limit, RDBSCAN_MEMORY_LIMIT) and the one line a
query that runs out of it ends with (exit 8, docs/exit-codes.md), through the real command line."""

from __future__ import annotations

import os

import duckdb
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


def test_query_out_of_memory_is_exit_8_too(db, tmp_path):
    """`rdbscan query` with a query file that cannot fit: the same one line and exit 8, not an SQL
    error (exit 2) with DuckDB's advice on several lines."""
    sql = tmp_path / "greedy.sql"
    sql.write_text(f"-- name: greedy\n-- answers: A test.\n{GREEDY}\n")
    p = run_cli("query", db, str(sql), "--memory-limit", "16MB")
    assert p.returncode == EXIT_MEMORY
    assert p.stdout == ""
    assert len(p.stderr.splitlines()) == 1
    assert p.stderr.startswith("rdbscan: error: DuckDB ran out of memory at its 16MB limit")


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


# A string aggregate cannot spill: 20 MB of text fails at the database limit (48 MB, with its
# intermediate copies) and at the grown limits (80 and 96 MB), and fits at the limit before
# (128 MB); 13 MB fails at 48 MB and fits at 80 MB (whatever the number of threads).  Each query
# also returns the limit it ran at.
AT_128_ONLY = (
    "SELECT length(string_agg(repeat('x', 1000), '')) AS n, "
    "current_setting('memory_limit') AS at FROM range(20000)"
)
AT_80 = (
    "SELECT length(string_agg(repeat('x', 1000), '')) AS n, "
    "current_setting('memory_limit') AS at FROM range(13000)"
)


def _runner_with(db, sql: str, tmp_path):
    from rdbscan.reports.engine.database import open_database
    from rdbscan.reports.engine.querylib import parse_query
    from rdbscan.reports.engine.relations import Runner

    path = tmp_path / "at_128_only.sql"
    path.write_text(f"-- name: at_128_only\n-- answers: A test.\n{sql}\n")
    con = open_database(db, read_only=True)
    run = Runner(con, {})
    run.queries = {**run.queries, "at_128_only": parse_query(path)}
    return con, run


def test_a_query_that_cannot_fit_the_database_limit_runs_again_with_more_room(
    db, tmp_path, monkeypatch
):
    """The report's limit over a database is 48 MB so that its peak stays under 200 MB; a query
    that cannot fit (and cannot spill) runs again at 80 MB, then 96 MB, and if it cannot fit
    there either at 128 MB, the limit before, rather than failing a report that used to succeed;
    then the limit is 48 MB again."""
    assert connections.GROWN_MEMORY_LIMITS == ("80MB", "96MB", "128MB")
    tried: list[str] = []
    more_memory = connections.more_memory

    def recorded(con, limit):
        tried.append(limit)
        return more_memory(con, limit)

    monkeypatch.setattr(connections, "more_memory", recorded)
    con, run = _runner_with(db, AT_80, tmp_path)
    try:
        assert _setting(con) == "45.7 MiB"
        assert run.rows("at_128_only") == [{"n": 13_000_000, "at": "76.2 MiB"}]
        assert tried == ["80MB"]
        assert _setting(con) == "45.7 MiB"
        assert run.rows("big_keys")  # the other queries go on at 48 MB
    finally:
        con.close()
    con, run = _runner_with(db, AT_128_ONLY, tmp_path)
    try:
        assert run.rows("at_128_only") == [{"n": 20_000_000, "at": "122.0 MiB"}]
        assert tried == ["80MB", "80MB", "96MB", "128MB"]
        assert _setting(con) == "45.7 MiB"
    finally:
        con.close()


def test_a_chosen_limit_is_not_raised(db, tmp_path):
    connections.set_memory_limit("48MB")
    con, run = _runner_with(db, AT_128_ONLY, tmp_path)
    try:
        with pytest.raises(duckdb.OutOfMemoryException):
            run.rows("at_128_only")
        assert _setting(con) == "45.7 MiB"
    finally:
        con.close()
    # and a query that needs more than 128 MB fails there, its message naming 128MB
    connections.set_memory_limit(None)
    greedy = "SELECT length(string_agg(repeat('x', 1000), '')) AS n FROM range(100000)"
    con, run = _runner_with(db, greedy, tmp_path)
    try:
        with pytest.raises(duckdb.OutOfMemoryException) as e:
            run.rows("at_128_only")
        assert connections.out_of_memory_message(e.value).startswith(
            "DuckDB ran out of memory at its 128MB limit"
        )
        assert _setting(con) == "45.7 MiB"
    finally:
        con.close()
