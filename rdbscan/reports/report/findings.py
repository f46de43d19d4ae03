"""The verdict first: a short list of findings ranked by impact, built from a report dict.

Every number in a finding is read from a section of the report (which got it from SQL); each
section's `findings` chooses which of its facts are worth a line and words them (its
`findings.py`), and this module ranks them.  The same list is the JSON report's `findings[]` and
the first block of the text, markdown and HTML reports (docs/findings.md).

A finding: `id severity section memory_bytes keys message advice`.  Severity is `critical`
(damage, keys that block the server), `warning` (memory or load at stake that a change fixes) or
`info` (worth knowing).  Ranked by severity, then memory at stake, then keys affected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ..document import SEVERITY_MARK, Block
from ..format import fmt_bytes, fmt_int, fmt_key, fmt_keys, fmt_pct
from .section import total_memory
from .sections import SECTIONS

if TYPE_CHECKING:
    from .data import AloneReport, DumpLine, Finding, ReportData, Worst

MAX_FINDINGS = 10
SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}


def build(report: ReportData, limit: int | None = MAX_FINDINGS) -> list[Finding]:
    """The report's findings, most important first (at most `limit`; None: all)."""
    out: list[Finding] = []
    for section in sorted(SECTIONS, key=lambda s: s.finding_order):
        data = report.get(section.name)  # (a section --section left out)
        if data and section.findings is not None:
            out += section.findings(data, report)
    out.sort(key=_rank)
    return out[:limit]


def _rank(f: Finding) -> tuple:
    """Severity, then memory at stake, then keys affected."""
    return (SEVERITY_ORDER[f["severity"]], -(f["memory_bytes"] or 0), -(f["keys"] or 0))


def _concerning(together: list[Finding], own: dict[int, list[Finding]]) -> list[Finding]:
    """The findings of a report over several dumps that some dump's own findings (`own`: dump
    id -> its findings) have, each with `dumps` (the ids of those dumps)."""
    found: list[Finding] = []
    seen: dict[str, int] = {}  # an id may come twice (no-ttl-ephemeral: two families)
    for f in together:
        n = seen[f["id"]] = seen.get(f["id"], -1) + 1
        dumps = [d for d, fs in own.items() if any(x["id"] == f["id"] for x in fs)]
        if len(dumps) == 1:  # one dump's: in its own words (its figures, not the sums)
            mine = [x for x in own[dumps[0]] if x["id"] == f["id"]]
            if n < len(mine):
                found.append({**mine[n], "dumps": dumps})
        elif dumps:  # a finding no dump has alone is an artefact of adding dumps up
            found.append({**f, "dumps": dumps})
    # a finding of a dump alone that the dumps together do not reach (a hot slot of one
    # cluster dump among standalone ones: a smaller share of all keys) stays that dump's
    have = {f["id"] for f in found}
    for d, fs in own.items():
        found += [{**f, "dumps": [d]} for f in fs if f["id"] not in have]
    return found


def _worst(found: list[Finding]) -> Worst | None:
    """A dump's first finding, as its line says it."""
    if not found:
        return None
    return {"id": found[0]["id"], "severity": found[0]["severity"], "message": found[0]["message"]}


def per_dump(report: ReportData, alone: dict[int, dict]) -> tuple[list[Finding], list[DumpLine]]:
    """A report over several dumps: its findings that some dump's report alone has, each with
    `dumps` (the ids of those dumps), and one line per dump (its server, keys, memory, whether
    it was read to the end, its worst finding).  `alone`: dump id -> that dump's report."""
    reports = cast("dict[int, AloneReport]", alone)
    own = {d: build(r, limit=None) for d, r in reports.items()}
    found = _concerning(build(report, limit=None), own)
    found.sort(key=_rank)
    lines: list[DumpLine] = []
    for d, r in reports.items():
        # the report's figures (filters at load time apply: its overview's `always`)
        o, row = r["overview"], r["dump"]
        lines.append(
            {
                "dump_id": d,
                "path": row["path"],
                "server": row["server"],
                "server_version": row["server_version"],
                "keys": o["keys"],
                "memory_bytes": o["memory_bytes"],
                "complete": row["complete"] is not False,
                "findings": len(own[d]),
                "worst": _worst(own[d]),
            }
        )
    return found[:MAX_FINDINGS], lines


# The findings that the sections' `by_dump` answer for every dump from grouped queries: over
# more than MAX_DUMPS_ALONE dumps, the only ones that say which dumps they concern, and those
# of which each dump's worst is.
GROUPED_FINDINGS = tuple(f for s in SECTIONS for f in s.dump_findings)
GROUPED_CHECKS = ", ".join(s.dump_checks for s in SECTIONS if s.dump_checks)  # all of them
# The lines per dump the text shows (the worst first beyond that); the JSON has every dump.
MAX_DUMP_LINES = 20
# Above this many dumps, a report does not build each dump's report alone (it would take as long
# again): the line per dump comes from one grouped query instead (`dump_lines`), and each dump's
# findings, among GROUPED_FINDINGS, from the sections' `by_dump`: only those findings say which
# dumps they concern (docs/report.md, "Several dumps").
MAX_DUMPS_ALONE = 32


