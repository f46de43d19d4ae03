"""The text report at terminal widths from 80 columns up: every cell of every table whole on
one line (a narrow terminal wraps headers between words and moves the least important columns
below the table, rdbscan/reports/document.py), checked against the cells the report's JSON
gives, never against the text itself."""

from __future__ import annotations

import io
import json

import pytest
from common import FIXTURES, ROOT
from rich.console import Console

from rdbscan.reports.document import Block, _split_top, draw_text
from rdbscan.reports.engine.database import open_database
from rdbscan.reports.format import escape_text, fmt_bytes, fmt_db_key, fmt_int, fmt_time
from rdbscan.reports.report import ReportOptions, build_report
from rdbscan.reports.report.render import document, render_json, render_text

WIDTHS = (80, 100, 200)
SAMPLES = sorted((ROOT / "sample_dumps").glob("*.rdb"))


def _report(db: str) -> dict:
    con = open_database(db, read_only=True)
    try:
        report = build_report(con, ReportOptions())
    finally:
        con.close()
    return json.loads(render_json(report))  # what `--format json` gives


def _draw(blocks: list[Block], width: int) -> str:
    buf = io.StringIO()
    draw_text(blocks, Console(file=buf, width=width, color_system=None, force_terminal=False))
    return buf.getvalue()


def _whole(value: str, lines: list[str], width: int) -> bool:
    """`value` on one line; a list wider than a line, each of its elements on one line."""
    if any(value in line for line in lines):
        return True
    if len(value) <= width - 4:
        return False
    return all(any(p.rstrip(",") in line for line in lines) for p in _split_top(value))


def check_tables(blocks: list[Block], full_text: str | None, width: int) -> int:
    """Every table of `blocks`, drawn as in the full text (when given: the sample's tests check
    that each table is drawn there as alone), keeps each cell whole; returns the number of
    cells checked."""
    checked = 0
    for block in blocks:
        if block.kind != "table" or not block.table or not block.table.rows:
            continue
        t = block.table
        drawn = _draw([block], width)
        assert full_text is None or drawn in full_text, t.title
        lines = drawn.splitlines()
        too_wide = [ln for ln in lines if len(ln.rstrip()) > width]
        # only an element wider than the terminal may stand alone on a longer line
        assert all(len(ln.strip()) > width - 4 for ln in too_wide), (t.title, too_wide)
        at = 0
        for row in t.rows:
            first = escape_text(row[0])
            found = [i for i in range(at, len(lines)) if first in lines[i]]
            assert found, (width, t.title, first)  # the rows in order, each first cell whole
            at = found[0]
            for cell in row:
                value = escape_text(cell)
                if value.strip() in ("", "-"):
                    continue
                assert _whole(value, lines, width), (width, t.title, value, drawn)
                checked += 1
    return checked


def _render(report: dict, width: int) -> str:
    buf = io.StringIO()
    render_text(report, Console(file=buf, width=width, color_system=None, force_terminal=False))
    return buf.getvalue()


@pytest.fixture(scope="module")
def sample_report(sample_db):
    return _report(sample_db)


@pytest.mark.parametrize("width", WIDTHS)
def test_every_cell_whole_at_width(sample_report, width):
    text = _render(sample_report, width)
    assert check_tables(document(sample_report), text, width) > 1000


@pytest.mark.parametrize("width", (80, 100))
def test_stream_pending_and_field_ttl_memory_whole(sample_report, width):
    """The cells 80 columns used to cut, from the JSON: each stream's pending count on its row,
    each field-TTL hash's memory and first field expiry whole."""
    lines = _render(sample_report, width).splitlines()
    streams = sample_report["streams"]
    groups = next(r for r in streams["items"] if r["key"] == "stream:groups")
    assert groups["pending"] == 27
    row = next(ln for ln in lines if ln.startswith("stream:groups ") and "65" in ln)
    assert row.split()[-1] == fmt_int(groups["pending"]) == "27"
    details = [ln for ln in lines if "g1 (4 consumers, 24 pending)" in ln]
    assert len(details) == 1
    hfe = streams["hash_field_ttl"]
    assert [r["key"] for r in hfe][:2] == ["hfe:hashtable", "hfe:listpack"]
    for r in hfe:
        key = fmt_db_key(r)
        assert any(ln.startswith(key + " ") and fmt_bytes(r["memory_bytes"]) in ln for ln in lines)
        assert any(fmt_time(r["min_field_expire_ms"]) in ln for ln in lines)
    assert fmt_bytes(hfe[0]["memory_bytes"]) == "32.3 KiB"
    assert fmt_time(hfe[0]["min_field_expire_ms"]) == "2100-06-02 08:10:03 UTC"


def test_what_if_rows_at_80_columns(sample_report):
    """A table whose first text column cannot move (the threshold change names the row) is
    listed row by row when it is wider than the terminal."""
    text = _render(sample_report, 80)
    start = text.index("What if thresholds were raised\n")
    assert text[start:].splitlines()[1:5] == [
        "hash  change: current thresholds; keys convert: 0; saves ~: 0 B",
        "hash  change: hash-max-listpack-entries 512 -> 1024; keys convert: 2;",
        "    saves ~: 46.4 KiB",
        "hash  change: hash-max-listpack-value 64 -> 128; keys convert: 62;",
    ]


def test_wide_terminal_keeps_the_table():
    """At 200 columns nothing moves: a table is drawn whole, headers on one line."""
    from rdbscan.reports.document import table

    b = table("t", ["name", "a long header", "n"], [["x" * 30, "y" * 50, "1"]], (2,))
    wide = [ln.rstrip() for ln in _draw([b], 200).splitlines()]
    assert wide[1] == "name" + " " * 29 + "a long header" + " " * 40 + "n"
    assert wide[3] == "x" * 30 + "   " + "y" * 50 + "   1"
    assert len(wide) == 4
    narrow = [ln.rstrip() for ln in _draw([b], 80).splitlines()]
    assert narrow[1:] == [
        "name                             n",
        "─" * 34,
        "x" * 30 + "   1",
        "a long header, by name:",
        "x" * 30,  # 30 + 2 + 50 > 80: the value on a line of its own
        "    " + "y" * 50,
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    "dump",
    [str(p.relative_to(ROOT)) for p in sorted(FIXTURES.rglob("*.rdb"))]
    + [str(p.relative_to(ROOT)) for p in SAMPLES],
)
def test_every_dump_every_width(tmp_path, dump):
    from rdbscan.db.load import load

    db = str(tmp_path / "d.duckdb")
    load([str(ROOT / dump)], db)  # a damaged dump too: its report is drawn as well
    blocks = document(_report(db))
    for width in WIDTHS:
        check_tables(blocks, None, width)


@pytest.mark.slow
def test_diff_and_trend_every_width(tmp_path):
    """`diff` and `trend` draw their tables the same way: every cell whole at every width."""
    from common import run_cli

    from rdbscan.reports.diff.render import diff_document
    from rdbscan.reports.diff.trend_render import trend_document

    diff = FIXTURES / "diff"
    res = run_cli("diff", diff / "old.rdb", diff / "new.rdb", "-q", "-f", "json")
    assert res.exit_code == 0, res.output
    history = tmp_path / "h.duckdb"
    for n in range(1, 5):
        run_cli("load", "-q", "--instance", "c", diff / f"history-{n}.rdb", "-o", history)
    trend = run_cli("trend", history, "-f", "json")
    for blocks in (
        diff_document(json.loads(res.stdout)),
        trend_document(json.loads(trend.stdout)),
    ):
        for width in WIDTHS:
            assert check_tables(blocks, _draw(blocks, width), width) > 40
