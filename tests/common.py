"""What many test modules share: where the fixtures are, and one in-process runner of the
`rdbscan` command line that gives what a user sees (the session fixtures are in conftest.py).

`run_cli` goes through the console script's own error mapping (rdbscan.cli.main._run: the
one-line errors, the exit codes of docs/exit-codes.md, "internal error" for a bug) without
starting a Python process; click's CliRunner alone stops short of that mapping. A test still
starts a real process (`python -m rdbscan`, marked `subprocess`) for what only a process has:
signals, pipes, a closed standard input, peak memory, a fresh interpreter."""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
# Every fixture dump (RDB files and AOF files with an RDB preamble), in one order.
FIXTURE_DUMPS = sorted(str(p) for p in FIXTURES.rglob("*") if p.suffix in (".rdb", ".aof"))


@dataclass
class CliResult:
    """One run of the command line: exit code, standard output and standard error (text, and
    the bytes as written); `returncode` as subprocess names it, `output` both streams as
    written (click's Result.output)."""

    args: list[str]
    exit_code: int
    stdout_bytes: bytes
    stderr_bytes: bytes
    output_bytes: bytes

    @property
    def returncode(self) -> int:
        return self.exit_code

    @property
    def stdout(self) -> str:
        return self.stdout_bytes.decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        return self.stderr_bytes.decode("utf-8", "replace")

    @property
    def output(self) -> str:
        return self.output_bytes.decode("utf-8", "replace")

    def __repr__(self) -> str:  # what an assertion shows
        return f"<rdbscan {' '.join(self.args)}: exit {self.exit_code}, stderr {self.stderr!r}>"


@contextlib.contextmanager
def _working_directory(path):
    if path is None:
        yield
        return
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


@contextlib.contextmanager
def _piped(data: bytes | None):
    """Standard input as `cat data | rdbscan ...` gives it: a pipe (not seekable, short reads),
    fed by a thread; empty when data is None."""
    read, write = os.pipe()

    def feed():
        with open(write, "wb") as w, contextlib.suppress(BrokenPipeError):
            w.write(data or b"")

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    with open(read, "rb") as r:
        yield r
    feeder.join()  # the reader closed: a write still pending ends with EPIPE


def run_cli(*args, input: bytes | None = None, env=None, cwd=None) -> CliResult:
    """`rdbscan ARGS...` in this process: `input` is standard input (through a pipe), `env`
    overrides the environment (a value of None removes a variable), `cwd` the working
    directory."""
    from click.testing import CliRunner

    from rdbscan.cli import main as cli

    argv = [str(a) for a in args]
    with (
        _working_directory(cwd),
        _piped(input) as stdin,
        CliRunner().isolation(input=stdin, env=env) as streams,
    ):
        # run()'s own steps but its signal handlers and sys.exit (this process is pytest's)
        code = cli._run(debug="--debug" in argv, args=argv, prog_name="rdbscan")
        if code != 0:  # as run() does: what a failure's traceback held (DuckDB connections)
            gc.collect()  # (after a success there is none; conftest.py keeps this walk short)
        sys.stdout.flush()
        sys.stderr.flush()
        out, err, both = (s.getvalue() for s in streams)
    return CliResult(argv, code, out, err, both)


def copy_db(db: str, dest) -> str:
    """A copy of a database to change (the shared ones in conftest.py are read-only by
    agreement); `dest` a file path."""
    shutil.copyfile(db, dest)
    if os.path.exists(db + ".wal"):
        shutil.copyfile(db + ".wal", str(dest) + ".wal")
    return str(dest)
