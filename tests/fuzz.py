#!/usr/bin/env python3
"""Fuzz the RDB parser: every input must either parse or raise an RDBError -- never another
exception, never a hang, never a huge allocation.

Two engines:

* the default: a fast random-mutation loop over small fixture dumps (byte flips, random
  bytes, inserted and deleted runs, truncations, length fields inflated to 32/64-bit giants,
  special bytes such as the LZF marker 0xC3, splices of two seeds).  Every input is parsed
  twice as often with its size known as without (the stdin / compressed path), and a few
  percent go through `open_source` after compression or replication framing, some through
  the loader's row path (key rows, Arrow batches) and 0.2% through the whole `load()` into a
  scratch DuckDB database.
* `--atheris`: coverage-guided fuzzing with atheris (if installed) over the same target.

Usage:
    python bench/fuzz.py --iterations 1000000 [--seed 1] [--jobs 2] [--crashes DIR]
    python bench/fuzz.py --atheris -- -runs=1000000

A crash (an unexpected exception, a hang over --timeout seconds, a MemoryError under the
--max-memory address-space limit) is written to the crashes directory with its traceback
and counted; the exit status is 1 if any crash was found.

(Here, beside tests/test_fuzz.py, which imports it; `python bench/fuzz.py` runs its main.)
"""

from __future__ import annotations

import argparse
import gzip
import io
import multiprocessing as mp
import os
import random
import resource
import signal
import struct
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rdbscan.db.rows import RowBuilder  # noqa: E402
from rdbscan.db.store import KEYS_SCHEMA, arrow_batch  # noqa: E402
from rdbscan.rdb.errors import RDBError  # noqa: E402
from rdbscan.rdb.parser import DumpInfo, parse  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
import rdbwriter as W  # noqa: E402  (tests/rdbwriter.py: byte-exact record builders)

FIXTURES = ROOT / "tests" / "fixtures"
MAX_SEED_BYTES = 6000
SPECIAL = [
    0x00,
    0x01,
    0x3F,
    0x40,
    0x7F,
    0x80,
    0x81,
    0xC0,
    0xC1,
    0xC2,
    0xC3,
    0xC4,
    0xF0,
    0xF4,
    0xF5,
    0xF7,
    0xFA,
    0xFB,
    0xFC,
    0xFD,
    0xFE,
    0xFF,
]


def seed_files(max_bytes: int = MAX_SEED_BYTES) -> list[Path]:
    """Small RDB files from tests/fixtures (public third-party fixtures, a few KB each)."""
    out = []
    for p in sorted(FIXTURES.rglob("*.rdb")):
        try:
            if 9 < p.stat().st_size <= max_bytes:
                out.append(p)
        except OSError:
            pass
    return out


def load_seeds(max_bytes: int = MAX_SEED_BYTES) -> list[bytes]:
    seeds = []
    for p in seed_files(max_bytes):
        data = p.read_bytes()
        if data[:5] in (b"REDIS", b"VALKE"):
            seeds.append(data)
    return seeds


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


# -- mutations -------------------------------------------------------------------------------
def inflate_length(rng: random.Random, b: bytearray) -> None:
    """Replace a byte that may be a length prefix with a 32- or 64-bit giant length."""
    if len(b) < 12:
        return
    i = rng.randrange(9, len(b))
    choice = rng.random()
    if choice < 0.4:
        n = rng.choice([0xFFFFFFFF, 0x7FFFFFFF, 1 << 30, (1 << 30) + 1, len(b) * 2, len(b) + 1])
        rep = b"\x80" + struct.pack(">I", n)
    elif choice < 0.8:
        n = rng.choice([(1 << 64) - 1, 1 << 63, 1 << 40, 1 << 32, len(b) + rng.randrange(1, 99)])
        rep = b"\x81" + struct.pack(">Q", n)
    else:  # a 14-bit length near its maximum
        rep = bytes([0x7F, rng.randrange(256)])
    if rng.random() < 0.5:
        b[i : i + 1] = rep
    else:
        b[i : i + len(rep)] = rep


