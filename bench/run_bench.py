#!/usr/bin/env python3
"""The speed benchmark (issue 5): rdbscan against redis-check-rdb on the same dumps, same run.

    python bench/run_bench.py                      # make the dumps if missing, time everything
    python bench/run_bench.py --dumps mixed        # one dump
    python bench/run_bench.py --make-20m           # also a 20 M-key DEBUG POPULATE dump
    python bench/run_bench.py --dumps biglist      # one 4 GB list: bounded memory
    python bench/run_bench.py --dumps bighash      # one hash of 50 M fields: bounded memory
    python bench/run_bench.py --dumps ratelimit    # 2 M keys by IPv4 address: one family
    python bench/run_bench.py --dumps onekey       # 2 M keys, each a family of its own
    python bench/run_bench.py --only DUMP.rdb      # time an existing dump file
    python bench/run_bench.py --profile DUMP.rdb   # rdbscan's load under cProfile

1. Makes the benchmark dumps with a real redis-server (Debian's 7.0: `apt-get install
   redis-server`) in --dir (default /tmp/rdbscan-bench), unless they exist:
   `mixed` from bench/populate_mixed.py --seed 42 (1.0 M keys, ~538 MB) and `pop5m` from
   `DEBUG POPULATE 5000000` (5 M small strings, ~133 MB); `--make-20m` adds `pop20m`;
   `--dumps ratelimit` makes 2 M rate-limit keys by IPv4 address (one family, `ratelimit:{ip}`),
   `--dumps onekey` 2 M keys that are each a family of their own (`user:name_123`).
2. Times `redis-check-rdb DUMP` (C, parses every value: the machine's yardstick),
   `rdbscan load -q DUMP -o X.duckdb` and `rdbscan report DUMP` (parse + load + every report
   section) under /usr/bin/time -v, --runs times each (median), and prints wall time, CPU time
   and the cores kept busy (CPU / wall: how the ratio would move on more cores), keys/s, MB/s,
   peak RSS and the ratio to redis-check-rdb.  A markdown copy of the table goes to
   bench/out/bench-<date>.md.  rdbscan's modules are byte-compiled first (as a wheel's install
   does), so that no timed run compiles them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PORT = 16399
DUMPS = {
    "mixed": "populate_mixed.py --seed 42",
    "pop5m": "DEBUG POPULATE 5000000",
    "pop20m": "DEBUG POPULATE 20000000",
    "biglist": "one list of 4,000,000 x 1 KiB elements (4 GB), rdbcompression no",
    "bighash": "one hash of 50,000,000 fields (hashtable encoding)",
    "ratelimit": "2,000,000 keys ratelimit:10.<a>.<b>.<c>, one family ratelimit:{ip}, half with a TTL",
    "onekey": "2,000,000 keys user:name_<n>, each a family of its own, half with a TTL",
}
# The bounded-memory case: one 4 GB list, pushed by a Lua loop in 1,000 steps.
BIGLIST_LUA = (
    "for i = 1, 4000 do local t = {} for j = 1, 1000 do t[j] = string.format("
    "'%010d', i * 1000 + j) .. string.rep('v', 1014) end "
    "redis.call('RPUSH', KEYS[1], unpack(t)) end return redis.call('LLEN', KEYS[1])"
)
# The other bounded-memory case: one hash of 50 M fields, set by a Lua loop in 50,000 steps.
BIGHASH_LUA = (
    "for i = 0, 49999 do local t = {} for j = 1, 1000 do local n = i * 1000 + j "
    "t[2 * j - 1] = string.format('f%09d', n) t[2 * j] = tostring(n % 1000) end "
    "redis.call('HSET', KEYS[1], unpack(t)) end return redis.call('HLEN', KEYS[1])"
)


# --- making the dumps -----------------------------------------------------------------------


def _cli(*args: str) -> str:
    return subprocess.run(
        ["redis-cli", "-p", str(PORT), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def _wait_port(port: int, timeout: float = 30) -> None:
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit(f"redis-server did not start on port {port}")


# 2 M small strings, every other one with a TTL, set by a Lua loop in 2,000 steps: rate limits
# by IPv4 address (`ratelimit`: one family, `ratelimit:{ip}`), or user names (`onekey`:
# `user:name_123`, each key a family of its own: no placeholder takes such a name).
_SMALL_KEYS_LUA = (
    "for i = 0, 1999 do for j = 0, 999 do local n = i * 1000 + j "
    "local k = KEY "
    "if n % 2 == 0 then redis.call('SET', k, n % 100, 'EX', 3600 + n % 7200) "
    "else redis.call('SET', k, n % 100) end end end return redis.call('DBSIZE')"
)
RATELIMIT_LUA = _SMALL_KEYS_LUA.replace(
    "KEY",
    "string.format('ratelimit:10.%d.%d.%d', math.floor(n / 65536), "
    "math.floor(n / 256) % 256, n % 256)",
)
ONEKEY_LUA = _SMALL_KEYS_LUA.replace("KEY", "string.format('user:name_%d', n)")


def make_dumps(names: list[str], out: Path) -> None:
    todo = [n for n in names if not (out / f"{n}.rdb").exists()]
    if not todo:
        return
    if not shutil.which("redis-server"):
        sys.exit("redis-server not found: apt-get install redis-server (Debian's 7.0)")
    out.mkdir(parents=True, exist_ok=True)
    server = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(PORT),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(out),
            "--dbfilename",
            "bench-tmp.rdb",
            "--enable-debug-command",
            "local",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_port(PORT)
        for name in todo:
            t0 = time.time()
            _cli("FLUSHALL")
            if name == "mixed":
                subprocess.run(
                    [
                        sys.executable,
                        str(HERE / "populate_mixed.py"),
                        "--port",
                        str(PORT),
                        "--seed",
                        "42",
                    ],
                    check=True,
                )
            elif name == "biglist":
                _cli("EVAL", BIGLIST_LUA, "1", "biglist")
            elif name == "bighash":
                _cli("EVAL", BIGHASH_LUA, "1", "bighash")
            elif name == "ratelimit":
                _cli("EVAL", RATELIMIT_LUA, "0")
            elif name == "onekey":
                _cli("EVAL", ONEKEY_LUA, "0")
            else:
                _cli("DEBUG", "POPULATE", DUMPS[name].split()[-1])
            _cli("CONFIG", "SET", "rdbcompression", "yes" if name != "biglist" else "no")
            _cli("SAVE")
            os.replace(out / "bench-tmp.rdb", out / f"{name}.rdb")
            print(
                f"made {out / name}.rdb ({DUMPS[name]}, {time.time() - t0:.0f} s)", file=sys.stderr
            )
    finally:
        server.terminate()
        server.wait()


# --- timing ---------------------------------------------------------------------------------


def timed(cmd: list[str]) -> tuple[float, int, float]:
    """(wall seconds, peak RSS bytes, CPU seconds: user + system) of one command, from
    /usr/bin/time -v."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        p = subprocess.run(
            ["/usr/bin/time", "-v", "-o", tf.name, *cmd],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        text = tf.read()
    if p.returncode not in (0, 3, 5):
        sys.exit(f"{' '.join(cmd)} failed with exit code {p.returncode}: {p.stderr[-2000:]}")
    h, m, s = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", text).groups()
    wall = int(h or 0) * 3600 + int(m) * 60 + float(s)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) * 1024
    cpu = sum(
        float(re.search(rf"{kind} time \(seconds\): ([\d.]+)", text).group(1))
        for kind in ("User", "System")
    )
    return wall, rss, cpu


