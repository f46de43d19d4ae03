#!/usr/bin/env python3
"""`rdbscan migrate`'s load rules against real loads: each case asks rdbscan whether a target
loads a dump, then starts that server (../shared/tools/servers, Debian's packages in a chroot),
puts the dump in its directory, runs `DEBUG RELOAD NOSAVE` and reads the reply and the server
log.  Prints a Markdown table (docs/migrate.md "Checked against real loads").

Usage (as root, after `servers install trixie` and `servers install sid`):
    python bench/migrate_real_loads.py [--servers PATH] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rdbscan.migrate.run import migrate  # noqa: E402

# server NAME of the tool -> the --to it is (Debian packages: system jemalloc)
SERVERS = {
    "redis-8.0": "redis-8.0/16",
    "valkey-8.1": "valkey-8.1/16",
    "redis-8.6": "redis-8.6/16p",
    "valkey-9.1": "valkey-9.1/16p",
}


def cases(corpus: Path) -> list[tuple[str, str, str, list[str]]]:
    """(dump, label, server NAME, CONFIG SET pairs run before the load)."""
    sample = ROOT / "sample_dumps"
    fx = ROOT / "tests" / "fixtures"
    hfe = str(sample / "redis-7.4.1.rdb")
    v9 = str(fx / "valkey-9.1.2" / "small" / "dump.rdb")
    graph = str(fx / "live" / "redis-8.2-falkordb" / "dump.rdb")
    r86 = str(corpus / "redis-8.6.3" / "seed1" / "dump.rdb")
    r74 = str(corpus / "redis-7.4.1" / "seed1" / "dump.rdb")
    v80 = str(sample / "valkey-8.0.1.rdb")
    relaxed = ["rdb-version-check", "relaxed"]
    return [
        (hfe, "Redis 7.4.1, field TTLs", "valkey-8.1", []),
        (hfe, "Redis 7.4.1, field TTLs", "valkey-8.1", relaxed),
        (hfe, "Redis 7.4.1, field TTLs", "valkey-9.1", []),
        (hfe, "Redis 7.4.1, field TTLs", "valkey-9.1", relaxed),
        (hfe, "Redis 7.4.1, field TTLs", "redis-8.0", []),
        (v9, "Valkey 9.1.2 VALKEY080, HASH_2", "redis-8.6", []),
        (v9, "Valkey 9.1.2 VALKEY080, HASH_2", "redis-8.0", []),
        (v9, "Valkey 9.1.2 VALKEY080, HASH_2", "valkey-8.1", []),
        (v9, "Valkey 9.1.2 VALKEY080, HASH_2", "valkey-8.1", relaxed),
        (graph, "Redis 8.2, FalkorDB graphdata + vectorset", "redis-8.6", []),
        (graph, "Redis 8.2, FalkorDB graphdata + vectorset", "redis-8.0", []),
        (r86, "Redis 8.6.3 REDIS0013", "redis-8.0", []),
        (r86, "Redis 8.6.3 REDIS0013", "valkey-9.1", relaxed),
        (r74, "Redis 7.4.1 seed1", "redis-8.6", []),
        (v80, "Valkey 8.0.1 REDIS0011", "redis-8.0", []),
        (v80, "Valkey 8.0.1 REDIS0011", "valkey-9.1", []),
    ]


def real_load(tool: str, name: str, port: int, dump: str, config: list[str]) -> tuple[bool, str]:
    """(loaded, the server's reply or log line saying why not)."""
    out = subprocess.run(
        [tool, "start", name, str(port), "--enable-debug-command", "local"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rundir = Path(next(x.split(":", 1)[1].strip() for x in out.splitlines() if "run dir" in x))
    try:
        shutil.copy(dump, rundir / "dump.rdb")
        log = rundir / "server.log"
        before = log.read_text(errors="replace").count("\n")
        if config:
            subprocess.run(
                [tool, "cli", name, str(port), "CONFIG", "SET", *config],
                check=True,
                capture_output=True,
            )
        reply = subprocess.run(
            [tool, "cli", name, str(port), "DEBUG", "RELOAD", "NOSAVE"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        time.sleep(0.3)
        lines = log.read_text(errors="replace").splitlines()[before:]
        why = [x.split(" # ", 1)[1] for x in lines if " # " in x]
        if reply == "OK":
            return True, "OK"
        return False, (why[0] if why else reply or "(no reply: the server exited)")
    finally:
        subprocess.run([tool, "stop", name, str(port)], capture_output=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--servers", default="/work/shared/tools/servers")
    ap.add_argument("--corpus", default="/work/shared/dumps")
    args = ap.parse_args()
    print(
        "| dump | target | rdb-version-check | rdbscan says | blockers rdbscan names | "
        "the real load | agree |"
    )
    print("|---|---|---|---|---|---|---|")
    port = 27200
    for dump, label, name, config in cases(Path(args.corpus)):
        if not Path(dump).exists():
            continue
        m = migrate([dump], [SERVERS[name]], relaxed=bool(config))
        t = m.report["dumps"][0]["targets"][0]
        blockers = [f for f in t["findings"] if f["blocker"]]
        says = not blockers
        port += 1
        loaded, why = real_load(args.servers, name, port, dump, config)
        # the server stops at the first refusal it meets: its line is one rdbscan names
        agree = says == loaded and (loaded or any(why[:40] in f["what"] for f in blockers))
        names = "; ".join(
            f"{f['subject']} ({f['keys']} keys)" if f["keys"] else f["subject"] for f in blockers
        )
        print(
            f"| {label} | {name} | {'relaxed' if config else 'strict (default)'} | "
            f"{'loads' if says else 'refuses'} | {names or '-'} | {why} | "
            f"{'yes' if agree else 'NO'} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
