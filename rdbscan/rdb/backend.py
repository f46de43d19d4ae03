"""The one switch between the compiled core and the pure-Python reference code.

The choice is made once, when this module is first imported: the compiled module
`rdbscan.rdb._speedups` (Cython, built from _speedups.pyx at install time) unless the environment
sets RDBSCAN_PURE_PYTHON=1, the module was not built (no C compiler at install time), or it is
stale.  Every caller takes its implementation from here, and nothing rebinds itself afterwards; each
name is bound on both paths to one implementation with the same call shape (msgpack-python's
shape), so no caller asks which one runs.  The one compiled class outside the rdb layer, the
batch of key rows (_speedups.KeyColumns), is picked by its layer, db/rows.py, from `compiled`.
Both paths give identical rows: tests/test_speedups.py runs the fixtures through each and compares
them, and .ci/run runs the whole suite on both.

A compiled module built from another _speedups.pyx than the one beside it (an editable install
after `git pull`) is not used: setup.py bakes the SHA-256 of the .pyx it compiled into the
module (`SOURCE_SHA256`), and a mismatch falls back to pure Python with a one-line warning.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

from . import blob_stream, blobs, elements, lzf_stream

REBUILD_HINT = "pip install -e . (or python setup.py build_ext --inplace)"
PURE_PYTHON = os.environ.get("RDBSCAN_PURE_PYTHON", "") not in ("", "0")


def source_sha256(path: str) -> str | None:
    """SHA-256 of the .pyx at `path`, None when it is not there (a wheel ships no .pyx)."""
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


def stale_reason(module: ModuleType) -> str | None:
    """Why `module` does not match the _speedups.pyx beside it, or None when it does (or when
    there is no .pyx to compare with)."""
    pyx = os.path.join(os.path.dirname(os.path.abspath(module.__file__ or "")), "_speedups.pyx")
    want = source_sha256(pyx)
    built = getattr(module, "SOURCE_SHA256", None)
    if want is None or built == want:
        return None
    return f"{module.__file__} was built from another _speedups.pyx than {pyx}"


compiled: ModuleType | None = None
stale: str | None = None  # why a built module was not used (shown by `rdbscan --version`)
if not PURE_PYTHON:
    try:
        compiled = importlib.import_module("rdbscan.rdb._speedups")
    except ImportError:  # not built: the pure-Python path
        compiled = None
    if compiled is not None:
        stale = stale_reason(compiled)
        if stale is not None:
            compiled = None
            sys.stderr.write(
                "rdbscan: warning: the compiled speedups are stale (built from another "
                f"_speedups.pyx): using pure Python; rebuild with: {REBUILD_HINT}\n"
            )

skip_elements: Callable[..., tuple[int, int, int, int]]
LZFStream: Any
if compiled is not None:
    listpack_scan = compiled.listpack_scan
    ziplist_scan = compiled.ziplist_scan
    # blobs longer than blob_stream.WHOLE_MAX: LZF decoded in pieces, walked through a window
    LZFStream = compiled.LZFStream
    listpack_stream_scan = compiled.listpack_stream_scan
    ziplist_stream_scan = compiled.ziplist_stream_scan
    # bulk skip of hashtable-encoded elements
    skip_elements = compiled.skip_elements
else:
    listpack_scan = blobs.listpack_scan
    ziplist_scan = blobs.ziplist_scan
    LZFStream = lzf_stream.LZFStream
    listpack_stream_scan = blob_stream.listpack_stream_scan
    ziplist_stream_scan = blob_stream.ziplist_stream_scan
    skip_elements = elements.skip_elements


def describe() -> str:
    """'compiled' or 'pure Python' (shown by `rdbscan --version`)."""
    if compiled is not None:
        return "compiled"
    return (
        "pure Python (stale compiled module: rebuild with pip install -e .)"
        if stale
        else "pure Python"
    )
