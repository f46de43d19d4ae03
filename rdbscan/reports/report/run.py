"""Load, then report: one library call for what `rdbscan report DUMP...` does.

Given dumps, they are loaded into a database (one given, or a temporary one removed afterwards);
given a database, the report covers what it holds.  Either way the load outcome
(rdbscan/db/outcome.py) of every dump reported on is told, and the exit code of the whole run is
decided here, once: `rdbscan report` and `rdbscan schema` print what this module says.

    run = run_report(["dump.rdb"])      # a ReportRun: the report dict, what to tell, exit code
    run.report["overview"]["keys"]
"""

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ...errors import EXIT_DAMAGED, EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, CommandError, worst_exit
from ..engine.sources import open_sources


@dataclass
class ReportRun:
    """What one `rdbscan report` run produced: the report (None when no dump could be read),
    every line it told (load outcome), and its exit code."""

    report: dict | None
    load_code: int = EXIT_OK
    loaded: list = field(default_factory=list)
    messages: list[str] = field(default_factory=list)

    def failed_checks(self) -> list[str]:
        """`rule measured > threshold` for each --fail-on check that failed."""
        fail_on = (self.report or {}).get("fail_on") or {}
        return [
            f"{c['rule']} {c['measured']} > {c['threshold']}"
            for c in fail_on.get("checks", ())
            if c["failed"]
        ]

    @property
    def exit_code(self) -> int:
        """docs/exit-codes.md: the load's code, EXIT_DAMAGED when nothing could be read, and
        EXIT_FINDINGS when a --fail-on check failed (the first in EXIT_PRECEDENCE wins)."""
        if self.report is None:
            return self.load_code or EXIT_DAMAGED
        return worst_exit(self.load_code, EXIT_FINDINGS if self.failed_checks() else EXIT_OK)


def run_report(
    sources: Sequence[str],
    options=None,
    *,
    output: str | None = None,
    fail_on: list[tuple[str, str]] | None = None,
    on_section: Callable[[str], None] | None = None,
    charts: bool = False,
    say: Callable[[str], None] | None = None,
    quiet: bool = False,
    **load_options: Any,
) -> ReportRun:
    """Load the dumps in `sources` (or open the one database named there) and build the report
    (rdbscan.reports.report.build_report with `options`, `fail_on`, `on_section`, `charts`).

    `output`: keep the loaded database there; `load_options`: progress, target, replace,
    allow_ratio (open_sources).  Each line of the load outcome goes to `say` as soon as it is
    known and into ReportRun.messages.  A value the report cannot use (--set, --config, a
    dump id) is a CommandError with EXIT_USAGE."""
    from .build import ReportOptions, build_report, check_options

    options = options or ReportOptions()
    try:
        check_options(options)  # a bad --set or --config before a dump is read
    except ValueError as e:
        raise CommandError(str(e), EXIT_USAGE) from None
    messages: list[str] = []

    def tell(line: str) -> None:
        messages.append(line)
        if say is not None:
            say(line)

    with open_sources(
        sources, output=output, dump_id=options.dump_id, say=tell, quiet=quiet, **load_options
    ) as db:
        run = ReportRun(None, db.code, db.loaded, messages)
        if not db.has_dumps:
            return run  # nothing was read: the errors told are all there is
        now = {r.dump_id for r in db.loaded}
        if db.loaded and not options.note and any(i not in now for i, _ in db.reported):
            options = replace(options, note=coverage_note(db.reported, now))
        try:
            run.report = build_report(
                db.con, options, fail_on=fail_on, on_section=on_section, charts=charts
            )
        except ValueError as e:  # a --set or --config value the report cannot use
            raise CommandError(str(e), EXIT_USAGE) from None
    return run


def coverage_note(reported: list[tuple[int, str]], now: set[int]) -> str:
    """The report's first line when the database the dumps were loaded into already held dumps
    it reports too: `This report covers 2 dumps: a.rdb (dump 1, loaded earlier), b.rdb (dump 2);
    --dump-id 2 reports b.rdb alone.`  `reported`: (dump_id, path) of the dumps the report
    covers; `now`: the dump ids this run loaded (or found already loaded)."""

    def name(path: str) -> str:
        return os.path.basename(path) or path

    listed = [
        f"{name(p)} (dump {i}{'' if i in now else ', loaded earlier'})" for i, p in reported[:6]
    ]
    if len(reported) > 6:
        listed.append(f"{len(reported) - 6} more")
    count = f"{len(reported)} dump{'s' if len(reported) != 1 else ''}"
    line = f"This report covers {count}: {', '.join(listed)}"
    mine = [(i, p) for i, p in reported if i in now]
    if len(mine) == 1:
        line += f"; --dump-id {mine[0][0]} reports {name(mine[0][1])} alone"
    return line + "."