def mutate(rng: random.Random, data: bytes, seeds: list[bytes]) -> bytes:
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 5, 8))):
        op = rng.random()
        n = len(b)
        if n == 0:
            b.extend(rng.randbytes(4))
            continue
        if op < 0.25:  # flip a bit
            i = rng.randrange(n)
            b[i] ^= 1 << rng.randrange(8)
        elif op < 0.40:  # random byte
            b[rng.randrange(n)] = rng.randrange(256)
        elif op < 0.50:  # special byte
            b[rng.randrange(n)] = rng.choice(SPECIAL)
        elif op < 0.62:  # length-field inflation
            inflate_length(rng, b)
        elif op < 0.70:  # truncate
            del b[rng.randrange(n) :]
        elif op < 0.78:  # delete a run
            i = rng.randrange(n)
            del b[i : i + rng.randrange(1, 16)]
        elif op < 0.85:  # insert random bytes
            i = rng.randrange(n)
            b[i:i] = rng.randbytes(rng.randrange(1, 16))
        elif op < 0.90:  # duplicate a run
            i = rng.randrange(n)
            j = min(n, i + rng.randrange(1, 64))
            b[j:j] = b[i:j]
        elif op < 0.95:  # splice with another seed
            other = rng.choice(seeds)
            i = rng.randrange(n)
            j = rng.randrange(len(other))
            b[i:] = other[j : j + rng.randrange(1, 512)]
        else:  # a 16/32/64-bit little-endian field set to an extreme
            i = rng.randrange(n)
            width = rng.choice((2, 4, 8))
            val = rng.choice((0, 1, (1 << (8 * width)) - 1, 1 << (8 * width - 1)))
            b[i : i + width] = val.to_bytes(width, "little")
    return bytes(b)


# -- grammar: random but well-framed values with hostile numbers inside ----------------------
def _num(rng: random.Random) -> int:
    """A number for a count, a flag or a listpack integer: mostly small, sometimes hostile."""
    r = rng.random()
    if r < 0.6:
        return rng.randrange(0, 8)
    if r < 0.75:
        return -rng.randrange(1, 9)
    if r < 0.85:
        return rng.choice(
            [127, 128, 4095, -4096, 32767, -32768, 1 << 31, -(1 << 31), (1 << 63) - 1, -(1 << 63)]
        )
    return rng.randrange(-1000, 1000)


def _elem(rng: random.Random):
    r = rng.random()
    if r < 0.5:
        return _num(rng)
    if r < 0.95:
        return rng.randbytes(rng.randrange(0, 20))
    return rng.randbytes(rng.randrange(60, 300))


def _listpack(rng: random.Random, entries=None) -> bytes:
    if entries is None:
        entries = [_elem(rng) for _ in range(rng.randrange(0, 12))]
    count = len(entries) if rng.random() < 0.8 else rng.randrange(0, 70000)
    return W.listpack(entries, count=min(count, 65535))


def _stream_lp(rng: random.Random) -> bytes:
    nf = rng.randrange(0, 4)
    fields = [rng.randbytes(rng.randrange(1, 6)) for _ in range(nf)]
    v = [rng.randrange(0, 5), rng.randrange(0, 3), nf, *fields, 0]
    for _ in range(rng.randrange(0, 5)):
        flags = rng.choice([0, 1, 2, 3, _num(rng)])
        entry = [flags, rng.randrange(0, 1000), rng.randrange(0, 5)]
        if flags & 2:
            entry += [_elem(rng) for _ in range(nf)]
        else:
            k = rng.randrange(0, 3)
            entry += [k] + [_elem(rng) for _ in range(2 * k)]
        entry.append(len(entry) - 1)
        v += entry
    if rng.random() < 0.5:  # poke one number
        i = rng.randrange(len(v))
        v[i] = _num(rng)
    return W.listpack(v)


