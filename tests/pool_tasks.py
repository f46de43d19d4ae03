"""Tasks for the worker-pool tests (tests/test_parallel_load.py): module-level functions, which a
worker process imports by name."""

from __future__ import annotations

import os


def tenfold_or_exit(i: int) -> int:
    """i * 10; the worker process ends at once (exit code 3) on 1, as a crash would end it."""
    if i == 1:
        os._exit(3)
    return i * 10
