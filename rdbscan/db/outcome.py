"""From load results to what the user is told and the exit code: one function for `load` and
`report` (which also uses it for the dumps of a database it reports on), so both say the same
about the same dump and exit with the same code.

Exit codes are rdbscan/errors.py's (docs/exit-codes.md): 6 when an input could not be opened,
4 when a dump could not be read to its end, 5 when one was read to its end but is damaged (CRC64
mismatch, keys left out by --skip-bad, or values a Redis server refuses to load), 2 when a dump was refused (already loaded), else 0;
with several dumps errors.worst_exit picks one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import (
    EXIT_CHECKSUM,
    EXIT_DAMAGED,
    EXIT_INPUT,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_USAGE,
    worst_exit,
)


@dataclass
class Outcome:
    errors: list[str] = field(default_factory=list)  # one line each, for stderr
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # per-dump summary lines (not --quiet)
    code: int = EXIT_OK

    def raise_code(self, code: int) -> None:
        self.code = worst_exit(self.code, code)

    def lines(self, quiet: bool = False) -> list[str]:
        out = [f"rdbscan: warning: {w}" for w in self.warnings]
        out += [f"rdbscan: error: {e}" for e in self.errors]
        return out + ([] if quiet else self.notes)


def result_exit_code(r) -> int:
    """The exit code one load result calls for: an input that could not be opened, a dump not
    read to its end, a checksum mismatch, skipped keys or values a server refuses, or
    success."""
    if r.refused:
        return EXIT_USAGE
    if r.error:
        if r.error_kind == "unsupported":  # rdbscan's limit, not damage to the file
            return EXIT_PARTIAL
        return EXIT_INPUT if r.error_kind == "io" else EXIT_DAMAGED
    if r.checksum == "mismatch" or r.skipped_keys or getattr(r, "invalid_keys", 0):
        return EXIT_CHECKSUM
    return EXIT_OK


CUT_NAMES = {
    "aux": "aux fields",
    "aux_value": "aux values cut short",
    "functions": "function libraries",
    "module_aux": "module aux records",
    "slot_info": "slot-info records",
    "databases": "databases' RESIZEDB sizes",
    "stream_groups": "stream consumer groups",
    "stream_consumers": "stream consumers",
    "hash_templates": "hash templates (their hashes cannot be read)",
    "stream_nodes": "stream nodes over 8 MiB not decoded (their longest entry stands for their "
    "longest element)",
}


def cut_warning(path: str, cut: dict) -> str:
    """One line on what the parser counted but did not keep (parser.MAX_KEPT_*)."""
    parts = ", ".join(f"{n:,} {CUT_NAMES.get(k, k)}" for k, n in sorted(cut.items()))
    line = f"{path}: beyond rdbscan's bounds, counted but not kept: {parts}"
    if "stream_groups" in cut or "stream_consumers" in cut:
        line += " (those streams' memory counts the kept ones only: a lower bound)"
    return line + " (docs/hostile-inputs.md)"


def invalid_warning(path: str, n: int, first: str | None) -> str:
    """One line on the keys whose value a Redis server would refuse to load (keys.invalid)."""
    line = (
        f"{path}: {n:,} {'key holds a value' if n == 1 else 'keys hold values'} a Redis "
        f"server refuses to load (kept, flagged in keys.invalid)"
    )
    return line + (f"; first: {first}" if first else "")


def newer_warning(path: str, magic: str | None, known: int) -> str:
    """One line on a dump newer than rdbscan (read on: forward compatibility)."""
    kind = "VALKEY" if (magic or "").startswith("VALKEY") else "RDB"
    newest = f"VALKEY{known:03d}" if kind == "VALKEY" else f"REDIS{known:04d}"
    return (
        f"{path}: {magic} is newer than rdbscan knows (it reads up to {newest}): read on; the "
        f"figures rest on the newest format rdbscan knows; upgrade rdbscan for an exact reading"
    )


def dump_warnings(r) -> list[str]:
    """What a dump's row says beyond its keys: bytes after the RDB, keys --skip-bad left out."""
    out = []
    if r.tail_bytes:
        out.append(f"{r.path}: {r.tail_bytes} bytes follow the RDB's end marker and were not read")
    if r.skipped_keys:
        first = f"; first: {r.first_skipped}" if r.first_skipped else ""
        out.append(f"{r.path}: {r.skipped_keys} damaged keys skipped (--skip-bad){first}")
    if getattr(r, "cut", None):
        out.append(cut_warning(r.path, r.cut))
    if getattr(r, "invalid_keys", 0):
        out.append(invalid_warning(r.path, r.invalid_keys, getattr(r, "first_invalid", None)))
    return out


def outcome(results, *, summary=None) -> Outcome:
    """Messages and exit code for load results (rdbscan.db.load.DumpResult, also those rebuilt
    from a database's `dumps` rows).  `summary(result)` gives the line for a dump that loaded
    cleanly (None: no line)."""
    o = Outcome()
    for r in results:
        if r.refused:
            o.errors.append(r.refused)
            o.raise_code(result_exit_code(r))
            continue
        if getattr(r, "newer_than", None) is not None:
            o.warnings.append(newer_warning(r.path, r.magic, r.newer_than))
        o.warnings += r.warnings or dump_warnings(r)
        o.raise_code(result_exit_code(r))
        if r.error:
            o.errors.append(r.error)
        elif r.checksum == "mismatch":
            o.errors.append(
                f"{r.path}: CRC64 checksum mismatch: the file stores "
                f"{r.checksum_stored}, its bytes give {r.checksum_computed} (all "
                f"{r.keys} keys were read and kept; the file is damaged)"
            )
        elif summary is not None and not r.skipped_keys:
            line = summary(r)
            if line:
                o.notes.append(line)
    return o