def _ziplist(rng: random.Random) -> bytes:
    body = bytearray()
    n = rng.randrange(0, 8)
    prev = 0
    for _ in range(n):
        e = _elem(rng)
        if isinstance(e, int) and -32768 <= e <= 32767:
            enc = b"\xc0" + struct.pack("<h", e)
        elif isinstance(e, int):
            enc = b"\xe0" + struct.pack("<q", max(min(e, (1 << 63) - 1), -(1 << 63)))
        else:
            e = e[:63]
            enc = bytes([len(e)]) + e
        entry = (bytes([prev]) if prev < 254 else b"\xfe" + struct.pack("<I", prev)) + enc
        body += entry
        prev = len(entry)
    if rng.random() < 0.3 and body:
        body[rng.randrange(len(body))] = rng.randrange(256)
    total = 10 + len(body) + 1
    return (
        struct.pack("<IIH", total, 10, n if rng.random() < 0.8 else _num(rng) & 0xFFFF)
        + bytes(body)
        + b"\xff"
    )


def _intset(rng: random.Random) -> bytes:
    width = rng.choice([2, 4, 8, 2, 4, 8, 3, 0])
    n = rng.randrange(0, 6)
    body = rng.randbytes(n * max(width, 1))
    count = n if rng.random() < 0.8 else rng.randrange(0, 1 << 32)
    return struct.pack("<II", width, count) + body


def _blob(rng: random.Random, data: bytes) -> bytes:
    if rng.random() < 0.2 and data:
        lz = bytearray(W.lzf_string(data))
        if rng.random() < 0.3:
            lz[rng.randrange(1, len(lz))] = rng.randrange(256)
        return bytes(lz)
    return W.string(data)


def _len(rng: random.Random, n: int) -> bytes:
    if rng.random() < 0.05:
        n = rng.choice([1 << 32, (1 << 64) - 1, 1 << 40, n + 1, max(n - 1, 0)])
    return W.length(n)


