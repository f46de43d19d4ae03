"""Which implementation of the parser's hot loops runs: the compiled twins in _speedups (built
from _speedups.pyx at install time) or the pure-Python reference code.

Set RDBSCAN_PURE_PYTHON=1 to force the pure-Python path (tests compare the two).
"""
from __future__ import annotations

import os

compiled = None
if not os.environ.get("RDBSCAN_PURE_PYTHON"):
    try:
        from . import _speedups as compiled
    except ImportError:  # not built (no compiler at install time): pure Python
        compiled = None


def describe() -> str:
    """'compiled' or 'pure Python' (shown by `rdbscan --version`)."""
    return "compiled" if compiled is not None else "pure Python"
