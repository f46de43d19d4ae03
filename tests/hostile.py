#!/usr/bin/env python3
"""Hostile inputs (issue 15): generate each one, load it with `rdbscan load` in a child process
and check the bound it must meet: the exit code, the rows kept, peak RSS (of the child, from
os.wait4) and, in the benchmark, seconds per input MB.

    python bench/hostile.py                 # every case, a table of figures (docs/hostile-inputs.md)
    python bench/hostile.py --fast          # the cases tests/test_hostile.py runs
    python bench/hostile.py -k long_key     # cases whose name contains a string

Exit status 1 if a case misses its bound.

(Here, beside tests/test_hostile.py, which imports it; `python bench/hostile.py` runs its main.)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import rdbwriter as W  # noqa: E402  (tests/rdbwriter.py: byte-exact record builders)

sys.path.insert(0, str(ROOT))
from rdbscan.errors import EXIT_DAMAGED  # noqa: E402  (docs/exit-codes.md)

MAX_RSS_MB = 300  # every case: peak RSS of the loading process
MAX_SECONDS_PER_MB = 2.0  # the benchmark's bound on load time per MB of input (not in tests)


@dataclass
class Case:
    name: str
    make: Callable[[Path], Path]  # writes the input under a directory, returns its path
    exit_code: int = 0
    keys: int | None = None  # rows the load must keep
    check: Callable | None = None  # (duckdb connection) -> None, asserts what is stored
    fast: bool = True  # run by tests/test_hostile.py
    args: list = field(default_factory=list)
    says: str | None = None  # what stderr must contain
    seconds_per_mb: float = MAX_SECONDS_PER_MB


def _keys_dump(path: Path, keys) -> Path:
    """An RDB with db 0 and string keys (name, value) from an iterable, written as it goes."""
    data = [b"REDIS0011", b"\xfe\x00"]
    data += [W.key(0, name, W.string(value)) for name, value in keys]
    body = b"".join(data) + b"\xff"
    path.write_bytes(body + W.CRC.calc(body).to_bytes(8, "little"))
    return path


def _long_keys(n: int, size: int, small: int = 100):
    def make(d: Path) -> Path:
        keys = [((b"k%08d:" % i) + b"x" * (size - 10), b"v") for i in range(n)]
        keys += [(b"small:%d" % i, b"v") for i in range(small)]
        return _keys_dump(d / f"long_{n}x{size}.rdb", keys)

    return make


def _huge_key(size: int, small: int = 100):
    """One key name of `size` bytes, then `small` keys, written as it goes (the CRC too)."""

    def make(d: Path) -> Path:
        path = d / f"huge_key_{size >> 20}MiB.rdb"
        crc = 0
        with open(path, "wb") as f:

            def out(data: bytes) -> None:
                nonlocal crc
                crc = W.CRC.calc(data, crc)
                f.write(data)

            out(b"REDIS0011\xfe\x00\x00" + W.length(size) + b"k%08d:" % 0)
            block = b"x" * (1 << 20)
            left = size - 10
            while left:
                out(block[: min(left, len(block))])
                left -= min(left, len(block))
            out(W.string(b"v"))
            out(b"".join(W.key(0, b"small:%d" % i, W.string(b"v")) for i in range(small)))
            out(b"\xff")
            f.write(crc.to_bytes(8, "little"))
        return path

    return make


def _check_long(n: int, size: int):
    def check(con) -> None:
        from rdbscan.db.rows import KEY_KEEP

        got = con.execute(
            "SELECT count(*) FILTER (WHERE key_truncated), "
            "count(DISTINCT key_hash), max(key_length), max(strlen(key)) "
            "FROM keys"
        ).fetchone()
        assert got == (n, n, size, KEY_KEEP), got

    return check


def _lzf_repeat(head: bytes, block: bytes, times: int, tail: bytes) -> tuple[bytes, int]:
    """(LZF payload, its uncompressed length) of head + block * times + tail, never built
    whole: liblzf compresses `block` once and the result is repeated (back-references are
    relative, so compressed pieces concatenate); head and tail are literal runs."""
    import lzf

    def literal(b: bytes) -> bytes:
        return b"".join(
            bytes([len(b[i : i + 32]) - 1]) + b[i : i + 32] for i in range(0, len(b), 32)
        )

    comp = lzf.compress(block)
    return literal(head) + comp * times + literal(tail), len(head) + len(block) * times + len(tail)


_LP_PAIR = W._lp_entry(b"field:0000007") + W._lp_entry(b"v" * 40)  # 57 bytes
_LP_BLOCK = _LP_PAIR * 18396  # 1 MiB of field/value pairs


def _lzf_value(mib: int, cut: int = 0):
    """100 small keys, then a hash listpack (type 16) of about `mib` MiB, LZF-compressed (a few
    MB of file), then one more key.  With `cut`, the payload loses its last `cut` bytes and its
    STR claims them anyway: it does not decompress to its length (found at the end)."""

    def make(d: Path) -> Path:
        import struct

        times = mib
        total = 6 + len(_LP_BLOCK) * times + 1
        payload, ulen = _lzf_repeat(struct.pack("<IH", total, 65535), _LP_BLOCK, times, b"\xff")
        if cut:
            payload = payload[:-cut]
        value = b"\xc3" + W.length(len(payload)) + W.length(ulen) + payload
        keys = b"".join(W.key(0, b"small:%d" % i, W.string(b"v")) for i in range(100))
        body = b"\xfe\x00" + keys + W.key(16, "big", value) + W.key(0, "after", W.string("v"))
        path = d / f"lzf_listpack_{mib}MiB.rdb"
        path.write_bytes(W.rdb(body, version=11))
        return path

    return make


def _check_big_hash(mib: int):
    def check(con) -> None:
        got = con.execute("SELECT length, max_elem_bytes FROM keys WHERE key = 'big'").fetchone()
        assert got == (len(_LP_BLOCK) // len(_LP_PAIR) * mib, 40), got

    return check


def _plain_value(mib: int):
    """100 small keys, then a plain (uncompressed) hash listpack of `mib` MiB, then one key;
    written as it goes."""

    def make(d: Path) -> Path:
        import struct

        path = d / f"plain_listpack_{mib}MiB.rdb"
        total = 6 + len(_LP_BLOCK) * mib + 1
        crc = 0
        with open(path, "wb") as f:

            def out(data: bytes) -> None:
                nonlocal crc
                crc = W.CRC.calc(data, crc)
                f.write(data)

            out(b"REDIS0011\xfe\x00")
            out(b"".join(W.key(0, b"small:%d" % i, W.string(b"v")) for i in range(100)))
            out(b"\x10" + W.string(b"big") + W.length(total) + struct.pack("<IH", total, 65535))
            for _ in range(mib):
                out(_LP_BLOCK)
            out(b"\xff" + W.key(0, "after", W.string("v")) + b"\xff")
            f.write(crc.to_bytes(8, "little"))
        return path

    return make


def _lzf_key(mib: int):
    """An LZF-compressed key name of about `mib` MiB (a {hashtag}, then a repeated pattern)
    after 100 small keys."""

    def make(d: Path) -> Path:
        payload, ulen = _lzf_repeat(b"name:{tag}:", b"abcdefgh" * (1 << 17), mib, b"")
        name = b"\xc3" + W.length(len(payload)) + W.length(ulen) + payload
        keys = b"".join(W.key(0, b"small:%d" % i, W.string(b"v")) for i in range(100))
        path = d / f"lzf_key_{mib}MiB.rdb"
        path.write_bytes(W.rdb(b"\xfe\x00" + keys + b"\x00" + name + W.string(b"v"), version=11))
        return path

    return make


def _check_lzf_key(mib: int):
    def check(con) -> None:
        from rdbscan.db.rows import KEY_KEEP
        from rdbscan.model.slots import key_slot

        got = con.execute(
            "SELECT key_length, strlen(key), slot FROM keys WHERE key_truncated"
        ).fetchall()
        assert got == [(11 + (mib << 20), KEY_KEEP, key_slot(b"{tag}"))], got

    return check


def _big_stream_node(mib: int):
    """100 small keys, a stream (type 15) whose one node holds an entry of `mib` values of
    1 MiB (its listpack longer than blob_stream.STREAM_NODE_WHOLE_MAX), then one more key."""

    def make(d: Path) -> Path:
        import struct

        fields = [b"f%d" % i for i in range(mib)]
        values = [b"v" * (1 << 20)] * mib
        lp = W.listpack([1, 0, mib, *fields, 0, 2, 0, 0, *values, mib + 3])
        value = W.length(1) + W.string(struct.pack(">QQ", 1, 0)) + W.string(lp)
        value += W.length(1) + W.length(1) + W.length(0) + W.length(0)
        keys = b"".join(W.key(0, b"small:%d" % i, W.string(b"v")) for i in range(100))
        body = b"\xfe\x00" + keys + W.key(15, "events", value) + W.key(0, "after", W.string("v"))
        path = d / f"stream_node_{mib}MiB.rdb"
        path.write_bytes(W.rdb(body, version=11))
        return path

    return make


def _lzf_aux(mib: int):
    """An aux field whose value is an LZF string of about `mib` MiB, then 100 small keys."""

    def make(d: Path) -> Path:
        payload, ulen = _lzf_repeat(b"", b"abcdefgh" * (1 << 17), mib, b"")
        aux = b"\xfa" + W.string(b"big-aux") + b"\xc3" + W.length(len(payload))
        aux += W.length(ulen) + payload
        keys = b"".join(W.key(0, b"small:%d" % i, W.string(b"v")) for i in range(100))
        path = d / f"lzf_aux_{mib}MiB.rdb"
        path.write_bytes(W.rdb(aux + b"\xfe\x00" + keys, version=11))
        return path

    return make


def _gzip_bomb(small: int, zeros: int, values: int = 1):
    """gzip of an RDB: `small` keys, then `values` strings of `zeros` zero bytes in all (gzip:
    ~1000:1), written as it goes; checksum 0 (disabled)."""

    def make(d: Path) -> Path:
        import gzip

        path = d / f"bomb_{zeros >> 20}MiB.rdb.gz"
        mib = gzip.compress(bytes(1 << 20), compresslevel=9)  # concatenated gzip members
        with open(path, "wb") as f:
            head = b"".join(W.key(0, b"small:%d" % i, W.string(b"v")) for i in range(small))
            f.write(gzip.compress(b"REDIS0011\xfe\x00" + head))
            for v in range(values):
                f.write(
                    gzip.compress(b"\x00" + W.string(b"zeros:%d" % v) + W.length(zeros // values))
                )
                for _ in range((zeros // values) >> 20):
                    f.write(mib)
            f.write(gzip.compress(b"\xff" + bytes(8)))
        return path

    return make


def _xz_dict(small: int, dict_mib: int):
    """xz of an RDB of `small` keys whose block header asks for a `dict_mib` MiB dictionary
    (a power of two or 1.5 times one; the data itself needs less, so a decoder that accepts
    the header reads it)."""

    def make(d: Path) -> Path:
        import lzma
        import zlib

        rdb = W.rdb(
            b"\xfe\x00" + b"".join(W.key(0, b"small:%d" % i, W.string(b"v")) for i in range(small))
        )
        xz = bytearray(lzma.compress(rdb, format=lzma.FORMAT_XZ, preset=0))
        size = dict_mib << 20
        shift = size.bit_length() - 2  # size = (2 | odd) << shift
        code = 2 * (shift - 11) + (size >> shift & 1)
        assert (2 | (code & 1)) << (code // 2 + 11) == size
        hdr = 12  # the block header follows the 12-byte stream header
        n = (xz[hdr] + 1) * 4
        assert xz[hdr + 2] == 0x21 and xz[hdr + 3] == 1  # one LZMA2 filter, 1 property byte
        xz[hdr + 4] = code
        xz[hdr + n - 4 : hdr + n] = zlib.crc32(bytes(xz[hdr : hdr + n - 4])).to_bytes(4, "little")
        path = d / f"dict_{dict_mib}MiB.rdb.xz"
        path.write_bytes(bytes(xz))
        return path

    return make


def _records(name: str, record, n: int, tail: Callable[[], bytes] = bytes):
    """An RDB of `n` records record(i) (opcodes the parser accumulates), then 100 keys in db 0
    and tail() (more keys: made when the case runs, not when this module is imported)."""

    def make(d: Path) -> Path:
        body = b"".join(record(i) for i in range(n))
        keys = b"\xfe\x00" + b"".join(W.key(0, b"small:%d" % i, W.string(b"v")) for i in range(100))
        path = d / f"{name}.rdb"
        path.write_bytes(W.rdb(body + keys + tail(), version=11))
        return path

    return make


def _stream_groups(n_groups: int, n_cons: int) -> bytes:
    """A stream key (type 15) with `n_groups` groups of `n_cons` consumers, no pending ids."""
    import struct

    lp = W.listpack(
        [2, 0, 2, "temp", "hum", 0] + [2, 0, 0, 20, 40, 6] + [0, 1, 0, 1, "longer-field", "v", 6]
    )  # two entries, as Redis writes
    out = W.length(1) + W.string(struct.pack(">QQ", 1000, 0)) + W.string(lp)
    out += W.length(2) + W.length(1001) + W.length(0) + W.length(n_groups)
    cons = b"".join(
        W.string(b"c%d" % c) + struct.pack("<q", 5) + W.length(0) for c in range(n_cons)
    )
    out += b"".join(
        W.string(b"g%d" % g) + W.length(1) + W.length(0) + W.length(0) + W.length(n_cons) + cons
        for g in range(n_groups)
    )
    return W.key(15, "stream", out)


CASES = [
    Case("long_key_40MiB", _long_keys(1, 40 << 20), keys=101, check=_check_long(1, 40 << 20)),
    Case("long_keys_50x1MiB", _long_keys(50, 1 << 20), keys=150, check=_check_long(50, 1 << 20)),
    # Redis allows names of 512 MB: such a name streams past (rdb/long_names.py), never held.
    Case(
        "long_key_256MiB",
        _huge_key(256 << 20),
        keys=101,
        check=_check_long(1, 256 << 20),
        fast=False,
    ),
    Case(
        "long_key_512MiB",
        _huge_key(512 << 20),
        keys=101,
        check=_check_long(1, 512 << 20),
        fast=False,
    ),
    Case(
        "long_keys_2000x100KiB",
        _long_keys(2000, 100 << 10),
        keys=2100,
        check=_check_long(2000, 100 << 10),
        fast=False,
    ),
    Case(
        "long_keys_20000x10KiB",
        _long_keys(20000, 10 << 10),
        keys=20100,
        check=_check_long(20000, 10 << 10),
        fast=False,
    ),
    # LZF amplification: blobs longer than blob_stream.WHOLE_MAX (8 MiB) are walked as a stream,
    # LZF ones decoded in pieces (rdb/lzf_stream.py); LZF key names stream into the long name.
    Case(
        "lzf_listpack_128MiB",
        _lzf_value(128),
        keys=102,
        check=_check_big_hash(128),
        seconds_per_mb=10,
    ),
    Case(
        "lzf_listpack_256MiB",
        _lzf_value(256),
        keys=102,
        check=_check_big_hash(256),
        fast=False,
        seconds_per_mb=10,
    ),
    Case(
        "lzf_listpack_1GiB",
        _lzf_value(1023),
        keys=102,
        check=_check_big_hash(1023),
        fast=False,
        seconds_per_mb=10,
    ),
    # 1 GiB claimed, the payload 9 bytes short: found at its end, refused as before (exit 4).
    Case(
        "lzf_listpack_1GiB_cut",
        _lzf_value(1023, cut=9),
        exit_code=EXIT_DAMAGED,
        keys=100,
        says="LZF data does not decompress to 1072689163 bytes",
        seconds_per_mb=10,
    ),
    Case(
        "plain_listpack_256MiB",
        _plain_value(256),
        keys=102,
        check=_check_big_hash(256),
        fast=False,
    ),
    Case("lzf_key_128MiB", _lzf_key(128), keys=101, check=_check_lzf_key(128), seconds_per_mb=10),
    Case(
        "lzf_key_256MiB",
        _lzf_key(256),
        keys=101,
        check=_check_lzf_key(256),
        fast=False,
        seconds_per_mb=10,
    ),
    # Aux fields (and function sources, consumer names) keep their head (parser.HEAD_KEEP).
    Case(
        "lzf_aux_128MiB", _lzf_aux(128), keys=100, says="1 aux values cut short", seconds_per_mb=10
    ),
    Case(
        "lzf_aux_256MiB",
        _lzf_aux(256),
        keys=100,
        says="1 aux values cut short",
        fast=False,
        seconds_per_mb=10,
    ),
    # A stream node longer than blob_stream.STREAM_NODE_WHOLE_MAX (an entry of megabytes) is
    # walked in pieces, not decoded entry by entry, and counted in dumps.cut.
    Case(
        "stream_node_9MiB",
        _big_stream_node(9),
        keys=102,
        says="1 stream nodes over 8 MiB not decoded",
    ),
    # Decompression (source.MAX_RATIO after RATIO_FLOOR, source.XZ_MEMLIMIT): refused with one
    # line, exit 4, the keys read before kept; --allow-ratio reads the bomb.
    Case(
        "gzip_1000x_32MiB",
        _gzip_bomb(100, 32 << 20),
        exit_code=EXIT_DAMAGED,
        keys=100,
        says="expands more than 200:1",
    ),
    Case("gzip_1000x_32MiB_allowed", _gzip_bomb(100, 32 << 20), keys=101, args=["--allow-ratio"]),
    Case(
        "gzip_1000x_4GiB",
        _gzip_bomb(100, 4 << 30, values=8),
        exit_code=EXIT_DAMAGED,
        keys=100,
        says="expands more than 200:1",
        fast=False,
    ),
    Case(
        "xz_dict_384MiB", _xz_dict(100, 384), exit_code=EXIT_DAMAGED, keys=0, says="decoder memory"
    ),
    Case("xz_dict_64MiB", _xz_dict(100, 64), keys=100),
    # Accumulations (parser.MAX_KEPT_*): counted, a bounded sample kept, dumps.cut says the rest.
    # These records (6-17 bytes each) are read one by one in Python: seconds, not memory, grow
    # with them, so the time bound here is looser (10 s/MB).
    Case(
        "slot_info_2M",
        _records(
            "slot_info_2M",
            lambda i: b"\xf4" + W.length(i % 16384) + W.length(3) + W.length(1),
            2_000_000,
        ),
        keys=100,
        says="counted but not kept",
        fast=False,
        seconds_per_mb=10,
    ),
    Case(
        "aux_1M",
        _records("aux_1M", lambda i: b"\xfa" + W.string(b"a%d" % i) + W.string(b"1"), 1_000_000),
        keys=100,
        says="counted but not kept",
        fast=False,
        seconds_per_mb=10,
    ),
    Case(
        "module_aux_1M",
        _records(
            "module_aux_1M", lambda i: b"\xf7" + W.length(12345 << 10) + W.length(0), 1_000_000
        ),
        keys=100,
        says="counted but not kept",
        fast=False,
        seconds_per_mb=10,
    ),
    Case(
        "resizedb_1M_dbs",
        _records(
            "resizedb_1M",
            lambda i: b"\xfe" + W.length(i + 1) + b"\xfb" + W.length(1) + W.length(0),
            1_000_000,
        ),
        keys=100,
        says="counted but not kept",
        fast=False,
        seconds_per_mb=10,
    ),
    Case(
        "functions_500k",
        _records(
            "functions_500k", lambda i: b"\xf5" + W.string(b"#!lua name=l%d\nreturn 1" % i), 500_000
        ),
        keys=100,
        says="counted but not kept",
        fast=False,
        seconds_per_mb=10,
    ),
    Case(
        "stream_1M_groups",
        _records("stream_1M_groups", lambda i: b"", 0, lambda: _stream_groups(1_000_000, 0)),
        keys=101,
        says="counted but not kept",
        fast=False,
        seconds_per_mb=10,
    ),
    Case(
        "stream_1M_consumers",
        _records("stream_1M_consumers", lambda i: b"", 0, lambda: _stream_groups(1, 1_000_000)),
        keys=101,
        says="counted but not kept",
        fast=False,
        seconds_per_mb=10,
    ),
]


# The child runs rdbscan's CLI and, as it exits, writes its peak RSS (VmHWM: of this program
# alone; getrusage and wait4 would also count the pages of the parent it was forked from).
_CHILD = """
import atexit, sys
HWM = sys.argv.pop(1)
def _peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            open(HWM, "w").write(line.split()[1])
atexit.register(_peak)
from rdbscan.cli.main import main
sys.argv[0] = "rdbscan"
main()
"""


@dataclass
class Result:
    name: str
    input_mb: float
    exit_code: int
    seconds: float
    peak_rss_mb: float
    keys: int | None
    stderr: str
    failures: list


def run(case: Case, workdir: Path, env: dict | None = None) -> Result:
    """Generate the case's input, load it in a child process, check its bounds."""
    workdir.mkdir(parents=True, exist_ok=True)
    inp = case.make(workdir)
    out = workdir / f"{case.name}.duckdb"
    if out.exists():
        out.unlink()
    hwm = workdir / "peak_rss"
    cmd = [
        sys.executable,
        "-c",
        _CHILD,
        str(hwm),
        "load",
        str(inp),
        "-o",
        str(out),
        "--quiet",
        *case.args,
    ]
    with open(workdir / "stderr", "w+b") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=err, env={**os.environ, **(env or {})}, cwd=ROOT
        )
        proc.wait()
        seconds = time.perf_counter() - t0
        err.seek(0)
        stderr = err.read()
    rss_mb = int(hwm.read_text()) / 1024 if hwm.exists() else 0.0
    failures = []
    if proc.returncode != case.exit_code:
        failures.append(f"exit code {proc.returncode}, expected {case.exit_code}")
    if case.says is not None and case.says not in stderr.decode(errors="replace"):
        failures.append(f"stderr does not say {case.says!r}")
    if rss_mb > MAX_RSS_MB:
        failures.append(f"peak RSS {rss_mb:.0f} MB > {MAX_RSS_MB} MB")
    keys = None
    if out.exists():
        import duckdb

        con = duckdb.connect(str(out), read_only=True)
        try:
            keys = con.execute("SELECT count(*) FROM keys").fetchone()[0]
            if case.keys is not None and keys != case.keys:
                failures.append(f"{keys} keys kept, expected {case.keys}")
            if case.check is not None:
                try:
                    case.check(con)
                except AssertionError as e:
                    failures.append(f"check: {e}")
        finally:
            con.close()
    elif case.keys:
        failures.append("no database written")
    return Result(
        case.name,
        inp.stat().st_size / 1e6,
        proc.returncode,
        seconds,
        rss_mb,
        keys,
        stderr.decode(errors="replace").strip(),
        failures,
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fast", action="store_true", help="only the cases the test suite runs")
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    ap.add_argument("--dir", help="where inputs and databases go (default: a temporary directory)")
    a = ap.parse_args(argv)
    cases = [c for c in CASES if (c.fast or not a.fast) and a.k in c.name]
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(a.dir or tmp)
        print("| case | input MB | exit | keys | seconds | s/MB | peak RSS MB | result |")
        print("|---|---:|---:|---:|---:|---:|---:|---|")
        for c in cases:
            r = run(c, base / c.name)
            per_mb = r.seconds / max(r.input_mb, 0.001)
            if per_mb > c.seconds_per_mb and r.input_mb >= 1:
                r.failures.append(f"{per_mb:.2f} s/MB > {c.seconds_per_mb}")
            bad += bool(r.failures)
            print(
                f"| {r.name} | {r.input_mb:.1f} | {r.exit_code} | {r.keys} | {r.seconds:.1f} | "
                f"{per_mb:.2f} | {r.peak_rss_mb:.0f} | "
                f"{'ok' if not r.failures else '; '.join(r.failures)} |",
                flush=True,
            )
            for f in (base / c.name).iterdir():
                f.unlink()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
