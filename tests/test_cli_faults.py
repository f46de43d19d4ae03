"""User mistakes and machine faults through the real command line: one line on stderr, the
exit code of docs/exit-codes.md, never "internal error", nothing of the user's changed."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from common import FIXTURES, copy_db, run_cli

from rdbscan import errors
from rdbscan.errors import EXIT_DATABASE, EXIT_INPUT, EXIT_INTERRUPTED, EXIT_USAGE, exit_code_table

ROOT = Path(__file__).resolve().parent.parent
DUMP = str(FIXTURES / "redis-7.0.15" / "small" / "dump.rdb")
DUMP_B = str(FIXTURES / "redis-6.2.16" / "small" / "dump.rdb")
DUMP_C = str(FIXTURES / "redis-7.2.6" / "small" / "dump.rdb")
NULL_PART = "instance=__HIVE_DEFAULT_PARTITION__"  # a dump loaded without --instance


def test_docs_page_is_the_table_in_errors_py():
    assert exit_code_table() in (ROOT / "docs" / "exit-codes.md").read_text()
    assert "docs/exit-codes.md" in (ROOT / "README.md").read_text()


def test_exit_codes_are_defined_in_errors_py_only():
    defined = {
        p.name
        for p in (ROOT / "rdbscan").glob("*.py")
        if re.search(r"^EXIT_\w+\s*=\s*\d", p.read_text(), re.M)
    }
    assert defined == {"errors.py"}
    assert set(errors.EXIT_PRECEDENCE) == set(errors.EXIT_CODES)


def test_output_directory_that_does_not_exist(tmp_path):
    out = tmp_path / "no" / "such" / "x.duckdb"
    for cmd in (["load", "-q", DUMP, "-o"], ["report", "-q", DUMP, "--database"]):
        p = run_cli(*cmd, out)
        assert (p.returncode, p.stderr, p.stdout) == (
            EXIT_DATABASE,
            f"rdbscan: error: {out}: its directory does not exist\n",
            "",
        )


def test_output_that_is_not_a_database_is_left_alone(tmp_path):
    notes = tmp_path / "notes"
    notes.write_text("my notes\n")
    for cmd in (["load", "-q", DUMP, "-o"], ["report", "-q", DUMP, "--database"]):
        p = run_cli(*cmd, notes)
        assert (p.returncode, p.stderr, p.stdout) == (
            EXIT_DATABASE,
            f"rdbscan: error: {notes}: not a DuckDB database; not overwritten (give a new file "
            f"name such as dump.duckdb, or a database rdbscan wrote)\n",
            "",
        )
    assert notes.read_text() == "my notes\n"
    assert sorted(os.listdir(tmp_path)) == ["notes"]
    p = run_cli("sql", notes, "SELECT 1")  # a reader: the hint for -o is not for it
    assert (p.returncode, p.stderr) == (
        EXIT_DATABASE,
        f"rdbscan: error: {notes}: not a DuckDB database (load a dump with `rdbscan load` first)\n",
    )


@pytest.mark.slow
def test_html_file_that_cannot_be_written(tmp_path, loaded):
    db = tmp_path / "x.duckdb"
    copy_db(loaded(DUMP), db)
    out = tmp_path / "no" / "such" / "r.html"
    p = run_cli("report", "-q", db, "--html", out)
    assert (p.returncode, p.stderr, p.stdout) == (
        EXIT_DATABASE,
        f"rdbscan: error: {out}: its directory does not exist\n",
        "",
    )
    mine = tmp_path / "notes.html"
    mine.write_text("my notes\n")
    p = run_cli("report", "-q", db, "--html", mine)
    assert (p.returncode, p.stderr) == (
        EXIT_DATABASE,
        f"rdbscan: error: {mine}: exists and is not a report rdbscan wrote; not overwritten\n",
    )
    assert mine.read_text() == "my notes\n"


def test_missing_input_has_one_code_in_every_command(tmp_path):
    want = (EXIT_INPUT, "rdbscan: error: missing.rdb: No such file or directory\n")
    for cmd in (
        ["load", "-q", "missing.rdb", "-o", tmp_path / "x.duckdb"],
        ["report", "-q", "missing.rdb"],
    ):
        p = run_cli(*cmd, cwd=tmp_path)
        assert (p.returncode, p.stderr) == want, cmd
    for cmd in (["sql", "missing.duckdb", "SELECT 1"], ["query", "missing.duckdb", "big_keys"]):
        p = run_cli(*cmd, cwd=tmp_path)
        assert (p.returncode, p.stderr) == (
            EXIT_INPUT,
            "rdbscan: error: missing.duckdb: No such file or directory\n",
        ), cmd


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize(
    "args",
    [
        ["report", "-q", DUMP],  # rich's table: rich caught the error and exited 1
        ["report", "-q", "-f", "json", DUMP],
        ["sql", "DB", "SELECT key FROM keys"],  # click caught it and exited 1
        ["query", "DB", "big_keys_top"],
    ],
)
def test_output_to_a_closed_pipe_exits_0_quietly(tmp_path, loaded, args):
    """`rdbscan report dump.rdb | head`: the reader closed the pipe before rdbscan wrote; no
    line, exit 0 (a pipeline under `set -o pipefail` must not fail on it)."""
    db = tmp_path / "x.duckdb"
    copy_db(loaded(DUMP), db)
    args = [str(db) if a == "DB" else a for a in args]
    read, write = os.pipe()
    os.close(read)  # no reader: the first write fails with EPIPE
    try:
        p = subprocess.run(
            [sys.executable, "-m", "rdbscan", *args], stdout=write, stderr=subprocess.PIPE
        )
    finally:
        os.close(write)
    assert (p.returncode, p.stderr) == (0, b"")


def test_sql_error_is_a_usage_error(tmp_path, loaded):
    db = tmp_path / "x.duckdb"
    copy_db(loaded(DUMP), db)
    p = run_cli("sql", db, "SELEC 1")
    assert (p.returncode, p.stderr) == (
        EXIT_USAGE,
        'rdbscan: error: SQL error: Parser Error: syntax error at or near "SELEC" LINE 1: SELEC 1\n',
    )
    # DuckDB's message is several lines (a hint, the query, carets): one line here
    p = run_cli("sql", db, "SELECT * FROM key")
    assert p.returncode == EXIT_USAGE
    assert p.stderr == (
        "rdbscan: error: SQL error: Catalog Error: Table with name key does not exist! "
        'Did you mean "keys"? LINE 1: SELECT * FROM key\n'
    )


def test_a_query_of_another_command_says_which(tmp_path, loaded):
    """`rdbscan query DB schema_check`: the query reads what `report --schema` makes; one line
    that says so, exit 2."""
    db = tmp_path / "x.duckdb"
    copy_db(loaded(DUMP), db)
    p = run_cli("query", db, "schema_check")
    assert p.returncode == EXIT_USAGE
    assert len(p.stderr.splitlines()) == 1
    assert p.stderr.startswith(
        "rdbscan: error: schema_check: SQL error: Catalog Error: Table with name rschema_keys "
        "does not exist!"
    )
    assert p.stderr.endswith("(schema_check is run by `rdbscan report --schema`)\n")


@pytest.mark.parametrize("command", [["sql"], ["query"]])
def test_a_dump_where_a_database_goes_says_load_it_first(tmp_path, command):
    """`rdbscan sql dump.rdb "..."` (and `query`): one line saying to load the dump first, as
    `query` says it, not DuckDB's words nor the hint meant for -o; the dump is left as it was."""
    dump = tmp_path / "dump.rdb"
    shutil.copyfile(DUMP, dump)
    before = dump.read_bytes()
    args = ["SELECT count(*) FROM keys"] if command == ["sql"] else ["big_keys"]
    p = run_cli(*command, dump, *args)
    assert (p.returncode, p.stdout, p.stderr) == (
        EXIT_DATABASE,
        "",
        f"rdbscan: error: {dump}: not a DuckDB database (load a dump with `rdbscan load` first)\n",
    )
    assert dump.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["dump.rdb"]


