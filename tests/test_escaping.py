"""Strings from a dump never control the terminal nor become markup: a crafted dump (built with
tests/rdbwriter.py) whose key names and aux fields hold escape sequences, Rich markup and
invisible Unicode, through every renderer: text and markdown reports, `sql` and `query` tables,
errors on stderr (a tar member's name).  JSON and CSV keep the exact strings."""

from __future__ import annotations

import io
import json
import tarfile

import pytest
import rdbwriter as W
from common import run_cli

from rdbscan.db.load import load
from rdbscan.reports.format import escape_text, fmt_key

OSC8 = b"\x1b]8;;https://evil.example\x07click\x1b]8;;\x07"  # a hyperlink escape
LINK = b"[link=https://evil.example]click[/link]"  # Rich markup
CLOSE = b"[/]"  # a Rich closing tag alone
BIDI = "\u202eevil".encode()  # right-to-left override
CSI = b"csi\xc2\x9b31m"  # U+009B, the 8-bit CSI
VER = "7.2.4\x1b[2J\x1b[H"  # clear screen, cursor home
BIG = b"big\x1b[5m:1"
# What must never reach a terminal: ESC, BEL, the 8-bit CSI (in UTF-8), the bidi override.
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def _evil_rdb() -> bytes:
    keys = (
        [LINK, CLOSE, BIDI, CSI]
        + [b"{\x1b[31mred}:%d" % i for i in range(12)]
        + [OSC8 + b":%d" % i for i in range(20)]
    )
    body = b"\xfe\x00" + b"".join(W.key(0, k, W.string(b"v")) for k in keys)
    body += W.key(0, BIG, W.string(b"x" * 20000))  # a big key: listed and named in advice
    return W.rdb(
        body,
        version=11,
        aux={"redis-ver": VER, "redis-bits": "64", "ctime": "1700000000", "used-mem": "1000000"},
    )


@pytest.fixture(scope="module")
def evil(tmp_path_factory):
    d = tmp_path_factory.mktemp("evil")
    dump = d / "evil.rdb"
    dump.write_bytes(_evil_rdb())
    db = d / "evil.duckdb"
    load([str(dump)], str(db))
    return dump, db


def test_escape_text():
    assert (
        escape_text("a\x1b[31mb\x07\n\t\x7f\x9b\u202e\u200b\ufeffé€")
        == "a\\x1b[31mb\\x07\\x0a\\x09\\x7f\\x9b\\u202e\\u200b\\ufeffé€"
    )
    assert escape_text(LINK.decode()) == LINK.decode()  # markup is not escaped: never interpreted
    # shortening never cuts an escape in two
    assert fmt_key(OSC8.decode() + ":1", 40) == "\\x1b]8;;https://evil.example\\x07click…"


def test_text_report(evil):
    dump, db = evil
    res = run_cli("report", db)
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert not [c for c in RAW if c in out]
    lines = out.splitlines()
    assert any(line.split() == ["Server", "redis", "7.2.4\\x1b[2J\\x1b[H"] for line in lines)
    # markup shown literally, [/] does not break anything
    assert any(line.split()[:1] == ["[link=https://evil.example]click[/link]"] for line in lines)
    assert any(line.split()[:1] == ["[/]"] for line in lines)
    assert any(line.split()[:1] == ["\\u202eevil"] for line in lines)
    assert any(line.split()[:1] == ["csi\\x9b31m"] for line in lines)
    # the findings' heading and lines, the family named in an advice line, hashtags, the big key
    assert any(line.startswith("Findings: redis 7.2.4\\x1b[2J\\x1b[H, 37 keys") for line in lines)
    assert any(line.startswith("info One family, big\\x1b[5m:{id}, holds") for line in lines)
    assert any(line.startswith("What to do:") and "big\\x1b[5m:{id}" in line for line in lines)
    assert any(line.split()[:1] == ["{\\x1b[31mred}:{id}"] for line in lines)
    assert any(line.split()[:2] == ["big\\x1b[5m:1", "string"] for line in lines)


