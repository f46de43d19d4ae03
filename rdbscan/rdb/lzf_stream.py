"""LZF decompression in pieces (docs/hostile-inputs.md): a payload read in bounded pieces of
compressed bytes gives its output in bounded pieces, so an LZF string that claims up to the
1 GiB item cap is never held whole.  An LZF back-reference reaches at most 8 KiB back, so the
last 8 KiB of output is all the state a piece needs besides an instruction cut at its end.

The format is liblzf's lzf_d.c, the one Redis and python-lzf use.  A payload decodes when every
instruction is whole, no back-reference reaches before the output's start and the output is
exactly the length the header says: python-lzf's `lzf.decompress(data, ulen)` then returns it,
and otherwise returns None or raises ValueError; LZFStream raises ValueError in all those
cases (in `decode` as soon as it knows, else in `finish`).

No library on PyPI decompresses raw LZF in pieces (python-lzf and its forks decompress a whole
buffer), so this is hand-written, with a compiled twin of the same name in _speedups.pyx
(backend.LZFStream picks one); tests/test_lzf_stream.py checks both against python-lzf.
"""

from __future__ import annotations

WINDOW = 8192  # the farthest an LZF back-reference reaches: ((0x1f << 8) | 0xff) + 1


class LZFStream:
    """Decoder of one LZF payload that decompresses to `ulen` bytes."""

    __slots__ = ("ulen", "total", "_tail", "_pending")

    def __init__(self, ulen: int) -> None:
        self.ulen = ulen
        self.total = 0  # bytes of output so far
        self._tail = b""  # the last WINDOW bytes of output
        self._pending = b""  # an instruction cut at the end of the last piece

    def decode(self, data: bytes) -> bytes:
        """The output of the next piece of compressed bytes (at most 88 bytes per input byte)."""
        if self._pending:
            data = self._pending + data
        out = bytearray(self._tail)
        base = len(out)
        ip = 0
        n = len(data)
        while ip < n:
            ctrl = data[ip]
            if ctrl < 32:  # a literal run of ctrl + 1 bytes
                end = ip + 2 + ctrl
                if end > n:
                    break
                out += data[ip + 1 : end]
                ip = end
                continue
            ln = ctrl >> 5
            if ln == 7:  # a long back-reference: one more length byte
                if ip + 2 >= n:
                    break
                ln += data[ip + 1]
                dist = ((ctrl & 0x1F) << 8) + data[ip + 2] + 1
                ip += 3
            else:
                if ip + 1 >= n:
                    break
                dist = ((ctrl & 0x1F) << 8) + data[ip + 1] + 1
                ip += 2
            ln += 2
            start = len(out) - dist
            if start < 0:
                raise ValueError("LZF back-reference before the start of the output")
            if dist >= ln:
                out += out[start : start + ln]
            else:  # overlapping: the last dist bytes repeat
                pattern = bytes(out[start:])
                out += (pattern * (ln // dist + 1))[:ln]
        self._pending = data[ip:]
        self.total += len(out) - base
        if self.total > self.ulen:
            raise ValueError("LZF output longer than its header says")
        self._tail = bytes(out[-WINDOW:])
        return bytes(memoryview(out)[base:])

    def finish(self) -> None:
        """After the last piece: the payload ended on a whole instruction, at ulen bytes."""
        if self._pending:
            raise ValueError("LZF payload ends inside an instruction")
        if self.total != self.ulen:
            raise ValueError("LZF output shorter than its header says")