def measure(cmd_for_run, runs: int) -> dict:
    results = [timed(cmd_for_run(i)) for i in range(runs)]
    return {
        "wall": statistics.median(r[0] for r in results),
        "runs": [r[0] for r in results],
        "rss": max(r[1] for r in results),
        "cpu": statistics.median(r[2] for r in results),
    }


def rdbscan_cmd() -> list[str]:
    exe = shutil.which("rdbscan")
    return [exe] if exe else [sys.executable, "-m", "rdbscan"]


def count_keys(db: str) -> int:
    import duckdb

    con = duckdb.connect(db, read_only=True)
    try:
        return con.execute("SELECT count(*) FROM keys").fetchone()[0]
    finally:
        con.close()


def bench_dump(dump: Path, runs: int, work: Path) -> list[dict]:
    size = dump.stat().st_size
    rows = []

    def db(i: int) -> str:
        p = work / f"run{i}.duckdb"
        for f in (p, Path(str(p) + ".wal")):
            if f.exists():
                f.unlink()
        return str(p)

    base = measure(lambda i: ["redis-check-rdb", str(dump)], runs)
    load = measure(lambda i: [*rdbscan_cmd(), "load", "-q", str(dump), "-o", db(i)], runs)
    keys = count_keys(str(work / f"run{runs - 1}.duckdb"))  # what the last load wrote
    tools = [
        ("redis-check-rdb", base),
        ("rdbscan load", load),
        (
            "rdbscan report",
            measure(lambda i: [*rdbscan_cmd(), "report", str(dump), "-o", db(i)], runs),
        ),
    ]
    for name, m in tools:
        rows.append(
            {
                "dump": dump.stem,
                "size": size,
                "keys": keys,
                "tool": name,
                **m,
                "ratio": m["wall"] / base["wall"],
            }
        )
    return rows


