"""Which implementation of the parser's hot loops runs: the compiled twins in _speedups (built
from _speedups.pyx at install time) or the pure-Python reference code.

This module is the one place that picks: it imports the compiled module once and binds the
walkers the parser calls (`listpack_scan`, `ziplist_scan`); nothing else rebinds itself at
import.  Set RDBSCAN_PURE_PYTHON=1 to force the pure-Python path (tests compare the two).

A compiled module built from another _speedups.pyx than the one beside it (an editable install
after `git pull`) is not used: setup.py bakes the SHA-256 of the .pyx it compiled into the
module (`SOURCE_SHA256`), and a mismatch falls back to pure Python with a one-line warning.
"""
from __future__ import annotations

import hashlib
import os
import sys

from . import blobs

REBUILD_HINT = "pip install -e . (or python setup.py build_ext --inplace)"

compiled = None
stale: str | None = None   # why a built module was not used (shown by `rdbscan --version`)


def source_sha256(path: str) -> str | None:
    """SHA-256 of the .pyx at `path`, None when it is not there (a wheel ships no .pyx)."""
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


def stale_reason(module) -> str | None:
    """Why `module` does not match the _speedups.pyx beside it, or None when it does (or when
    there is no .pyx to compare with)."""
    pyx = os.path.join(os.path.dirname(os.path.abspath(module.__file__)), "_speedups.pyx")
    want = source_sha256(pyx)
    built = getattr(module, "SOURCE_SHA256", None)
    if want is None or built == want:
        return None
    return f"{module.__file__} was built from another _speedups.pyx than {pyx}"


if not os.environ.get("RDBSCAN_PURE_PYTHON"):
    try:
        from . import _speedups as compiled
    except ImportError:  # not built (no compiler at install time): pure Python
        compiled = None
    if compiled is not None:
        stale = stale_reason(compiled)
        if stale is not None:
            compiled = None
            sys.stderr.write(f"rdbscan: warning: the compiled speedups are stale (built from "
                             f"another _speedups.pyx): using pure Python; rebuild with: "
                             f"{REBUILD_HINT}\n")

# The walkers the parser calls (same results and errors in both implementations).
listpack_scan = compiled.listpack_scan if compiled is not None else blobs.listpack_scan
ziplist_scan = compiled.ziplist_scan if compiled is not None else blobs.ziplist_scan


def describe() -> str:
    """'compiled' or 'pure Python' (shown by `rdbscan --version`)."""
    if compiled is not None:
        return "compiled"
    return "pure Python (stale compiled module: rebuild with pip install -e .)" if stale \
        else "pure Python"