@contextlib.contextmanager
def _mounted_tmpfs(path: Path, options: str):
    """A small tmpfs at `path` (root only): a read-only or a full file system."""
    path.mkdir()
    if (
        os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True
        ).returncode
        != 0
    ):
        pytest.skip("needs root to mount a tmpfs")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)


def test_read_only_directory(tmp_path):
    with _mounted_tmpfs(tmp_path / "ro", "ro,size=1m") as ro:
        for cmd in (
            ["load", "-q", DUMP, "-o", ro / "x.duckdb"],
            ["report", DUMP, "--database", ro / "x.duckdb"],  # refused before the load
            ["report", DUMP, "-o", ro / "x.json"],
        ):
            p = run_cli(*cmd)
            assert (p.returncode, p.stderr) == (
                EXIT_DATABASE,
                f"rdbscan: error: {cmd[-1]}: the file system is read-only\n",
            )


@pytest.mark.slow
def test_html_on_a_read_only_file_system(tmp_path, loaded):
    db = tmp_path / "x.duckdb"
    copy_db(loaded(DUMP), db)
    with _mounted_tmpfs(tmp_path / "ro", "ro,size=1m") as ro:
        p = run_cli("report", "-q", db, "--html", ro / "r.html")
        assert (p.returncode, p.stderr) == (
            EXIT_DATABASE,
            f"rdbscan: error: {ro / 'r.html'}: the file system is read-only\n",
        )


