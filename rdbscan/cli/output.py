"""What the commands print besides their results: one-line messages on standard error and progress displays."""

from __future__ import annotations

import contextlib
import os
import sys
import time

import click


def say(line: str) -> None:
    """One line on standard error; text from a dump in it (a key, a tar member's name) is
    escaped, each line on its own (format.escape_text)."""
    from ..reports.format import escape_text

    click.echo("\n".join(escape_text(part) for part in str(line).split("\n")), err=True)


class RichProgress:
    """A one-line progress display on stderr: the dump's name, a bar, bytes read of the whole,
    keys, keys/s and the time left, within the terminal's width (at 80 columns the line was 83
    characters and the terminal folded it in two).  Narrower than 100 columns the MB/s column
    is left out, narrower than 80 the keys/s too, and a long name is cut with an ellipsis.
    `console`: where it draws (tests)."""

    WIDE, NARROW = 100, 80

    def __init__(self, console=None):
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )
        from rich.table import Column

        console = console or Console(stderr=True)

        def text(template: str, **column) -> TextColumn:
            # never folded onto a second line: cut, if anything
            return TextColumn(template, table_column=Column(no_wrap=True, **column))

        wide, narrow = console.width >= self.WIDE, console.width < self.NARROW
        columns = [
            # a longer dump name is cut ("...") rather than pushing the line over
            text("{task.description}", overflow="ellipsis", max_width=24 if wide else 16),
            BarColumn(bar_width=None),  # what the other columns leave
            DownloadColumn(table_column=Column(no_wrap=True)),
            *([TransferSpeedColumn()] if wide else []),
            text("{task.fields[keys]:,} keys"),
            *([] if narrow else [text("{task.fields[rate]:,.0f} keys/s")]),
            TimeRemainingColumn(),
        ]
        self.progress = Progress(*columns, console=console, transient=True, expand=True)
        self.task = None
        self.t0 = 0.0

    def start(self, name, size):
        import time

        self.t0 = time.perf_counter()
        self.progress.start()
        from rich.markup import escape

        from ..reports.format import escape_text

        label = escape(escape_text(os.path.basename(name)))  # a tar member's name is the dump's
        self.task = self.progress.add_task(label, total=size, keys=0, rate=0.0)

    def update(self, bytes_read, keys):
        import time

        dt = time.perf_counter() - self.t0
        self.progress.update(
            self.task, completed=bytes_read, keys=keys, rate=keys / dt if dt > 0 else 0.0
        )

    def finish(self):
        self.progress.stop()


def say_jobs(dumps: int, jobs: int) -> None:
    """The line `load -j` and `migrate -j` print as their worker processes start (each dump is
    loaded in a worker: no progress display)."""
    say(f"rdbscan: loading {dumps} dumps, {min(jobs, dumps)} at a time")


def make_progress(quiet: bool):
    if quiet or not sys.stderr.isatty():
        return None
    return RichProgress()


@contextlib.contextmanager
def section_status(quiet: bool):
    """A spinner on stderr naming the section whose queries run (a terminal only, not with
    --quiet): on tens of millions of keys the queries take as long as the load."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console

    started = time.perf_counter()
    with Console(stderr=True).status("report: overview") as status:

        def on_section(name: str) -> None:
            status.update(f"report: {name} ({time.perf_counter() - started:.0f} s)")

        yield on_section


def output_fault(exc: OSError, path: str):
    """The one line (EXIT_DATABASE, as for a database) for an output file that cannot be written."""
    import errno

    from ..errors import EXIT_DATABASE, CommandError, database_fault

    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return CommandError(f"{path}: its directory does not exist", EXIT_DATABASE)
    return database_fault(exc, path) or CommandError(
        f"{path}: {exc.strerror or exc}", EXIT_DATABASE
    )


def text_page(draw) -> str:
    """What `draw(console)` prints, as a text file holds it: no colours, as wide as when piped
    (COLUMNS, else 140 columns)."""
    import io

    from rich.console import Console

    buf = io.StringIO()
    draw(Console(file=buf, width=text_width(), color_system=None))
    return buf.getvalue()


def for_a_terminal() -> bool:
    """Standard output is a terminal, or COLUMNS says how wide one is (text then fits it;
    a pipe to grep gets whole lines)."""
    return sys.stdout.isatty() or os.environ.get("COLUMNS", "").isdigit()


def text_width(terminal: bool = False) -> int:
    """How wide plain text is drawn: COLUMNS, else (`terminal`: it goes to standard output)
    the width of the terminal there, else 140 columns (a file, a pipe)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if terminal:
        try:
            return os.get_terminal_size(sys.stdout.fileno()).columns
        except (AttributeError, OSError, ValueError):  # not a terminal, or no descriptor
            pass
    return 140
