"""The identity of a loaded dump (`dumps.fingerprint`): what makes a second load of the same
dump into the same database a duplicate (docs/loading.md, "Identity of a dump").

Not the path: the same dump copied elsewhere, compressed or read from a pipe is the same dump,
and a new snapshot written over the old file is a new one.  The fingerprint is taken from what
the parse read: the RDB version, every aux field (server version, ctime, used-mem, replication
id and offset: two snapshots differ there), the number of bytes and keys, the CRC64 the file
stores and the CRC64 of the bytes as read (so a copy damaged in the middle is another dump).
Without the computed CRC64 (`--no-verify-crc`, RDB < 5) a SHA-256 of the input file's size,
first and last 64 KiB stands in for it; a dump that ends in an error adds where and how.
"""

from __future__ import annotations

import hashlib
import os
import stat

EDGE = 64 * 1024


def file_fingerprint(path: str) -> str | None:
    """`file:<size>:<sha256>` of a regular file (a directory or AOF manifest: of the RDB file it
    names), None for standard input, pipes and what cannot be opened (open_source says why)."""
    if path == "-":
        return None
    from ..rdb.source import SourceError, _resolve_path

    try:
        real, _ = _resolve_path(path)
        with open(real, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                return None
            h = hashlib.sha256(b"rdbscan-file-1\0")
            h.update(st.st_size.to_bytes(8, "little"))
            h.update(fh.read(EDGE))
            if st.st_size > EDGE:
                fh.seek(max(EDGE, st.st_size - EDGE))
                h.update(fh.read(EDGE))
    except (OSError, SourceError, ValueError):
        return None
    return f"file:{st.st_size}:{h.hexdigest()[:32]}"


def dump_fingerprint(
    info, path: str, error: str | None = None, error_offset: int | None = None
) -> str | None:
    """`rdb:<sha256>` of a parsed dump (parser.DumpInfo), None when no RDB header was read."""
    if not info.magic:
        return None
    parts = [
        info.magic,
        info.rdb_version,
        info.bytes_read,
        info.keys,
        info.skipped_keys,
        info.checksum_stored,
        info.checksum_computed,
    ]
    parts += [f"{k}={v}" for k, v in sorted(info.aux.items())]
    if info.checksum_computed is None:
        parts.append(file_fingerprint(path))
    if error is not None:
        parts += ["error", error_offset, file_fingerprint(path)]
    h = hashlib.sha256(b"rdbscan-dump-1\0")
    h.update("\0".join(map(str, parts)).encode("utf-8", "backslashreplace"))
    return f"rdb:{h.hexdigest()[:32]}"
