"""Give the C heap's free memory back to the system after each dump (glibc's malloc_trim).

A process that loads many dumps one after the other (a `--jobs` worker, a Dask worker, a
`load --parquet` of a whole fleet) allocates and frees the same few hundred megabytes per dump,
on the parsing thread and on the writer thread (pyarrow, DuckDB's Arrow conversion).  glibc
keeps freed blocks in its per-thread arenas and hands the top of a heap back only when it is
free at the very end.  (The growth of ~11 MB a dump measured in docs/fleet.md was a reference
cycle between the compiled batch and its RowBuilder, gone since the batch holds only
rows.MemoryCosts; this is the smaller part: 200-209 MB resident between dumps
without it, 170 MB with it, over 12 dumps of 1 M keys in one process.)  malloc_trim(0) returns
every arena's free pages (madvise) and costs a few milliseconds; elsewhere (macOS, musl) it is
a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

_trim = None
if sys.platform.startswith("linux"):
    try:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _trim = getattr(_libc, "malloc_trim", None)  # glibc only (musl has none)
    except OSError:
        _trim = None
    if _trim is not None:
        _trim.argtypes = [ctypes.c_size_t]
        _trim.restype = ctypes.c_int


def release_free_memory() -> None:
    """Hand the heap's free pages back to the system (glibc; elsewhere nothing), and those
    pyarrow's own allocator (mimalloc or jemalloc) keeps cached: after a load, `report DUMP` runs
    its queries in the same process (issue 28: 4 MB less at the report's peak on mixed)."""
    arrow = sys.modules.get("pyarrow")
    if arrow is not None:
        arrow.default_memory_pool().release_unused()
    if _trim is not None:
        _trim(0)
