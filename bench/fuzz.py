#!/usr/bin/env python3
"""Fuzz the RDB parser: every input must either parse or raise an RDBError -- never another
exception, never a hang, never a huge allocation.

Two engines:

* the default: a fast random-mutation loop over small fixture dumps (byte flips, random
  bytes, inserted and deleted runs, truncations, length fields inflated to 32/64-bit giants,
  special bytes such as the LZF marker 0xC3, splices of two seeds).  Every input is parsed
  twice as often with its size known as without (the stdin / compressed path), and a few
  percent go through `open_source` after compression or replication framing.
* `--atheris`: coverage-guided fuzzing with atheris (if installed) over the same target.

Usage:
    python bench/fuzz.py --iterations 1000000 [--seed 1] [--jobs 2] [--crashes DIR]
    python bench/fuzz.py --atheris -- -runs=1000000

A crash (an unexpected exception, a hang over --timeout seconds, a MemoryError under the
--max-memory address-space limit) is written to the crashes directory with its traceback
and counted; the exit status is 1 if any crash was found.
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

from rdbscan.errors import RDBError  # noqa: E402
from rdbscan.parser import DumpInfo, parse  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
MAX_SEED_BYTES = 6000
SPECIAL = [0x00, 0x01, 0x3F, 0x40, 0x7F, 0x80, 0x81, 0xC0, 0xC1, 0xC2, 0xC3, 0xC4, 0xF0, 0xF4,
           0xF5, 0xF7, 0xFA, 0xFB, 0xFC, 0xFD, 0xFE, 0xFF]


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
        b[i:i + 1] = rep
    else:
        b[i:i + len(rep)] = rep


def mutate(rng: random.Random, data: bytes, seeds: list[bytes]) -> bytes:
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 5, 8))):
        op = rng.random()
        n = len(b)
        if n == 0:
            b.extend(rng.randbytes(4))
            continue
        if op < 0.25:                       # flip a bit
            i = rng.randrange(n)
            b[i] ^= 1 << rng.randrange(8)
        elif op < 0.40:                     # random byte
            b[rng.randrange(n)] = rng.randrange(256)
        elif op < 0.50:                     # special byte
            b[rng.randrange(n)] = rng.choice(SPECIAL)
        elif op < 0.62:                     # length-field inflation
            inflate_length(rng, b)
        elif op < 0.70:                     # truncate
            del b[rng.randrange(n):]
        elif op < 0.78:                     # delete a run
            i = rng.randrange(n)
            del b[i:i + rng.randrange(1, 16)]
        elif op < 0.85:                     # insert random bytes
            i = rng.randrange(n)
            b[i:i] = rng.randbytes(rng.randrange(1, 16))
        elif op < 0.90:                     # duplicate a run
            i = rng.randrange(n)
            j = min(n, i + rng.randrange(1, 64))
            b[j:j] = b[i:j]
        elif op < 0.95:                     # splice with another seed
            other = rng.choice(seeds)
            i = rng.randrange(n)
            j = rng.randrange(len(other))
            b[i:] = other[j:j + rng.randrange(1, 512)]
        else:                               # a 16/32/64-bit little-endian field set to an extreme
            i = rng.randrange(n)
            width = rng.choice((2, 4, 8))
            val = rng.choice((0, 1, (1 << (8 * width)) - 1, 1 << (8 * width - 1)))
            b[i:i + width] = val.to_bytes(width, "little")
    return bytes(b)


# -- targets ---------------------------------------------------------------------------------
def run_parse(data: bytes, known_size: bool, skip_bad: bool = False) -> None:
    info = DumpInfo()
    size = len(data) if known_size else None
    for _ in parse(io.BytesIO(data), info, size=size, skip_bad=skip_bad):
        pass


def run_source(data: bytes, how: int) -> None:
    """Through open_source: gzip-compressed, or behind a replication header, on 'stdin'."""
    from rdbscan import source as src_mod
    if how == 0:
        payload = gzip.compress(data, compresslevel=1)
    elif how == 1:
        payload = b"$EOF:" + b"a" * 40 + b"\r\n" + data + b"a" * 40
    else:
        payload = b"$%d\r\n" % len(data) + data
    old = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(payload))
    try:
        src = src_mod.open_source("-")
        try:
            info = DumpInfo()
            for _ in parse(src.stream, info, size=src.size, initial=src.initial):
                pass
        finally:
            src.close()
    finally:
        sys.stdin = old


def one(data: bytes, mode: int) -> None:
    if mode < 6:
        run_parse(data, known_size=True, skip_bad=mode == 5)
    elif mode < 9:
        run_parse(data, known_size=False, skip_bad=mode == 8)
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
        data = mutate(rng, rng.choice(seeds), seeds)
        mode = rng.randrange(12)
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
    ap.add_argument("--max-memory", type=int, default=3 << 30,
                    help="address-space limit per worker in bytes (0: none)")
    ap.add_argument("--crashes", default=os.path.join(tempfile.gettempdir(), "rdbscan-fuzz-crashes"))
    ap.add_argument("--corpus", default=os.path.join(tempfile.gettempdir(), "rdbscan-fuzz-corpus"),
                    help="atheris corpus directory (seeded from the fixtures)")
    ap.add_argument("--atheris", action="store_true", help="coverage-guided (atheris) mode")
    ap.add_argument("rest", nargs="*", help="arguments for atheris/libFuzzer after --")
    args = ap.parse_args(argv)
    if args.atheris:
        return run_atheris(args)
    seeds = load_seeds()
    print(f"{len(seeds)} seed files, {args.iterations} inputs, {args.jobs} jobs", flush=True)
    started = time.time()
    per = [args.iterations // args.jobs + (1 if w < args.iterations % args.jobs else 0)
           for w in range(args.jobs)]
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
            print(f"{total} inputs: {total_ok} parsed, {total_err} RDBError, {len(crashes)} "
                  f"crashes ({rate:,.0f}/s)", flush=True)
            for c in cr:
                print("  CRASH", c, flush=True)
    print(f"done: {total} inputs in {time.time() - started:.0f} s, {len(crashes)} crashes",
          flush=True)
    return 1 if crashes else 0


def run_atheris(args) -> int:
    try:
        import atheris
    except ImportError:
        print("atheris is not installed; use the default engine", file=sys.stderr)
        return 2
    atheris.instrument_all()   # rdbscan is already imported: instrument what is loaded

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
    atheris.Setup([sys.argv[0], str(corpus), "-rss_limit_mb=3072", "-timeout=5",
                   "-max_len=8192"] + args.rest,
                  target)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
