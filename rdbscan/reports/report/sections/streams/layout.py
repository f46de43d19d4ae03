"""The streams section's blocks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....document import Block, advice
from ....format import (
    fmt_bytes,
    fmt_db_key,
    fmt_duration_ms,
    fmt_int,
    fmt_list,
    fmt_time,
)
from ...section import key_table

if TYPE_CHECKING:
    from ...data import ReportData
    from .build import StreamsData


def layout(s: StreamsData, report: ReportData) -> list[Block]:
    blocks = [Block("section", "Streams and hash field TTLs")]
    if not s["items"] and not s["hash_field_ttl"]:
        return blocks + [Block("note", "No streams and no hashes with field TTLs.")]
    if s["items"]:
        blocks.append(
            key_table(
                report,
                "Largest streams",
                ["stream", "entries", "memory", "groups", "consumers", "pending", "groups detail"],
                s["items"],
                lambda r: [
                    fmt_db_key(r),
                    fmt_int(r["length"]),
                    fmt_bytes(r["memory_bytes"]),
                    fmt_int(r["groups"]),
                    fmt_int(r["consumers"]),
                    fmt_int(r["pending"]),
                    fmt_list(r["group_details"][:3], 45),
                ],
                (1, 2, 3, 4, 5),
            )
        )
    else:
        blocks.append(Block("note", "No streams."))
    if s["hash_field_ttl"]:
        blocks.append(
            key_table(
                report,
                "Hashes with field TTLs",
                [
                    "key",
                    "encoding",
                    "fields",
                    "with TTL",
                    "first field expires",
                    "after snapshot",
                    "memory",
                ],
                s["hash_field_ttl"],
                lambda r: [
                    fmt_db_key(r),
                    r["encoding"],
                    fmt_int(r["length"]),
                    fmt_int(r["fields_with_ttl"]),
                    fmt_time(r["min_field_expire_ms"]),
                    fmt_duration_ms(r["min_field_ttl_ms"]),
                    fmt_bytes(r["memory_bytes"]),
                ],
                (2, 3, 5, 6),
            )
        )
    else:
        blocks.append(Block("note", "No hashes with field TTLs."))
    return blocks + advice(s)