def _value(rng: random.Random, t: int) -> bytes:
    if t == 0:
        return _blob(rng, rng.randbytes(rng.randrange(0, 40)))
    if t in (1, 2):
        n = rng.randrange(0, 5)
        return _len(rng, n) + b"".join(W.string(rng.randbytes(3)) for _ in range(n))
    if t in (3, 5):
        n = rng.randrange(0, 4)
        out = _len(rng, n)
        for _ in range(n):
            out += W.string(rng.randbytes(3))
            if t == 5:
                out += struct.pack("<d", rng.random())
            else:  # a text score: length byte (253-255 are nan/inf/-inf) and text
                out += bytes([rng.choice([3, 253, 254, 255])]) + b"1.5"
        return out
    if t == 4:
        n = rng.randrange(0, 4)
        return _len(rng, n) + b"".join(W.string(b"f") + W.string(b"v") for _ in range(n))
    if t == 7:
        out = W.length(rng.randrange(0, 1 << 40))
        for _ in range(rng.randrange(0, 4)):
            op = rng.choice([1, 2, 3, 4, 5, 9])
            out += W.length(op)
            out += {
                1: W.length(5),
                2: W.length(7),
                3: b"\0" * 4,
                4: b"\0" * 8,
                5: W.string(b"abc"),
                9: b"",
            }[op]
        return out + W.length(0)
    if t in (10, 12, 13):
        return _blob(rng, _ziplist(rng))
    if t == 11:
        return _blob(rng, _intset(rng))
    if t == 9:
        return _blob(rng, bytes([rng.randrange(3)]) + rng.randbytes(rng.randrange(0, 12)) + b"\xff")
    if t in (14, 18):
        n = rng.randrange(0, 3)
        out = _len(rng, n)
        for _ in range(n):
            if t == 18:
                c = rng.choice([1, 2, 2, _num(rng) & 0xFF])
                out += W.length(c)
                out += _blob(rng, _listpack(rng) if c == 2 else rng.randbytes(5))
            else:
                out += _blob(rng, _ziplist(rng))
        return out
    if t in (16, 17, 20):
        return _blob(rng, _listpack(rng))
    if t in (23, 25):
        ents = []
        for _ in range(rng.randrange(0, 4)):
            ents += [_elem(rng), _elem(rng), _num(rng)]
        pre = struct.pack("<q", _num(rng)) if t == 25 else b""
        return pre + _blob(rng, _listpack(rng, ents))
    if t in (22, 24):
        pre = struct.pack("<q", _num(rng)) if t == 24 else b""
        n = rng.randrange(0, 3)
        return (
            pre
            + _len(rng, n)
            + b"".join(
                W.length(rng.randrange(0, 99)) + W.string(b"f") + W.string(b"v") for _ in range(n)
            )
        )
    # streams 15, 19, 21, 26
    n = rng.randrange(0, 3)
    out = _len(rng, n)
    for _ in range(n):
        key = rng.randbytes(16 if rng.random() < 0.9 else rng.randrange(0, 20))
        out += _blob(rng, key) + _blob(rng, _stream_lp(rng))
    out += W.length(rng.randrange(0, 10)) + W.length(5) + W.length(1)
    if t >= 19:
        out += W.length(0) + W.length(1) + W.length(0) + W.length(0) + W.length(3)
    groups = rng.randrange(0, 3)
    out += _len(rng, groups)
    for _ in range(groups):
        out += W.string(b"g") + W.length(1) + W.length(2)
        if t >= 19:
            out += W.length(rng.choice([0, 5, (1 << 64) - 1]))
        pel = rng.randrange(0, 3)
        out += _len(rng, pel) + (rng.randbytes(16) + b"\0" * 8 + W.length(1)) * pel
        cons = rng.randrange(0, 3)
        out += _len(rng, cons)
        for _ in range(cons):
            out += W.string(b"c") + b"\0" * 8 + (b"\0" * 8 if t >= 21 else b"")
            cp = rng.randrange(0, 2)
            out += _len(rng, cp) + rng.randbytes(16) * cp
    if t == 26:
        out += W.length(1) + W.length(2) + _len(rng, 0) + W.length(0) + W.length(0)
    return out


TYPES = [0, 1, 2, 3, 4, 5, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26]


def generate(rng: random.Random) -> bytes:
    """A whole RDB of random keys of every type (valid framing, hostile content)."""
    version = rng.choice([9, 10, 11, 12, 13])
    body = b"\xfe\x00" + b"\xfb" + W.length(3) + W.length(1)
    for i in range(rng.randrange(1, 5)):
        t = rng.choice(TYPES)
        if t == 26 and version < 13:
            version = 13
        if rng.random() < 0.2:
            body += b"\xfc" + struct.pack("<q", _num(rng))
        body += W.key(t, f"k{i}", _value(rng, t))
    data = W.rdb(body, version=version, valkey=False)
    if rng.random() < 0.3:
        data = mutate(rng, data, [data])
    return data


# -- targets ---------------------------------------------------------------------------------
LOAD_SHARE = 0.002  # inputs that also go through load() into DuckDB (slow: ~30 ms each)


def run_parse(data: bytes, known_size: bool, skip_bad: bool = False, rows: bool = False) -> None:
    """Parse data; with rows, as the loader does: key rows built by RowBuilder, strings and
    blobs through the compiled record loop (when built) and whole batches taken."""
    info = DumpInfo()
    size = len(data) if known_size else None
    builder = RowBuilder(1, info, batch_rows=7) if rows else None
    for rec in parse(
        io.BytesIO(data), info, size=size, skip_bad=skip_bad, sink=builder.sink if builder else None
    ):
        if builder is not None:
            if rec is not None:
                builder.add(rec)
            if builder.full:
                arrow_batch(KEYS_SCHEMA, builder.take_keys())  # what the loader hands DuckDB
                builder.reset()
    if builder is not None:
        arrow_batch(KEYS_SCHEMA, builder.take_keys())