def test_markdown_report(evil):
    dump, db = evil
    out = run_cli("report", db, "-f", "markdown").stdout
    assert not [c for c in RAW if c in out]
    lines = out.splitlines()
    assert "- **Server:** redis 7.2.4\\\\x1b\\[2J\\\\x1b\\[H" in lines
    assert [line for line in lines if line.startswith("| \\[link=")][0].startswith(
        "| \\[link=https://evil.example\\]click\\[/link\\] | 1 | "
    )
    assert any(line.startswith("| \\[/\\] | 1 | ") for line in lines)


def test_json_report_keeps_exact_strings(evil):
    dump, db = evil
    rep = json.loads(run_cli("report", db, "-f", "json", "--top", "50").stdout)
    assert rep["overview"]["server_version"] == VER
    patterns = {p["pattern"] for p in rep["patterns"]["items"]}
    assert {
        OSC8.decode() + ":{id}",
        LINK.decode(),
        CLOSE.decode(),
        "{\x1b[31mred}:{id}",
    } <= patterns
    assert rep["big_keys"]["items"][0]["key"] == BIG.decode()


def test_sql_table_shows_markup_literally(evil):
    dump, db = evil
    res = run_cli(
        "sql",
        db,
        "SELECT key FROM keys WHERE key IN ('[/]', '[link=https://evil.example]"
        "click[/link]') OR key LIKE 'csi%' OR key LIKE '%evil' ORDER BY key",
    )
    assert res.exit_code == 0, res.output
    assert res.stdout == (
        "┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓\n"
        "┃ key                                     ┃\n"
        "┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩\n"
        "│ [/]                                     │\n"
        "│ [link=https://evil.example]click[/link] │\n"
        "│ csi\\x9b31m                              │\n"
        "│ \\u202eevil                              │\n"
        "└─────────────────────────────────────────┘\n"
        "(4 rows)\n"
    )
    # a column named like markup
    res = run_cli("sql", db, "SELECT 1 AS \"[bold]x[/]\", '\x1b[2J' AS y")
    assert res.stdout.splitlines()[1] == "┃ [bold]x[/] ┃ y       ┃"
    assert res.stdout.splitlines()[3] == "│ 1          │ \\x1b[2J │"


def test_sql_records_csv_and_json(evil):
    dump, db = evil
    res = run_cli("sql", db, "SELECT key, repeat('x', 90) AS pad FROM keys WHERE key LIKE 'big%'")
    assert res.stdout == (f"-[ row 1 ]\nkey  big\\x1b[5m:1\npad  {'x' * 90}\n(1 row)\n")
    assert (
        run_cli("sql", db, "SELECT key FROM keys WHERE key LIKE 'big%'", "-f", "csv").stdout
        == "key\n" + BIG.decode() + "\n"
    )
    assert json.loads(
        run_cli("sql", db, "SELECT key FROM keys WHERE key LIKE 'big%'", "-f", "json").stdout
    ) == [{"key": BIG.decode()}]


def test_query_table(evil):
    dump, db = evil
    out = run_cli("query", db, "big_keys").stdout
    assert not [c for c in RAW if c in out]
    assert "big\\x1b[5m:1" in out


def test_tar_member_name_on_stderr(tmp_path):
    data = _evil_rdb()
    info = tarfile.TarInfo("dump\x1b[2J.rdb")
    info.size = len(data)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as t:
        t.addfile(info, io.BytesIO(data))
    tar = tmp_path / "evil.tar"
    tar.write_bytes(buf.getvalue() + b"trailing")  # a tar with bytes after it: still one dump
    cut = tmp_path / "cut.tar"
    cut.write_bytes(buf.getvalue()[: 512 + len(data) - 100])
    p = run_cli("load", "-q", cut, "-o", tmp_path / "x.duckdb")
    assert p.returncode == 4
    assert p.stderr.startswith(f"rdbscan: error: {cut}:dump\\x1b[2J.rdb: byte ")
    assert "\x1b" not in p.stderr
    p = run_cli("load", tar, "-o", tmp_path / "y.duckdb")
    assert p.returncode == 0, p.stderr
    assert p.stderr.startswith(f"{tar}:dump\\x1b[2J.rdb: 37 keys, checksum ok, ")