def test_full_disk(tmp_path):
    with _mounted_tmpfs(tmp_path / "full", "size=100k") as full:
        p = run_cli("load", "-q", DUMP, "-o", full / "x.duckdb")
        assert p.returncode == EXIT_DATABASE, p.stderr
        assert re.fullmatch(
            rf"rdbscan: error: {re.escape(str(full))}/x\.duckdb(\.wal)?: the disk is "
            rf"full \(No space left on device\)\n",
            p.stderr,
        ), p.stderr


@pytest.mark.subprocess
def test_locked_database(tmp_path, loaded):
    db = tmp_path / "x.duckdb"
    copy_db(loaded(DUMP), db)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys; c = duckdb.connect(sys.argv[1]); "
            "print('open', flush=True); sys.stdin.read()",
            str(db),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "open\n"
        want = (
            f"another process has the database open (PID {holder.pid}): wait for it to finish, "
            f"or use another file\n"
        )
        for cmd in (["load", "-q", DUMP, "-o", db], ["sql", db, "SELECT 1"], ["report", db]):
            p = run_cli(*cmd)
            assert p.returncode == EXIT_DATABASE, (cmd, p.stderr)
            assert p.stderr.startswith("rdbscan: error: ") and p.stderr.endswith(want), p.stderr
    finally:
        holder.communicate("")


@pytest.mark.slow
@pytest.mark.subprocess
def test_closed_stdin(tmp_path):
    for cmd in (["load", "-", "-o", tmp_path / "x.duckdb"], ["report", "-q", "-"]):
        p = subprocess.run(
            [sys.executable, "-m", "rdbscan", *map(str, cmd)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            preexec_fn=lambda: os.close(0),
        )
        assert p.returncode == EXIT_INPUT, p.stderr
        assert p.stderr.startswith("rdbscan: error: <stdin>: standard input is closed\n"), p.stderr


def test_invalid_regex_in_rules_file(tmp_path, loaded):
    db = tmp_path / "x.duckdb"
    copy_db(loaded(DUMP), db)
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules.disallowed-chars]\nallowed = "z-a"\n')
    p = run_cli("report", db, "--rules", rules)
    assert (p.returncode, p.stderr, p.stdout) == (
        EXIT_USAGE,
        f"rdbscan: error: {rules}: rules.disallowed-chars.allowed: 'z-a' is not a "
        f"regular-expression character class (invalid character class range: z-a)\n",
        "",
    )


