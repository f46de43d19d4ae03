"""The overview's blocks: server, snapshot, keys and memory, dumps, databases, types."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ....document import Block, advice, table
from ....format import (
    fmt_bytes,
    fmt_int,
    fmt_key,
    fmt_pct,
    fmt_time,
)

if TYPE_CHECKING:
    from ...data import ReportData
    from .build import OverviewData


def layout(o: OverviewData, report: ReportData) -> list[Block]:
    dumps = o["dumps"]
    blocks = [Block("section", "Overview"), Block("kv", items=_facts(o, dumps))]
    if len(dumps) > 1:
        blocks.append(_dumps_table(dumps))
    blocks.append(_databases_table(o))
    blocks.append(_types_table(o))
    blocks += [Block("note", n) for n in o["notes"]]
    return blocks + advice(o)


def _facts(o: OverviewData, dumps: list) -> list[tuple[str, str]]:
    """Server, snapshot, keys, memory, the dump's state, the parse: one line each."""
    speed = ""
    if o["parse_seconds"]:
        speed = (
            f"{o['parse_seconds']:.2f} s ({fmt_bytes(o['bytes_per_second'])}/s, "
            f"{fmt_int(o['keys_per_second'])} keys/s)"
        )
    kv = [
        (
            "Server",
            f"{o['server'] or '?'} {o['server_version'] or '(version not recorded)'}",
        ),
        ("RDB version", str(o["rdb_version"])),
        (
            "Snapshot",
            f"{fmt_time(o['snapshot_time'] or o['snapshot_ms'])} ({o['snapshot_source'] or '?'})",
        ),
        ("Keys", f"{fmt_int(o['keys'])} ({fmt_int(o['keys_with_ttl'])} with TTL)"),
        ("Memory (estimate)", fmt_bytes(o["memory_bytes"])),
        ("Memory model", (o["memory_model"] or "-").removeprefix("memory model: ")),
        ("used-mem at save", fmt_bytes(o["used_mem"]) if o["used_mem"] else "-"),
        (
            "Gap to used-mem",
            "-"
            if o["used_mem_gap"] is None
            else f"{fmt_bytes(o['used_mem_gap'])} not explained by the keys (estimate with keyspace "
            f"overhead {fmt_bytes(o['memory_total_bytes'])}; the rest is startup memory, "
            f"buffers, fragmentation)",
        ),
        ("Input", o["input"] or "-"),
        ("Checksum", o["checksum"] or "-"),
        (
            "Complete",
            (
                (
                    "NO: rdbscan is older than the dump (the file is not damaged); figures are "
                    "partial: upgrade rdbscan"
                    if o["stopped_by"] == "rdbscan"
                    else "NO: the dump is damaged, figures are partial"
                )
                if not o["complete"]
                else f"read to the end, but {fmt_int(o['skipped_keys'])} damaged keys left out "
                f"(--skip-bad)"
                if o["skipped_keys"]
                else "yes"
            ),
        ),
        (
            "After the RDB",
            f"{fmt_int(o['tail_bytes'])} bytes not read" if o["tail_bytes"] else "-",
        ),
        ("Parse", speed or "-"),
    ]
    if o["filter"]:  # dumps.filter: the figures cover the keys the filter kept
        f = o["filter"]
        kv.append(("Filter", f"{f['filter']} ({fmt_int(f.get('filtered_keys'))} keys left out)"))
    if len(dumps) > 1:  # each dump's server, not the newest one's for all (the Dumps table)
        kv[0] = ("Servers", ", ".join(_servers(dumps)))
        rdbs = sorted({d["rdb_version"] for d in dumps}, key=lambda v: (v is None, v or 0))
        kv[1] = ("RDB versions", ", ".join(map(str, rdbs)))
        kv[2] = ("Snapshots", _snapshots(dumps))
        kv[5] = ("Memory models", _models(dumps) or "-")
        kv.insert(0, ("Dumps", str(len(dumps))))
    return kv


def _servers(dumps: list[dict]) -> list[str]:
    """`redis 6.2.16, redis 7.4.1, valkey 8.0.1`: each server once, versions in their order."""

    def order(d: dict) -> tuple:
        digits = re.findall(r"\d+", d["server_version"] or "")
        return (d["server"] or "?", [int(x) for x in digits])

    names = (
        f"{d['server'] or '?'} {d['server_version'] or ''}".strip()
        for d in sorted(dumps, key=order)
    )
    return list(dict.fromkeys(names))


def _snapshots(dumps: list[dict]) -> str:
    """The first and the last snapshot of the dumps, and what each time rests on (each dump's
    is in the Dumps table)."""
    times = sorted(d["snapshot_ms"] for d in dumps if d["snapshot_ms"] is not None)
    if not times:
        return "-"
    span = fmt_time(times[0])
    if times[-1] != times[0]:
        span += f" to {fmt_time(times[-1])}"
    sources = sorted({d["snapshot_source"] or "?" for d in dumps})
    return f"{span} ({', '.join(sources)})"


def _models(dumps: list[dict]) -> str:
    """The dumps' memory models, those with the same allocator rounding said once:
    `redis 6.2 and valkey 8.0 profiles, 8-byte allocator quantum (...)`."""
    groups: dict[str, list[str]] = {}
    for m in dict.fromkeys(d["memory_model"] for d in dumps if d.get("memory_model")):
        head, sep, rounding = m.removeprefix("memory model: ").partition(" profile, ")
        if not sep or " (" in head:  # a --target or derived note: the model as it is
            groups.setdefault(m.removeprefix("memory model: "), [])
        else:
            groups.setdefault(rounding, []).append(head)
    return "; ".join(
        f"{', '.join(heads[:-1])} and {heads[-1]} profiles, {r}"
        if len(heads) > 1
        else (f"{heads[0]} profile, {r}" if heads else r)
        for r, heads in groups.items()
    )


def _dumps_table(dumps: list) -> Block:
    return table(
        "Dumps",
        ["id", "path", "server", "rdb", "snapshot", "keys", "checksum", "complete"],
        [
            [
                str(d["dump_id"]),
                fmt_key(d["path"], 50),
                f"{d['server']} {d['server_version']}",
                str(d["rdb_version"]),
                fmt_time(d["snapshot_time"]),
                fmt_int(d["keys"]),
                d["checksum"] or "not reached",
                "yes" if d["complete"] else "no",
            ]
            for d in dumps
        ],
        (5,),
    )


def _databases_table(o: OverviewData) -> Block:
    rest = o["dbs_not_listed"]
    more = (
        [
            [
                f"({fmt_int(rest['databases'])} more)",
                fmt_int(rest["keys"]),
                fmt_int(rest["keys_with_ttl"]),
                fmt_bytes(rest["memory_bytes"]),
            ]
        ]
        if rest["databases"]
        else []
    )
    return table(
        "Keys per database" + (" (most keys)" if more else ""),
        ["db", "keys", "with TTL", "memory"],
        [
            [
                str(d["db"]),
                fmt_int(d["keys"]),
                fmt_int(d["keys_with_ttl"]),
                fmt_bytes(d["memory_bytes"]),
            ]
            for d in o["dbs"]
        ]
        + more,
        (0, 1, 2, 3),
    )


def _types_table(o: OverviewData) -> Block:
    return table(
        "Keys and memory by type and encoding",
        ["type", "encoding", "keys", "memory", "share"],
        [
            [
                t["type"],
                t["encoding"],
                fmt_int(t["keys"]),
                fmt_bytes(t["memory_bytes"]),
                fmt_pct(t["memory_share"]),
            ]
            for t in o["types"]
        ],
        (2, 3, 4),
    )