def grouped_sections(report: ReportData) -> list:
    """The sections whose findings a report over many dumps gives per dump: those with a
    `by_dump` that the report computed (`--section` leaves some out; the dump itself always)."""
    return [
        s
        for s in SECTIONS
        if s.by_dump is not None and (report.get(s.name) and s.findings is not None)
    ]


def own_findings(
    rows: list[dict], per_section: dict[str, dict[int, dict]], sections: list
) -> dict[int, list[Finding]]:
    """dump id -> its findings among the `dump_findings` of `sections`, most important first,
    worded by each section's `findings` from its object per dump (`per_section`, the sections'
    `by_dump`); `rows`: the `dump_lines` rows (each dump's keys and memory, for shares)."""
    own: dict[int, list[Finding]] = {}
    for r in rows:
        d = r["dump_id"]
        # what a section's findings read of the rest of the report: the dump's memory (shares)
        alone = cast(
            "ReportData", {"overview": {"keys": r["keys"], "memory_bytes": r["memory_bytes"]}}
        )
        fs = []
        for s in sorted(sections, key=lambda s: s.finding_order):
            data = per_section[s.name].get(d)
            if data is not None and s.findings is not None:
                fs += [f for f in s.findings(data, alone) if f["id"] in s.dump_findings]
        own[d] = sorted(fs, key=_rank)
    return own


def grouped(
    report: ReportData, rows: list[dict], per_section: dict[str, dict[int, dict]]
) -> tuple[list[Finding], list[DumpLine]]:
    """A report over more than MAX_DUMPS_ALONE dumps: one line per dump from `rows` (the grouped
    query `dump_lines`: the dumps table and one GROUP BY dump_id over the keys), and each dump's
    own findings among GROUPED_FINDINGS, worded by its sections' `findings` from their objects
    per dump (`per_section`: section name -> dump id -> its object, the sections' `by_dump`):
    those findings say which dumps they concern, the others are over all dumps together,
    without `dumps` (no dump's report is built alone)."""
    sections = [s for s in grouped_sections(report) if s.name in per_section]
    own = own_findings(rows, per_section, sections)
    checks = ", ".join(s.dump_checks for s in sections if s.dump_checks)
    ids = {f for s in sections for f in s.dump_findings}
    together = build(report, limit=None)
    found = _concerning([f for f in together if f["id"] in ids], own) + [
        f for f in together if f["id"] not in ids
    ]
    found.sort(key=_rank)
    lines: list[DumpLine] = [
        {
            "dump_id": r["dump_id"],
            "path": r["path"],
            "server": r["server"],
            "server_version": r["server_version"],
            "keys": r["keys"],
            "memory_bytes": r["memory_bytes"],
            "complete": r["complete"],
            "findings": len(own[r["dump_id"]]),
            "worst": _worst(own[r["dump_id"]]),
            "worst_of": checks,
        }
        for r in rows
    ]
    return found[:MAX_FINDINGS], lines


def _shown_lines(per: list[DumpLine]) -> tuple[list[DumpLine], int]:
    """The lines per dump the text shows: all up to MAX_DUMP_LINES, else the dumps with the
    worst findings, then the most memory (in dump order), and how many are left out."""
    if len(per) <= MAX_DUMP_LINES:
        return per, 0

    def rank(d: DumpLine) -> tuple:
        w = d["worst"]
        return (SEVERITY_ORDER[w["severity"]] if w else 3, -(d["memory_bytes"] or 0))

    keep = {d["dump_id"] for d in sorted(per, key=rank)[:MAX_DUMP_LINES]}
    return [d for d in per if d["dump_id"] in keep], len(per) - MAX_DUMP_LINES


def dump_label(d: DumpLine) -> str:
    """`#2 redis 7.4.1`: a dump as findings over several dumps name it."""
    return f"#{d['dump_id']} {d['server'] or '?'} {d['server_version'] or ''}".strip()


def _which_dumps(f: Finding, dumps: list[DumpLine]) -> str:
    """` [all 4 dumps]`, ` [#1 redis 7.0.15, #4 valkey 9.1.2]`, ` [5 of 9 dumps]`."""
    ids = f.get("dumps")  # a report over several dumps only
    if not ids or len(dumps) < 2:
        return ""
    if len(ids) == len(dumps):
        return f" [all {len(dumps)} dumps]"
    if len(ids) > 3:
        return f" [{len(ids)} of {len(dumps)} dumps]"
    by_id = {d["dump_id"]: d for d in dumps}
    return " [" + ", ".join(dump_label(by_id[i]) for i in ids) + "]"