def table(rows: list[dict]) -> str:
    # CPU: user + system of every thread (median); cores: CPU / wall, how many cores the
    # command kept busy (redis-check-rdb one, rdbscan's load and report up to two and more)
    out = [
        "| dump | size | keys | command | wall (median) | CPU | cores | keys/s | MB/s | "
        "peak RSS | x redis-check-rdb |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['dump']} | {r['size'] / 1e6:.0f} MB | {r['keys']:,} | {r['tool']} | "
            f"{r['wall']:.2f} s | {r['cpu']:.2f} s | {r['cpu'] / r['wall']:.2f} | "
            f"{r['keys'] / r['wall']:,.0f} | "
            f"{r['size'] / 1e6 / r['wall']:.1f} | {r['rss'] / 1e6:.0f} MB | "
            f"{r['ratio']:.2f} |"
        )
    return "\n".join(out)


def machine() -> str:
    cpu = "unknown CPU"
    try:
        cpu = re.search(r"model name\s*:\s*(.*)", Path("/proc/cpuinfo").read_text()).group(1)
    except (OSError, AttributeError):
        pass
    from rdbscan import __version__
    from rdbscan.rdb import backend as speedups

    return (
        f"{dt.date.today().isoformat()}, {os.cpu_count()} cores ({cpu}), Python "
        f"{platform.python_version()}, rdbscan {__version__} ({speedups.describe()}, "
        "byte-compiled)"
    )


def byte_compile() -> None:
    """Byte-compile rdbscan's modules first, as pip does when it installs a wheel: from a
    checkout (an editable install) under PYTHONDONTWRITEBYTECODE, each timed command would
    otherwise compile them all as it starts (about 0.2 s of every run, docs/benchmarks.md)."""
    import compileall

    import rdbscan

    if not compileall.compile_dir(str(Path(rdbscan.__file__).parent), quiet=1):
        sys.exit("rdbscan's modules do not byte-compile")


def profile(dump: str) -> None:
    """cProfile of `load()` on DUMP, as `rdbscan load` runs it (the compiled record loop and
    the row batches on this thread; DuckDB's INSERT on the writer thread shows as waits)."""
    import cProfile
    import pstats
    import tempfile

    from rdbscan.db.load import load

    with tempfile.TemporaryDirectory() as tmp:
        pr = cProfile.Profile()
        pr.enable()
        load([dump], os.path.join(tmp, "profile.duckdb"))
        pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(15)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/tmp/rdbscan-bench", help="where the dumps are made")
    ap.add_argument(
        "--dumps",
        default="mixed,pop5m",
        help="comma-separated: mixed, pop5m, pop20m, biglist, bighash, ratelimit, onekey",
    )
    ap.add_argument("--make-20m", action="store_true", help="add pop20m (20 M keys, ~0.5 GB)")
    ap.add_argument("--only", metavar="DUMP", help="time this dump file instead")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--profile", metavar="DUMP", help="profile rdbscan's load of DUMP")
    a = ap.parse_args()
    if a.profile:
        profile(a.profile)
        return
    if a.only:
        files = [Path(a.only)]
    else:
        names = [n for n in a.dumps.split(",") if n] + (["pop20m"] if a.make_20m else [])
        make_dumps(names, Path(a.dir))
        files = [Path(a.dir) / f"{n}.rdb" for n in names]
    byte_compile()
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for f in files:
            rows += bench_dump(f, a.runs, Path(work))
            print(table(rows[-3:]), file=sys.stderr)
    text = f"{machine()}; median of {a.runs} runs\n\n{table(rows)}\n"
    print(text)
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / f"bench-{dt.date.today().isoformat()}.md").write_text(text)


if __name__ == "__main__":
    main()
