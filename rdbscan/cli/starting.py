"""The signal handler of the command line's first moments (rdbscan/cli/__init__.py), in a
module of its own so that rdbscan.cli.main can recognise it without importing the package."""

from __future__ import annotations

received: list[int] = []


def starting_handler(signum, frame):
    """Ctrl-C or SIGTERM while the command line's modules load (click, DuckDB, pyarrow: a few
    hundred milliseconds): nothing is done yet, so nothing to clean up."""
    received.append(signum)
    raise KeyboardInterrupt