def _dump_line(d: DumpLine) -> tuple[str, str]:
    """One dump of a report over several: its label, then keys, memory, read to the end or
    not, its worst finding."""
    w = d["worst"]
    state = "complete" if d["complete"] else "NOT read to the end"
    if w:
        worst = f"{SEVERITY_MARK[w['severity']]} {w['message']}"
    elif d.get("worst_of") and d["worst_of"] != GROUPED_CHECKS:  # --section: some checks
        worst = f"nothing to report in {d['worst_of']}"
    else:
        worst = "nothing to report"
    name = "/".join(str(d["path"] or "?").split("/")[-2:])
    return (
        dump_label(d),
        f"{name}: {fmt_keys(d['keys'])}, {fmt_bytes(d['memory_bytes'])}, {state}; {worst}",
    )


def _where_memory_goes(report: ReportData) -> list[tuple[str, str]]:
    """Where the memory is, before what to do about it: the families holding the most (up to
    three, with their shares, until they hold 80 %) and the largest key (from the key-families
    section; nothing when `--section` leaves it out)."""
    patterns = report.get("patterns")  # --section may leave it out
    items = [i for i in (patterns["items"] if patterns else []) if i.get("keys")]
    total = total_memory(report)
    if not items or not total:
        return []
    top: list[str] = []
    held = 0.0
    for i in items:
        if i["pattern"] == "(other)" or len(top) == 3 or held >= 0.8:
            break
        top.append(f"{fmt_key(i['pattern'], 40)} {fmt_pct(i['memory_share'])}")
        held += i["memory_share"] or 0
    # (one line at 80 columns: the number of families is the Key families section's)
    out = [("Memory in", ", ".join(top))]
    largest = max(items, key=lambda i: i.get("largest_memory_bytes") or 0)
    if largest.get("largest_key") is not None:
        out.append(
            (
                "Largest key",
                f"{fmt_key(largest['largest_key'], 60)}: "
                f"{fmt_bytes(largest['largest_memory_bytes'])} "
                f"({fmt_pct((largest['largest_memory_bytes'] or 0) / total)})",
            )
        )
    return out if top else out[1:]


def _nothing_found(report: ReportData) -> str:
    """The verdict without findings: which checks ran (`--section` may leave most out)."""
    checks = [s.name for s in SECTIONS if s.findings is not None and s.name != "overview"]
    ran = [name for name in checks if report.get(name)]
    if len(ran) == len(checks):
        return "Nothing to report: no check found a problem."
    if not ran:
        return "No check ran beyond the dump itself (--section): run without it for a verdict."
    return (
        f"Nothing to report in the sections computed ({', '.join(ran)}); the other checks did "
        f"not run (--section)."
    )


def layout(report: ReportData) -> list[Block]:
    """One summary line, then the findings (docs/findings.md): the verdict before the sections."""
    o = report["overview"]
    dumps = o.get("dumps") or []  # (--section left the overview out: its `always` only)
    per = report.get("dumps") or []  # a report over several dumps only
    if max(len(dumps), len(per)) > 1:  # several servers: a line each below, not one for all
        head = f"{max(len(dumps), len(per))} dumps, "
    else:
        head = f"{o.get('server') or '?'} {o.get('server_version') or ''}".strip() + ", "
    head += f"{fmt_int(o['keys'])} keys, {fmt_bytes(o['memory_bytes'])} (estimate)"
    found = report["findings"]
    blocks = [Block("section", f"Findings: {head}")]
    shown, more = _shown_lines(per)
    facts = _where_memory_goes(report) + [_dump_line(d) for d in shown]
    if more:
        facts.append(("...", f"{fmt_int(more)} more dumps (all in the JSON: dumps[])"))
    if facts:
        blocks.append(Block("kv", items=facts))
    if per and per[0].get("worst_of"):
        rest = [s.name for s in SECTIONS if s.findings is not None and s.by_dump is None]
        blocks.append(
            Block(
                "note",
                f"Over more than {MAX_DUMPS_ALONE} dumps no dump's report is built alone: each "
                f"dump's worst finding is that of the checks that group by dump "
                f"({per[0]['worst_of']}), from queries over all dumps grouped by dump, in the "
                f"words of its report alone; "
                + (
                    f"the other checks ({', '.join(rest)}) are judged over all dumps together; "
                    if rest
                    else ""
                )
                + "--dump-id N reports one dump alone.",
            )
        )
    if not found:
        return blocks + [Block("note", _nothing_found(report))]
    return blocks + [
        Block("finding", items=[f["severity"], f["message"] + _which_dumps(f, per), f["advice"]])
        for f in found
    ]
