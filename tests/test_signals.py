"""Signals as users send them: Ctrl-C (or SIGTERM) stops a running query, and a signal while
the command line's modules load exits with one line, not a traceback (docs/exit-codes.md: 130
and 143).  SIGTERM during a load: tests/test_trust_load.py, beside Ctrl-C."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from common import copy_db

from rdbscan.errors import EXIT_INTERRUPTED, EXIT_TERMINATED

pytestmark = pytest.mark.subprocess
# a query that runs for hours: one that stops, stops because of the signal
ENDLESS = "SELECT sum(a.range % 7) FROM range(10000000000000) a"


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime, stime in clock ticks (USER_HZ)


def _wait_for_cpu(proc: subprocess.Popen, seconds: float) -> None:
    """Until `proc` has used `seconds` of CPU: past its start-up and inside the query (the
    start-up of `rdbscan sql` takes well under 2 s of CPU), however busy the machine is."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if _cpu_seconds(proc.pid) >= seconds:
            return
        time.sleep(0.1)
    raise AssertionError(f"the process used less than {seconds} s of CPU (exit {proc.poll()})")


@pytest.mark.slow
@pytest.mark.parser_independent  # a query over range(): no dump is read
def test_ctrl_c_stops_a_running_sql_query(tmp_path, sample_db):
    """DuckDB went on with a query after Ctrl-C (it swallowed the KeyboardInterrupt): `sql`
    ran the query to its end.  Now every open connection is interrupted: exit 130 at once."""
    db = copy_db(sample_db, tmp_path / "s.duckdb")
    for sig, code, line in (
        (signal.SIGINT, EXIT_INTERRUPTED, "rdbscan: interrupted"),
        (signal.SIGTERM, EXIT_TERMINATED, "rdbscan: terminated"),
    ):
        proc = subprocess.Popen(
            [sys.executable, "-m", "rdbscan", "sql", str(db), ENDLESS],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            _wait_for_cpu(proc, 3.0)
            proc.send_signal(sig)
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
        assert (proc.returncode, out, err) == (code, "", line + "\n")


def test_a_signal_while_the_modules_load_prints_one_line():
    """Ctrl-C (or SIGTERM) while click, DuckDB and pyarrow load (the first few hundred
    milliseconds of every command) printed a KeyboardInterrupt traceback.  The signal is sent
    by an import hook the moment `duckdb` is imported, as the console script starts."""
    for sig, code, line in (
        ("SIGINT", EXIT_INTERRUPTED, "rdbscan: interrupted"),
        ("SIGTERM", EXIT_TERMINATED, "rdbscan: terminated"),
    ):
        script = textwrap.dedent(
            f"""
            import os, signal, sys

            class SignalOnImport:
                def find_spec(self, name, path=None, target=None):
                    if name == "duckdb":
                        os.kill(os.getpid(), signal.{sig})
                    return None

            sys.meta_path.insert(0, SignalOnImport())
            sys.argv = ["rdbscan", "--version"]
            from rdbscan.cli import run  # what the console script does
            run()
            """
        )
        res = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
        )
        assert (res.returncode, res.stdout, res.stderr) == (code, "", line + "\n")