@pytest.mark.parametrize(
    "args, line",
    [
        (
            ["--set", "collection_length=99999999999999999999999"],
            "rdbscan: error: --set collection_length: 99999999999999999999999 is out of range "
            "(0 to 9223372036854775807)\n",
        ),
        (
            ["--set", "collection_length=-5"],
            "rdbscan: error: --set collection_length: -5 is out of range (0 to 9223372036854775807)\n",
        ),
        (["--set", "margin=nan"], "rdbscan: error: --set margin: nan is not a finite number\n"),
        (
            ["--set", "hash-max-listpack-entries=99999999999999999999"],
            "rdbscan: error: --set: hash-max-listpack-entries 99999999999999999999 is out of range\n",
        ),
    ],
)
def test_out_of_range_settings(tmp_path, loaded, args, line):
    db = tmp_path / "x.duckdb"
    copy_db(loaded(DUMP), db)
    p = run_cli("report", db, *args)
    assert (p.returncode, p.stderr) == (EXIT_USAGE, line)


def test_out_of_range_top(tmp_path):
    p = run_cli("report", DUMP, "--top", "99999999999999999999")
    assert p.returncode == EXIT_USAGE
    assert p.stderr.endswith(
        "Error: Invalid value for '--top': 99999999999999999999 is not in the range 1<=x<=100000.\n"
    )
    assert "internal error" not in p.stderr


def test_interrupted_report_exits_130(tmp_path, monkeypatch, capsys):
    """Ctrl-C while the report's queries run: click turns it into Abort, which used to exit 1."""
    from rdbscan.cli import main as cli  # the module (rdbscan.cli exports only run)
    from rdbscan.reports.report import build as rpt

    def interrupted(*args, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(rpt, "build_report", interrupted)
    monkeypatch.setattr(sys, "argv", ["rdbscan", "report", "-q", DUMP])
    assert cli._run(debug=False) == EXIT_INTERRUPTED
    assert capsys.readouterr().err.endswith("rdbscan: interrupted\n")


@pytest.mark.slow
def test_apostrophe_in_output_path_with_jobs(tmp_path):
    out = tmp_path / "it's here" / "o'brien.duckdb"
    out.parent.mkdir()
    # (DUMP is dump 2 already: loading it again would be refused, so two other dumps)
    p = run_cli("load", "-q", "-j", "2", DUMP_B, DUMP_C, "-o", out)
    assert (p.returncode, p.stderr) == (0, "")
    con = duckdb.connect(str(out), read_only=True)
    assert con.execute("SELECT dump_id, complete FROM dumps ORDER BY 1").fetchall() == [
        (1, True),
        (2, True),
    ]
    con.close()


def _stuck_dump(tmp_path) -> tuple[Path, int]:
    """A FIFO that holds the start of a dump and never ends: a load of it runs until killed.
    Returns the path and the descriptor that keeps it open (close it when done)."""
    fifo = tmp_path / "stuck.rdb"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR)  # a writer that never blocks and never closes
    os.write(fd, Path(DUMP).read_bytes()[:4096])
    return fifo, fd


def _wait_merged(parts_parent: Path, i: int, proc: subprocess.Popen) -> None:
    """Wait until part i of a parallel load has been copied (its file appeared, then went)."""
    seen = False
    for _ in range(1200):
        files = {p.name for d in parts_parent.glob(".rdbscan-parts-*") for p in d.iterdir()}
        seen = seen or f"part{i}.duckdb" in files
        if seen and f"part{i}.duckdb" not in files:
            return
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise AssertionError("the finished dump was not copied while another still loads")


def _parallel_load_with_a_stuck_dump(tmp_path):
    """`load -j 2 STUCK SMALL` in a session of its own, once SMALL (dump 2) has been copied:
    (the process, the database path, the FIFO's descriptor to close)."""
    fifo, fd = _stuck_dump(tmp_path)
    out = tmp_path / "out" / "x.duckdb"
    out.parent.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "rdbscan", "load", "-q", "-j", "2", str(fifo), DUMP, "-o", str(out)],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_merged(out.parent, 1, proc)
    except BaseException:
        proc.kill()
        os.close(fd)
        raise
    return proc, out, fd


