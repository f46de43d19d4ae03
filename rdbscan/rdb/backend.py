"""The one switch between the compiled core and the pure-Python reference code.

The choice is made once, when this module is first imported: the compiled module
`rdbscan.rdb._speedups` (Cython, built from _speedups.pyx at install time) unless the environment
sets RDBSCAN_PURE_PYTHON=1, the module was not built (no C compiler at install time), or it is
stale.  Every caller takes its implementation from here, and nothing rebinds itself afterwards; each
name is bound on both paths to one implementation with the same call shape (msgpack-python's
shape), so no caller asks which one runs.  The compiled core follows the layers: the walkers here,
the batch of key rows in the db layer (db/_batch.pyx KeyColumns, a RowSink of _speedups.pxd),
which db/rows.py loads through load_compiled when `compiled` is set.
Both paths give identical rows: tests/test_speedups.py runs the fixtures through each and compares
them, and .ci/run runs the parser-dependent tests on both.

A compiled module built from other sources than the ones beside it (an editable install after
`git pull`) is not used: setup.py bakes the SHA-256 of its .pyx and the interface .pxd into the
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

from . import blob_stream, blobs, elements, lzf_stream, reader

REBUILD_HINT = "pip install -e . (or python setup.py build_ext --inplace)"
PURE_PYTHON = os.environ.get("RDBSCAN_PURE_PYTHON", "") not in ("", "0")
# The sources of this layer's compiled module, as setup.py's MODULES lists them (relative to the
# folder that holds the package): its .pyx, then the interface its row sink declares.
SOURCES = ("rdbscan/rdb/_speedups.pyx", "rdbscan/rdb/_speedups.pxd")


def sources_sha256(paths: list[str]) -> str | None:
    """SHA-256 of the files at `paths` one after the other (setup.py's sources_sha256), None
    when one is not there (a wheel ships no .pyx)."""
    digest = hashlib.sha256()
    for path in paths:
        try:
            with open(path, "rb") as fh:
                digest.update(fh.read())
        except OSError:
            return None
    return digest.hexdigest()


def stale_reason(module: ModuleType, sources: tuple[str, ...]) -> str | None:
    """Why `module` does not match the `sources` beside it, or None when it does (or when they
    are not there to compare with)."""
    root = os.path.abspath(module.__file__ or "")
    for _ in module.__name__.split("."):
        root = os.path.dirname(root)
    want = sources_sha256([os.path.join(root, p) for p in sources])
    built = getattr(module, "SOURCE_SHA256", None)
    if want is None or built == want:
        return None
    return f"{module.__file__} was built from another {' or '.join(sources)}"


stale: list[str] = []  # why built modules were not used (shown by `rdbscan --version`)


def load_compiled(name: str, sources: tuple[str, ...]) -> ModuleType | None:
    """The compiled module `name` built from `sources` (paths as setup.py's MODULES gives
    them), or None: not built, or stale (a one-line warning; the reason goes to `stale`)."""
    try:
        module = importlib.import_module(name)
    except ImportError:  # not built: the pure-Python path
        return None
    reason = stale_reason(module, sources)
    if reason is None:
        return module
    stale.append(reason)
    sys.stderr.write(
        f"rdbscan: warning: the compiled speedups are stale ({name} was built from another "
        f"{' or '.join(os.path.basename(p) for p in sources)}): using pure Python; "
        f"rebuild with: {REBUILD_HINT}\n"
    )
    return None


compiled = None if PURE_PYTHON else load_compiled("rdbscan.rdb._speedups", SOURCES)

skip_elements: Callable[..., tuple[int, int, int, int]]
LZFStream: Any
lzf_whole: Callable[[bytes, int], bytes | None]
if compiled is not None:
    listpack_scan = compiled.listpack_scan
    ziplist_scan = compiled.ziplist_scan
    # blobs longer than blob_stream.WHOLE_MAX: LZF decoded in pieces, walked through a window
    LZFStream = compiled.LZFStream
    # LZF strings decoded whole (reader.Reader.string)
    lzf_whole = compiled.lzf_decode
    listpack_stream_scan = compiled.listpack_stream_scan
    ziplist_stream_scan = compiled.ziplist_stream_scan
    # bulk skip of hashtable-encoded elements
    skip_elements = compiled.skip_elements
else:
    listpack_scan = blobs.listpack_scan
    ziplist_scan = blobs.ziplist_scan
    LZFStream = lzf_stream.LZFStream
    lzf_whole = reader.lzf_whole
    listpack_stream_scan = blob_stream.listpack_stream_scan
    ziplist_stream_scan = blob_stream.ziplist_stream_scan
    skip_elements = elements.skip_elements


def describe() -> str:
    """'compiled' or 'pure Python' (shown by `rdbscan --version`)."""
    if compiled is not None:
        if stale:  # the walkers are, a module built with them is not (db/_batch.pyx)
            return "compiled (but a stale module: pure Python; rebuild with pip install -e .)"
        return "compiled"
    return (
        "pure Python (stale compiled module: rebuild with pip install -e .)"
        if stale
        else "pure Python"
    )