def run_source(data: bytes, how: int) -> None:
    """Through open_source on 'stdin': gzip-compressed (0), behind a replication header (1, 2),
    compressed with any codec and then damaged (3), behind a mangled header (4)."""
    from rdbscan.rdb import source as src_mod

    rng = random.Random(zlib_crc(data) ^ how)
    if how == 0:
        payload = gzip.compress(data, compresslevel=1)
    elif how == 1:
        payload = b"$EOF:" + b"a" * 40 + b"\r\n" + data + b"a" * 40
    elif how == 2:
        payload = b"$%d\r\n" % len(data) + data
    elif how == 3:
        payload = bytearray(_compress(rng.randrange(5), data))
        for _ in range(rng.randrange(0, 4)):
            if payload:
                payload[rng.randrange(len(payload))] = rng.randrange(256)
        if rng.random() < 0.3:
            del payload[rng.randrange(len(payload) + 1) :]
        payload = bytes(payload)
    else:
        head = rng.choice(
            [b"+FULLRESYNC abc 0\r\n", b"", b"\n" * rng.randrange(1, 9), b"+CONTINUE\r\n\n"]
        )
        frame = rng.choice(
            [
                b"$EOF:" + rng.randbytes(rng.randrange(30, 45)) + b"\r\n",
                b"$%d\r\n" % rng.choice([0, 1, len(data), len(data) + 5, 1 << 62]),
                b"$" + rng.randbytes(rng.randrange(0, 6)) + b"\r\n",
                b"*1\r\n$4\r\nPING\r\n",
                b"PK\x03\x04",
                b"",
            ]
        )
        payload = head + frame + data
    old = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(payload))
    try:
        try:
            src = src_mod.open_source("-")
        except src_mod.SourceError:
            return
        try:
            info = DumpInfo()
            for _ in parse(src.stream, info, size=src.size, initial=src.initial):
                pass
        finally:
            src.close()
    finally:
        sys.stdin = old


def zlib_crc(data: bytes) -> int:
    import zlib

    return zlib.crc32(data)


def _compress(codec: int, data: bytes) -> bytes:
    import bz2
    import lzma

    if codec == 0:
        return gzip.compress(data, compresslevel=1)
    if codec == 1:
        return bz2.compress(data, 1)
    if codec == 2:
        return lzma.compress(data, preset=0)
    if codec == 3:
        import zstandard

        return zstandard.ZstdCompressor(level=1).compress(data)
    import lz4.frame

    return lz4.frame.compress(data)


def run_load(data: bytes) -> None:
    """The whole loader into a scratch DuckDB: it must return a result (error and all), never
    raise; so RDBError here is a crash too."""
    from rdbscan.db.load import load

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "dump.rdb")
        with open(path, "wb") as f:
            f.write(data)
        try:
            load([path], os.path.join(tmp, "x.duckdb"))
        except RDBError as e:
            raise RuntimeError(f"load() raised {e!r}") from e


def one(data: bytes, mode: int) -> None:
    if mode == 14:
        run_load(data)
    elif mode < 6:
        run_parse(data, known_size=True, skip_bad=mode == 5, rows=mode in (1, 3))
    elif mode < 9:
        run_parse(data, known_size=False, skip_bad=mode == 8, rows=mode == 7)
    else:
        run_source(data, mode - 9)


