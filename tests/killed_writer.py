"""A `rdbscan load` killed outright (SIGKILL: no clean-up runs) at a chosen call of the dataset
writer, for the tests of datasets left by killed writers (test_parquet.py, test_s3.py)."""

from __future__ import annotations

import signal
import subprocess
import sys

# argv: CLASS.METHOD of rdbscan.db.parquet to die in, then the `rdbscan` arguments.
_SCRIPT = (
    "import os, signal, sys\n"
    "from rdbscan.db import parquet\n"
    "cls, name = sys.argv[1].split('.')\n"
    "def killed(*args, **kwargs):\n"
    "    os.kill(os.getpid(), signal.SIGKILL)\n"
    "setattr(getattr(parquet, cls), name, killed)\n"
    "from rdbscan.cli.main import run\n"
    "sys.argv = ['rdbscan', *sys.argv[2:]]\n"
    "run()\n"
)


def killed_load(where: str, *args: str, cwd=None) -> None:
    """Run `rdbscan load ARGS` in a process that is killed when it calls `where`
    (e.g. "Dataset.publish": the dump's files are written, its `dumps` file is not)."""
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT, where, "load", "-q", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
    )
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stderr)
