"""Source bytes: open what the user named (a file path or `-` for stdin) as a binary stream.

Returns a Source whose `stream.read(n)` the parser consumes; the input is opened read-only
and nothing is written next to it.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field


@dataclass
class Source:
    name: str                  # what to call the input in messages and in `dumps.path`
    stream: object             # binary stream with .read(n)
    size: int | None           # bytes of RDB data when known (None for pipes)
    compression: str | None = None
    framing: str | None = None
    initial: bytes = b""       # bytes already read from `stream` that belong to the RDB
    notes: dict = field(default_factory=dict)

    def close(self) -> None:
        if self.stream is not sys.stdin.buffer:
            self.stream.close()


class SourceError(Exception):
    """The input cannot be opened (missing file, directory without a base RDB, ...)."""


def open_source(path: str) -> Source:
    if path == "-":
        return Source(name="<stdin>", stream=sys.stdin.buffer, size=None)
    if os.path.isdir(path):
        raise SourceError(f"{path}: is a directory, not an RDB file")
    try:
        f = open(path, "rb")
    except OSError as e:
        raise SourceError(f"{path}: {e.strerror}") from None
    return Source(name=path, stream=f, size=os.fstat(f.fileno()).st_size)