def worker(args) -> tuple[int, int, int, list[str]]:
    wid, iterations, seed, crash_dir, timeout, max_memory = args
    if max_memory:
        resource.setrlimit(resource.RLIMIT_AS, (max_memory, max_memory))
    signal.signal(signal.SIGALRM, _alarm)
    rng = random.Random(seed * 1000 + wid)
    seeds = load_seeds()
    crashes = []
    ok = errors = 0
    for i in range(iterations):
        if rng.random() < 0.35:
            data = generate(rng)
        else:
            data = mutate(rng, rng.choice(seeds), seeds)
        mode = rng.randrange(14) if rng.random() >= LOAD_SHARE else 14
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            one(data, mode)
            ok += 1
        except RDBError:
            errors += 1
        except BaseException as e:  # noqa: BLE001 - everything else is a crash
            if isinstance(e, KeyboardInterrupt):
                raise
            kind = "hang" if isinstance(e, Hang) else type(e).__name__
            tb = traceback.format_exc()
            sig = kind + ":" + (tb.strip().splitlines()[-3].strip() if tb else "")
            name = f"crash-{wid}-{i}-{kind}"
            if crash_dir:
                Path(crash_dir).mkdir(parents=True, exist_ok=True)
                (Path(crash_dir) / (name + ".bin")).write_bytes(data)
                (Path(crash_dir) / (name + ".txt")).write_text(f"mode {mode}\n{tb}")
            crashes.append(f"{name} mode={mode} {sig}")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    return ok, errors, iterations, crashes


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--iterations", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=5.0, help="seconds per input before a hang")
    ap.add_argument(
        "--max-memory",
        type=int,
        default=3 << 30,
        help="address-space limit per worker in bytes (0: none)",
    )
    ap.add_argument(
        "--crashes", default=os.path.join(tempfile.gettempdir(), "rdbscan-fuzz-crashes")
    )
    ap.add_argument(
        "--corpus",
        default=os.path.join(tempfile.gettempdir(), "rdbscan-fuzz-corpus"),
        help="atheris corpus directory (seeded from the fixtures)",
    )
    ap.add_argument("--atheris", action="store_true", help="coverage-guided (atheris) mode")
    ap.add_argument("rest", nargs="*", help="arguments for atheris/libFuzzer after --")
    args = ap.parse_args(argv)
    if args.atheris:
        return run_atheris(args)
    seeds = load_seeds()
    print(f"{len(seeds)} seed files, {args.iterations} inputs, {args.jobs} jobs", flush=True)
    started = time.time()
    per = [
        args.iterations // args.jobs + (1 if w < args.iterations % args.jobs else 0)
        for w in range(args.jobs)
    ]
    tasks = []
    chunk = 50_000
    wid = 0
    for w in range(args.jobs):
        left = per[w]
        while left > 0:
            n = min(chunk, left)
            tasks.append((wid, n, args.seed, args.crashes, args.timeout, args.max_memory))
            wid += 1
            left -= n
    total_ok = total_err = total = 0
    crashes: list[str] = []
    with mp.Pool(args.jobs) as pool:
        for ok, err, n, cr in pool.imap_unordered(worker, tasks):
            total_ok += ok
            total_err += err
            total += n
            crashes += cr
            rate = total / max(time.time() - started, 1e-9)
            print(
                f"{total} inputs: {total_ok} parsed, {total_err} RDBError, {len(crashes)} "
                f"crashes ({rate:,.0f}/s)",
                flush=True,
            )
            for c in cr:
                print("  CRASH", c, flush=True)
    print(
        f"done: {total} inputs in {time.time() - started:.0f} s, {len(crashes)} crashes", flush=True
    )
    return 1 if crashes else 0


def run_atheris(args) -> int:
    try:
        import atheris
    except ImportError:
        print("atheris is not installed; use the default engine", file=sys.stderr)
        return 2
    atheris.instrument_all()  # rdbscan is already imported: instrument what is loaded

    def target(data: bytes) -> None:
        if len(data) < 2:
            return
        mode = data[0] % 9
        try:
            one(data[1:], mode)
        except RDBError:
            pass

    corpus = Path(args.corpus)
    if not corpus.exists():
        corpus.mkdir(parents=True)
        for i, s in enumerate(load_seeds()):
            (corpus / f"seed{i}").write_bytes(b"\x00" + s)
    atheris.Setup(
        [sys.argv[0], str(corpus), "-rss_limit_mb=3072", "-timeout=5", "-max_len=8192"] + args.rest,
        target,
    )
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