def _group_gone(pgid: int) -> bool:
    for _ in range(200):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.backend
@pytest.mark.slow
@pytest.mark.subprocess
def test_ctrl_c_with_jobs_keeps_finished_dumps(tmp_path):
    """The stuck dump is first, the small one second: the small one is copied as soon as it is
    loaded, and Ctrl-C (SIGINT to the process group, as a terminal sends it) ends the load
    without waiting, keeps it, removes the parts directory and leaves no worker behind."""
    proc, out, fd = _parallel_load_with_a_stuck_dump(tmp_path)
    try:
        os.killpg(proc.pid, signal.SIGINT)
        err = proc.communicate(timeout=120)[1]
    finally:
        os.close(fd)
    assert (proc.returncode, err.lstrip("\n")) == (EXIT_INTERRUPTED, "rdbscan: interrupted\n")
    assert _group_gone(proc.pid)
    assert os.listdir(out.parent) == ["x.duckdb"]
    con = duckdb.connect(str(out), read_only=True)
    assert con.execute("SELECT dump_id, keys, complete FROM dumps").fetchall() == [(2, 562, True)]
    assert con.execute("SELECT count(*) FROM keys").fetchone() == (562,)
    con.close()


@pytest.mark.backend
@pytest.mark.slow
@pytest.mark.subprocess
def test_ctrl_c_with_jobs_into_a_dataset_keeps_the_dumps_committed(tmp_path):
    """`load -j 2 SMALL STUCK --parquet DS`: SMALL is committed as soon as it is loaded (dumps
    are committed in the order of the paths, each once those before it have ended), and Ctrl-C
    ends the load without waiting for the stuck worker, keeps SMALL, removes what the stuck one
    wrote and leaves no worker behind.  (The pool of concurrent.futures committed nothing before
    every dump had ended, and Ctrl-C waited for the running ones.)"""
    fifo, fd = _stuck_dump(tmp_path)
    ds = tmp_path / "ds"
    proc = subprocess.Popen(
        [sys.executable, "-m", "rdbscan", "load", "-q", "-j", "2", DUMP, str(fifo)]
        + ["--parquet", str(ds)],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        mark = ds / "dumps" / NULL_PART / "snapshot=1" / "dump_id=1" / "part-00000.parquet"
        for _ in range(1200):
            if mark.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert mark.exists(), "the loaded dump was not committed while another still loads"
        os.killpg(proc.pid, signal.SIGINT)
        err = proc.communicate(timeout=120)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(fd)
    assert (proc.returncode, err.lstrip("\n")) == (EXIT_INTERRUPTED, "rdbscan: interrupted\n")
    assert _group_gone(proc.pid)
    con = duckdb.connect()
    rows = con.execute(
        f"SELECT dump_id, keys, complete FROM read_parquet('{ds}/dumps/**/*.parquet')"
    ).fetchall()
    assert rows == [(1, 562, True)]
    tables = ["db_sizes", "dumps", "keys", "stream_groups", "streams"]
    folders = sorted((p.parts[-4], p.name) for p in ds.glob("*/*/*/dump_id=*"))
    assert folders == [(t, "dump_id=1") for t in tables]  # nothing of the stuck dump 2
    p = run_cli("sql", ds, "SELECT count(*) AS n FROM keys", "-f", "csv")
    assert (p.returncode, p.stdout) == (0, "n\n562\n")


def _reader_of(parent: int, path: Path) -> int:
    """The pid of the child process of `parent` that has `path` open."""
    for _ in range(1200):
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                if ppid == parent and any(
                    os.readlink(fd) == str(path) for fd in (entry / "fd").iterdir()
                ):
                    return int(entry.name)
            except (OSError, IndexError, ValueError):
                continue
        time.sleep(0.05)
    raise AssertionError(f"no child of {parent} has {path} open")


@pytest.mark.backend
@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_worker_killed_in_a_load_into_a_dataset_is_that_dumps_error(tmp_path):
    """`load -j 2 STUCK SMALL --parquet DS` and the worker reading STUCK killed (as the kernel's
    out-of-memory killer would): STUCK is reported failed, in one line, exit 6, and its files
    are removed; SMALL is committed; the load does not stop at the lost worker."""
    fifo, fd = _stuck_dump(tmp_path)
    ds = tmp_path / "ds"
    proc = subprocess.Popen(
        [sys.executable, "-m", "rdbscan", "load", "-q", "-j", "2", str(fifo), DUMP]
        + ["--parquet", str(ds)],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        os.kill(_reader_of(proc.pid, fifo), signal.SIGKILL)
        err = proc.communicate(timeout=120)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(fd)
    assert (proc.returncode, err) == (
        EXIT_INPUT,
        f"rdbscan: error: {fifo}: not loaded: the worker process loading it ended "
        f"unexpectedly (killed by SIGKILL)\n",
    )
    rows = duckdb.sql(f"SELECT dump_id, keys FROM read_parquet('{ds}/dumps/**/*.parquet')")
    assert rows.fetchall() == [(2, 562)]
    assert {p.name for p in ds.glob("*/*/*/dump_id=*")} == {"dump_id=2"}


@pytest.mark.backend
@pytest.mark.slow
@pytest.mark.subprocess
def test_kill_9_of_parent_ends_workers_and_next_load_cleans_up(tmp_path):
    proc, out, fd = _parallel_load_with_a_stuck_dump(tmp_path)
    try:
        proc.kill()
        proc.communicate(timeout=60)
        assert _group_gone(proc.pid), "a worker outlived its parent"
    finally:
        os.close(fd)
    assert [p.name.startswith(".rdbscan-parts-") for p in out.parent.iterdir() if p.is_dir()] == [
        True
    ]
    # (DUMP is dump 2 already: loading it again would be refused, so two other dumps)
    p = run_cli("load", "-q", "-j", "2", DUMP_B, DUMP_C, "-o", out)
    assert (p.returncode, p.stderr) == (0, "")
    assert os.listdir(out.parent) == ["x.duckdb"]
    con = duckdb.connect(str(out), read_only=True)
    assert con.execute("SELECT dump_id, complete FROM dumps ORDER BY 1").fetchall() == [
        (2, True),
        (3, True),
        (4, True),
    ]
    con.close()


@pytest.mark.backend
@pytest.mark.subprocess
def test_double_ctrl_c_exits_130_with_a_consistent_database(tmp_path):
    """Two Ctrl-C in a row while a load runs: the second one must not cut the clean-up short
    (it ended in a C++ terminate, exit 134)."""
    fifo, fd = _stuck_dump(tmp_path)
    out = tmp_path / "x.duckdb"
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "rdbscan", "load", "-q", str(fifo), "-o", str(out)],
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        for _ in range(1200):  # the dump is being read when its database exists
            if out.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGINT)
        os.killpg(proc.pid, signal.SIGINT)
        err = proc.communicate(timeout=120)[1]
    finally:
        os.close(fd)
    assert (proc.returncode, err.lstrip("\n")) == (EXIT_INTERRUPTED, "rdbscan: interrupted\n")
    # Nothing was committed to the new file: it is removed, not left empty (issue 27).
    assert sorted(os.listdir(tmp_path)) == sorted(p.name for p in (fifo,))


@pytest.mark.parametrize(
    "command",
    [
        ["report", DUMP],  # used to fall back to ':' without a word
        ["query", DUMP, "prefixes"],  # used to run with no delimiter at all
        ["schema", DUMP],
        ["diff", DUMP, DUMP_B],
    ],
)
def test_empty_delimiters_are_a_usage_error_everywhere(command):
    """`--delimiters ""` is refused the same way by every command that takes it (one check,
    on the option, where report, query and the others each had their own or none)."""
    res = run_cli(*command, "--delimiters", "")
    assert res.returncode == EXIT_USAGE
    assert (
        res.stderr.splitlines()[-1] == "Error: Invalid value for '--delimiters': must not be empty"
    )
    assert res.stdout == ""
