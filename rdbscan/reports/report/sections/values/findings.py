"""The Value design findings: keys split into shards that are big once joined, collections with big
elements, compressible strings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....format import fmt_bytes, fmt_int, fmt_key
from ...section import examples, finding

if TYPE_CHECKING:
    from ...data import Finding, ReportData
    from .build import ValuesData


def findings(v: ValuesData, report: ReportData) -> list[Finding]:
    """Split keys that are big once joined, collections with big elements, compressible strings."""
    out = []
    sk, be, cp = v["split_keys"], v["big_elements"], v["compressible"]
    if sk["big_when_joined"]:
        first = next((r for r in sk["items"] if r["big_when_joined"]), None)
        out.append(
            finding(
                "split-big-keys",
                "warning",
                "values",
                f"{fmt_int(sk['big_when_joined'])} key{'s' if sk['big_when_joined'] != 1 else ''} "
                "split into #N shards "
                f"{'are big keys' if sk['big_when_joined'] != 1 else 'is a big key'} once joined"
                + (
                    f" (e.g. {fmt_key(first['logical_key'], 40)}: {fmt_int(first['shards'])} shards, "
                    f"{fmt_int(first['length'])} elements)"
                    if first
                    else ""
                ),
                "reading every shard costs what one big key would; see Value design",
                memory=sk["big_when_joined_memory_bytes"],
                keys=sk["big_when_joined"],
            )
        )
    if be["keys"]:
        out.append(
            finding(
                "big-elements",
                "info",
                "values",
                f"{fmt_int(be['keys'])} collection{'s hold' if be['keys'] != 1 else ' holds'} an "
                f"element over {fmt_bytes(be['threshold_bytes'])}: "
                f"{examples(x['key'] for x in be['items'])}",
                "keep large payloads in their own string keys; see Value design",
                memory=be["memory_bytes"],
                keys=be["keys"],
            )
        )
    if cp["savings_bytes"]:
        out.append(
            finding(
                "compressible-strings",
                "info",
                "values",
                f"Compressing the {fmt_int(cp['keys'])} strings over {fmt_bytes(cp['min_bytes'])} in "
                f"the client would save about {fmt_bytes(cp['savings_bytes'])} (LZF ratio "
                f"{cp['ratio']:g} in the RDB; most in {fmt_key(cp['families'][0]['pattern'], 40)})",
                "compress large values in the client (zstd, gzip); see Value design",
                memory=cp["savings_bytes"],
                keys=cp["keys"],
            )
        )
    return out
