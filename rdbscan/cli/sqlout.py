"""Printing query results: a table (or one block per row when the table would not fit the
width), CSV and JSON for scripts.  Tables and blocks escape what a terminal could act on
(format.escape_text); CSV and JSON keep every string exact."""

from __future__ import annotations

import csv
import json
import sys

from ..reports.format import escape_text, plain


def _text(v) -> str:
    if v is None:
        return "NULL"
    v = plain(v)
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def _shown(v) -> str:
    """A cell as the table and record displays show it: escaped (format.escape_text)."""
    return escape_text(_text(v))


def print_result(columns: list[str], rows: list[tuple], fmt: str = "table", out=None) -> None:
    out = out or sys.stdout
    if fmt == "csv":
        w = csv.writer(out, lineterminator="\n")
        w.writerow(columns)
        for row in rows:
            w.writerow(["" if v is None else _text(v) for v in row])
    elif fmt == "json":
        json.dump(
            [dict(zip(columns, (plain(v) for v in row))) for row in rows],
            out,
            ensure_ascii=False,
            indent=1,
        )
        out.write("\n")
    else:
        from rich.console import Console

        console = Console(file=out, soft_wrap=False)
        columns = [escape_text(c) for c in columns]
        texts = [[_shown(v) for v in row] for row in rows]
        if _fits(columns, texts, console.width):
            from rich.table import Table
            from rich.text import Text

            table = Table(show_lines=False, header_style="bold")
            for c in columns:  # Text: a key like [link=...] or [/] is shown, never markup
                table.add_column(Text(c), overflow="fold")
            for cells in texts:
                table.add_row(*map(Text, cells))
            console.print(table)
        else:
            _print_records(columns, texts, out)
        out.write(f"({len(rows)} row{'s' if len(rows) != 1 else ''})\n")


def _fits(columns: list[str], texts: list[list[str]], width: int) -> bool:
    """Whether a table of these cells (each column as wide as its widest line) fits `width`."""
    total = 1
    for i, c in enumerate(columns):
        cells = [c] + [row[i] for row in texts]
        total += max(len(line) for cell in cells for line in cell.split("\n")) + 3
    return total <= width


def _print_records(columns: list[str], texts: list[list[str]], out) -> None:
    """One block per row, one `column  value` line per column (psql's expanded display): what
    a table of many or wide columns becomes in 80 characters, e.g. piped to a file."""
    name_width = max((len(c) for c in columns), default=0)
    for n, row in enumerate(texts, 1):
        out.write(f"-[ row {n} ]" + "-" * max(0, name_width - 6) + "\n")
        for c, v in zip(columns, row):
            out.write(f"{c:<{name_width}}  {v}\n")
