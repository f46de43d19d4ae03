"""Printing query results: a rich table for terminals, CSV and JSON for scripts."""
from __future__ import annotations

import csv
import datetime as dt
import decimal
import json
import sys


def _jsonable(v):
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).decode("utf-8", "backslashreplace")
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


def _text(v) -> str:
    if v is None:
        return "NULL"
    v = _jsonable(v)
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def print_result(columns: list[str], rows: list[tuple], fmt: str = "table", out=None) -> None:
    out = out or sys.stdout
    if fmt == "csv":
        w = csv.writer(out, lineterminator="\n")
        w.writerow(columns)
        for row in rows:
            w.writerow(["" if v is None else _text(v) for v in row])
    elif fmt == "json":
        json.dump([dict(zip(columns, (_jsonable(v) for v in row))) for row in rows], out,
                  ensure_ascii=False, indent=1)
        out.write("\n")
    else:
        from rich.console import Console
        from rich.table import Table
        table = Table(show_lines=False, header_style="bold")
        for c in columns:
            table.add_column(c, overflow="fold")
        for row in rows:
            table.add_row(*(_text(v) for v in row))
        Console(file=out, soft_wrap=False).print(table)
        out.write(f"({len(rows)} row{'s' if len(rows) != 1 else ''})\n")
