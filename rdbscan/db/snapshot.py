"""When a dump was taken: the time its TTLs are measured from (the report, `--skip-expired`) and
that `diff` and `trend` order snapshots by, with how it is known (SOURCES).  The loader stores
both in `dumps` (snapshot_ms, snapshot_source, snapshot_time); the report works them out again
for the dumps it covers, with the same function."""

from __future__ import annotations

import datetime as dt
import os
import time

# How the snapshot time is known: the dump's aux `ctime`; else its file's modification time;
# else (standard input, a file gone) the time rdbscan asked.
SOURCES = ("ctime", "file-mtime", "now")


def snapshot_ms_of(ctime: int | None, path: str | None) -> tuple[int, str]:
    """(Unix ms, one of SOURCES) of a dump with aux `ctime` (seconds, None without) read from
    `path`."""
    if ctime is not None and abs(ctime) < (1 << 63) // 1000:  # else a damaged ctime
        return int(ctime) * 1000, SOURCES[0]
    try:
        return int(os.stat(path).st_mtime * 1000), SOURCES[1]  # type: ignore[arg-type]
    except (OSError, TypeError, ValueError):
        return int(time.time() * 1000), SOURCES[2]


def snapshot_time(ctime: int | None) -> dt.datetime | None:
    """dumps.snapshot_time: aux `ctime` as a UTC TIMESTAMP, None without (or a damaged one)."""
    try:
        return (
            dt.datetime.fromtimestamp(ctime, dt.timezone.utc).replace(tzinfo=None)
            if ctime
            else None
        )
    except (OverflowError, OSError, ValueError):  # a damaged ctime far outside datetime
        return None
