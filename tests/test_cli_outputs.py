"""Where `report`, `diff`, `trend` and `migrate` write (rdbscan/cli/targets.py,
docs/report.md#outputs): the rendered report (-o FILE, its format from the name) and the
database (--database FILE.duckdb) are two outputs; every target is checked before a dump is
read; a user's file is never overwritten; a second run into one database never doubles a
number."""

from __future__ import annotations

import json
import os
import shutil

import duckdb
import pytest
from common import FIXTURES, ROOT, run_cli

SAMPLE = ROOT / "sample_dumps" / "redis-7.4.1.rdb"  # 584 keys
OTHER = ROOT / "sample_dumps" / "redis-6.2.16.rdb"  # 561 keys
DIFF = FIXTURES / "diff"
OVERVIEW = ("--section", "overview")  # the one section these tests read: a faster report


def _q(db, sql):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize(
    "name, first",
    [
        ("r.json", '{\n  "rdbscan_report": 1,\n'),
        ("r.md", "# rdbscan report\n"),
        ("r.txt", "rdbscan report, generated "),
        ("r.prom", "# TYPE rdbscan_snapshot_timestamp_seconds gauge\n"),
        ("r.html", "<!DOCTYPE html>"),
    ],
)
def test_report_file_format_from_its_name(tmp_path, sample_db, name, first):
    out = tmp_path / name
    res = run_cli("report", sample_db, "-o", out, "--section", "overview")
    assert (res.exit_code, res.stdout) == (0, "")
    kind = {"json": "JSON", "md": "Markdown", "txt": "text", "prom": "OpenMetrics"}
    what = kind.get(name.split(".")[1], "HTML")
    assert res.stderr == f"rdbscan: {what} report written to {out}\n"
    assert out.read_text().startswith(first)
    assert os.listdir(tmp_path) == [name]
    if name == "r.json":
        assert json.loads(out.read_text())["overview"]["keys"] == 584


def test_report_of_dumps_to_a_file_leaves_no_database(tmp_path):
    res = run_cli("report", "-q", SAMPLE, "-f", "json", "-o", tmp_path / "report.json", *OVERVIEW)
    assert (res.exit_code, res.stdout, res.stderr) == (0, "", "")
    assert json.loads((tmp_path / "report.json").read_text())["overview"]["keys"] == 584
    assert os.listdir(tmp_path) == ["report.json"]  # the database was temporary


def test_format_and_name_that_disagree_are_refused_before_loading(tmp_path):
    res = run_cli("report", SAMPLE, "-f", "json", "-o", tmp_path / "out.html")
    assert (res.exit_code, res.stdout, res.stderr) == (
        2,
        "",
        f"rdbscan: error: -o {tmp_path / 'out.html'}: the name says html, --format says json "
        f"(give one of them)\n",
    )
    assert os.listdir(tmp_path) == []


def test_name_without_a_known_extension(tmp_path, sample_db):
    out = tmp_path / "report.out"
    res = run_cli("report", SAMPLE, "-o", out)
    assert (res.exit_code, res.stderr) == (
        2,
        f"rdbscan: error: -o {out}: give the report file a name ending .txt, .md, .json, .html "
        f"or .prom (or --format), or the database one ending .duckdb (--database FILE.duckdb)\n",
    )
    res = run_cli("report", "-q", sample_db, "-o", out, "-f", "markdown", "--section", "overview")
    assert res.exit_code == 0
    assert out.read_text().startswith("# rdbscan report\n")


def test_database_under_a_report_name_is_refused(tmp_path):
    for cmd in (
        ["report", SAMPLE, "--database", tmp_path / "report.json"],
        ["load", SAMPLE, "-o", tmp_path / "report.json"],
    ):
        option = "-o" if cmd[0] == "load" else "--database"
        res = run_cli(*cmd)
        assert (res.exit_code, res.stdout, res.stderr) == (
            2,
            "",
            f"rdbscan: error: {option} {tmp_path / 'report.json'}: a report's name, not a "
            f"database's; give the database a name ending .duckdb\n",
        )
    assert os.listdir(tmp_path) == []


def test_existing_file_that_is_not_a_database_is_left_alone(tmp_path):
    notes = tmp_path / "notes"
    notes.write_text("my notes\n")
    for cmd in (["report", SAMPLE, "--database", notes], ["load", SAMPLE, "-o", notes]):
        res = run_cli(*cmd)
        assert (res.exit_code, res.stdout, res.stderr) == (
            7,
            "",
            f"rdbscan: error: {notes}: not a DuckDB database; not overwritten (give a new file "
            f"name such as dump.duckdb, or a database rdbscan wrote)\n",
        )
    assert notes.read_text() == "my notes\n"
    assert os.listdir(tmp_path) == ["notes"]


@pytest.mark.parametrize("option", ["-o", "--html"])
def test_users_file_is_never_overwritten_and_refused_first(tmp_path, option):
    mine = tmp_path / "mine.html"
    mine.write_text("<p>my page</p>\n")
    res = run_cli("report", SAMPLE, option, mine)  # no -q: a load would say so
    assert (res.exit_code, res.stdout, res.stderr) == (
        7,
        "",
        f"rdbscan: error: {mine}: exists and is not a report rdbscan wrote; not overwritten\n",
    )
    assert mine.read_text() == "<p>my page</p>\n"
    assert os.listdir(tmp_path) == ["mine.html"]


def test_report_file_rdbscan_wrote_is_replaced(tmp_path, sample_db):
    out = tmp_path / "r.json"
    for top in (1, 2):
        res = run_cli("report", "-q", sample_db, "-o", out, "--top", top, "--section", "overview")
        assert res.exit_code == 0
        assert json.loads(out.read_text())["options"]["top"] == top
    assert os.listdir(tmp_path) == ["r.json"]  # no temporary file left beside it


def test_missing_directories_are_refused_before_loading(tmp_path):
    gone = tmp_path / "no" / "such"
    for option, name in (("-o", "r.md"), ("--html", "r.html"), ("--database", "x.duckdb")):
        res = run_cli("report", SAMPLE, option, gone / name)
        assert (res.exit_code, res.stdout, res.stderr) == (
            7,
            "",
            f"rdbscan: error: {gone / name}: its directory does not exist\n",
        )


def test_outputs_that_collide(tmp_path):
    db = tmp_path / "x.duckdb"
    res = run_cli("report", SAMPLE, "-o", db, "--database", tmp_path / "y.duckdb")
    assert (res.exit_code, res.stderr) == (
        2,
        f"rdbscan: error: -o {db} and --database {tmp_path / 'y.duckdb'}: give the database once\n",
    )
    page = tmp_path / "r.html"
    res = run_cli("report", SAMPLE, "-o", tmp_path / "r.md", "--html", tmp_path / "r.md")
    assert (res.exit_code, res.stderr) == (
        2,
        f"rdbscan: error: {tmp_path / 'r.md'}: given for two outputs; give each its own file\n",
    )
    res = run_cli("report", SAMPLE, "-o", page, "--html", tmp_path / "s.html")
    assert (res.exit_code, res.stderr) == (
        2,
        f"rdbscan: error: -o {page} is the HTML report already; --html adds one to another "
        f"format\n",
    )
    assert os.listdir(tmp_path) == []


def test_report_of_a_database_takes_no_database_option(tmp_path, sample_db):
    res = run_cli("report", sample_db, "--database", tmp_path / "x.duckdb")
    assert (res.exit_code, res.stderr) == (
        2,
        "rdbscan: error: --database applies when loading dumps, not to a database\n",
    )


@pytest.mark.slow
def test_second_run_into_one_database_doubles_nothing(tmp_path):
    """A nightly `report dump.rdb --database x.duckdb` run twice loads the dump once."""
    db = tmp_path / "x.duckdb"
    for _ in range(2):
        res = run_cli("report", "-q", SAMPLE, "--database", db, "-f", "json", *OVERVIEW)
        assert res.exit_code == 0, res.stderr
        report = json.loads(res.stdout)
        assert (report["overview"]["keys"], "note" in report) == (584, False)
    assert _q(db, "SELECT count(*), sum(keys) FROM dumps") == [(1, 584)]
    assert _q(db, "SELECT count(*) FROM keys") == [(584,)]


@pytest.mark.slow
def test_report_says_it_covers_the_dumps_held_before(tmp_path):
    """A copy of a dump under another name is the dump already held; another dump is added,
    and the report's first line names both."""
    db = tmp_path / "x.duckdb"
    copy = tmp_path / "copy.rdb"
    copy.write_bytes(SAMPLE.read_bytes())
    for source in (SAMPLE, copy):
        res = run_cli("report", "-q", source, "--database", db, "-f", "json", *OVERVIEW)
        assert res.exit_code == 0, res.stderr
        report = json.loads(res.stdout)
        assert (report["overview"]["keys"], "note" in report) == (584, False)
    assert _q(db, "SELECT count(*), sum(keys) FROM dumps") == [(1, 584)]
    # -o FILE.duckdb is the database, as before --database (dump ids 2 and 3 went to the
    # attempts that found the dump already there)
    res = run_cli("report", "-q", OTHER, "-o", db, "-f", "json", *OVERVIEW)
    assert res.exit_code == 0, res.stderr
    report = json.loads(res.stdout)
    note = (
        "This report covers 2 dumps: redis-7.4.1.rdb (dump 1, loaded earlier), "
        "redis-6.2.16.rdb (dump 3); --dump-id 3 reports redis-6.2.16.rdb alone."
    )
    assert (report["note"], report["overview"]["keys"]) == (note, 584 + 561)
    res = run_cli("report", "-q", OTHER, "--database", db, "-f", "markdown", *OVERVIEW)
    assert res.stdout.startswith(f"# rdbscan report\n\n_{note}_\n\n## Findings: 2 dumps")
    assert _q(db, "SELECT count(*), sum(keys) FROM dumps") == [(2, 1145)]
    res = run_cli("report", "-q", OTHER, "--database", db, *OVERVIEW, env={"COLUMNS": "200"})
    assert res.stdout.splitlines()[0] == note
    page = tmp_path / "r.html"
    res = run_cli("report", "-q", OTHER, "--database", db, *OVERVIEW, "-o", page)
    assert f'<section id="verdict"><p class="note">{note}</p>' in page.read_text()
    res = run_cli("report", "-q", db, "--dump-id", "3", "-f", "json", *OVERVIEW)
    report = json.loads(res.stdout)
    assert (report["overview"]["keys"], "note" in report) == (561, False)


@pytest.mark.slow
def test_diff_and_trend_outputs(tmp_path):
    kept = tmp_path / "kept.duckdb"
    res = run_cli(
        "diff",
        "-q",
        DIFF / "old.rdb",
        DIFF / "new.rdb",
        "-o",
        tmp_path / "d.md",
        "--database",
        kept,
    )
    assert (res.exit_code, res.stdout) == (0, "")
    assert (tmp_path / "d.md").read_text().startswith("# rdbscan diff\n")
    assert _q(kept, "SELECT count(*) FROM dumps") == [(2,)]
    res = run_cli("diff", DIFF / "old.rdb", DIFF / "new.rdb", "--database", kept)
    assert (res.exit_code, res.stderr) == (
        7,
        f"rdbscan: error: {kept}: exists; give a new file for the database (or compare the "
        f"databases themselves)\n",
    )
    res = run_cli("trend", kept, "-o", tmp_path / "t.duckdb")
    assert (res.exit_code, res.stderr) == (
        2,
        f"rdbscan: error: -o {tmp_path / 't.duckdb'}: trend writes no database\n",
    )
    # -q as every other command takes it: no line naming what was written
    res = run_cli("trend", kept, "-o", tmp_path / "t.json")
    assert (res.exit_code, res.stderr) == (
        0,
        f"rdbscan: JSON trend written to {tmp_path / 't.json'}\n",
    )
    res = run_cli("trend", kept, "-q", "-o", tmp_path / "t.json")
    assert (res.exit_code, res.stdout, res.stderr) == (0, "", "")
    assert json.loads((tmp_path / "t.json").read_text())["rdbscan_trend"] == 1
    os.remove(tmp_path / "t.json")
    res = run_cli("diff", kept, "-o", tmp_path / "d.prom")
    assert (res.exit_code, res.stderr) == (
        2,
        f"rdbscan: error: -o {tmp_path / 'd.prom'}: the name says openmetrics; this command "
        f"writes text, json, markdown, html (give another name)\n",
    )
    assert sorted(os.listdir(tmp_path)) == ["d.md", "kept.duckdb"]


def test_migrate_outputs(tmp_path):
    res = run_cli("migrate", "-q", SAMPLE, "--to", "valkey-9.1", "-o", tmp_path / "m.txt")
    assert (res.exit_code, res.stdout) == (0, "")
    text = (tmp_path / "m.txt").read_text()
    assert text.startswith("rdbscan migrate\n\nWill it load, and what will it cost")
    res = run_cli("migrate", "-q", SAMPLE, "--to", "valkey-9.1", "--database", tmp_path / "m.md")
    assert (res.exit_code, res.stderr) == (
        2,
        f"rdbscan: error: --database {tmp_path / 'm.md'}: a report's name, not a database's; "
        f"give the database a name ending .duckdb\n",
    )
    assert os.listdir(tmp_path) == ["m.txt"]


def test_schema_format_from_its_name(tmp_path, sample_db):
    out = tmp_path / "keyschema.md"
    res = run_cli("schema", "-q", sample_db, "-o", out)
    assert res.exit_code == 0, res.stderr
    lines = out.read_text().splitlines()
    assert lines[0] == "# rdbscan key schema"
    assert lines[4] == "| pattern | type | description | TTL | keys | memory | example |"
    res = run_cli("schema", sample_db, "-o", tmp_path / "s.json", "-f", "toml")
    assert (res.exit_code, res.stderr) == (
        2,
        f"rdbscan: error: -o {tmp_path / 's.json'}: the name says json, --format says toml "
        f"(give one of them)\n",
    )


def test_database_left_under_a_report_name_is_not_replaced(tmp_path, sample_db):
    """What `report -f json -o report.json` once wrote: a database named report.json."""
    old = tmp_path / "report.json"
    shutil.copyfile(sample_db, old)
    before = old.read_bytes()
    res = run_cli("report", SAMPLE, "-o", old)
    assert (res.exit_code, res.stderr) == (
        7,
        f"rdbscan: error: {old}: exists and is a DuckDB database, not a report; not overwritten\n",
    )
    assert old.read_bytes() == before


def test_format_html_with_html_file(tmp_path, sample_db):
    page = tmp_path / "r.html"
    res = run_cli("report", sample_db, "-f", "html", "--html", page, *OVERVIEW)
    assert (res.exit_code, res.stdout, res.stderr) == (
        0,
        "",
        f"rdbscan: HTML report written to {page}\n",
    )
    assert page.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    "head, ours",
    [
        ("rdbscan report, generated 2026-11-27T07:00:00+00:00\n", True),
        ("rdbscan notes: what I ran\n", False),
        ("# rdbscan diff\n\n## Verdict", True),
        ("# rdbscan reports I keep\n", False),
        ('{\n  "rdbscan_trend": 1,\n', True),
        ('{"mine": 1, "rdbscan_report": 1}', False),
        ("# TYPE rdbscan_snapshot_timestamp_seconds gauge\n", True),
        ('<!DOCTYPE html><meta name="generator" content="rdbscan">', True),
        ("<!DOCTYPE html><title>rdbscan</title>", False),
    ],
)
def test_which_files_rdbscan_replaces(tmp_path, head, ours):
    from rdbscan.cli import targets
    from rdbscan.errors import CommandError

    path = tmp_path / "out"
    path.write_text(head)
    try:
        targets.check_report_file(str(path))
        replaced = True
    except CommandError as e:
        assert (e.code, e.message) == (
            7,
            f"{path}: exists and is not a report rdbscan wrote; not overwritten",
        )
        replaced = False
    assert replaced == ours


@pytest.mark.parametrize(
    ("width", "shown", "columns"),
    [
        (60, ["production-cach…", "96.4/538.0 MB", "1,196,608 keys", "-:--:--"], 5),
        (80, ["production-cach…", "96.4/538.0 MB", "1,196,608 keys 597,216 keys/s"], 6),
        (120, ["production-cache-cluste…", "96.4/538.0 MB ? 1,196,608 keys 597,216 keys/s"], 7),
    ],
)
def test_the_progress_line_fits_the_terminal(width, shown, columns):
    """The load's progress line on a terminal of `width` columns: one line, exactly that wide
    (at 80 columns it was 83 and the terminal folded it), the name cut rather than the
    figures, the MB/s column (`?` before a second reading) from 100 columns on, keys/s from
    80."""
    import io

    from rich.console import Console

    from rdbscan.cli.output import RichProgress

    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=True, color_system=None)
    progress = RichProgress(console=console)
    task = progress.progress.add_task(
        "production-cache-cluster-shard-0042-replica.rdb", total=538_000_000, keys=0, rate=0.0
    )
    progress.progress.update(task, completed=96_400_000, keys=1_196_608, rate=597_216.4)
    console.print(progress.progress.get_renderable())
    lines = buf.getvalue().splitlines()
    assert len(lines) == 1 and len(lines[0]) == width, lines
    assert all(s in lines[0] for s in shown), lines[0]
    assert len(progress.progress.columns) == columns


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (
            ["report", SAMPLE, "--database", "{db}"],
            "--set no-such-setting: not a compact-encoding setting or query parameter (see "
            "`rdbscan queries -v`)",
        ),
        (
            ["diff", SAMPLE, OTHER, "--database", "{db}"],
            "--set no-such-setting: not a compact-encoding setting or diff query parameter",
        ),
    ],
)
def test_a_bad_setting_is_refused_before_a_dump_is_read(tmp_path, command, message):
    """`--set NAME=VALUE` that the report (or the diff) cannot use is one line and exit 2 before
    any dump is loaded: no "loaded" line, no database (it came after the load, minutes into a
    large dump); a value of the wrong kind too."""
    db = tmp_path / "x.duckdb"
    args = [str(db) if a == "{db}" else a for a in command]
    p = run_cli(*args, "--set", "no-such-setting=1")
    assert (p.returncode, p.stderr) == (2, f"rdbscan: error: {message}\n")
    p = run_cli(*args, "--set", "hash-max-listpack-entries=many")
    assert (p.returncode, p.stderr) == (
        2,
        "rdbscan: error: --set: hash-max-listpack-entries must be an integer, not 'many'\n",
    )
    assert not db.exists() and os.listdir(tmp_path) == []


def test_a_dump_id_the_loaded_dumps_do_not_have_is_said(tmp_path):
    """`report a.rdb b.rdb --dump-id 5`: the two dumps are dumps 1 and 2; the run said nothing
    and exited 4 (a damaged dump) where the dumps were whole. Now one line naming the dumps
    loaded, exit 6 (EXIT_INPUT, as for a database without that dump, whose words a --database
    gets); `schema` the same."""
    for command in (["report", SAMPLE, OTHER], ["schema", SAMPLE, OTHER]):
        p = run_cli(*command, "--dump-id", "5", "-q")
        assert (p.returncode, p.stdout, p.stderr) == (
            6,
            "",
            "rdbscan: error: --dump-id 5: no dump 5 among the dumps loaded (dump 1: "
            "redis-7.4.1.rdb, dump 2: redis-6.2.16.rdb)\n",
        )
    db = tmp_path / "x.duckdb"
    p = run_cli("report", SAMPLE, "--database", db, "--dump-id", "3", "-q", *OVERVIEW)
    assert (p.returncode, p.stderr) == (
        6,
        f"rdbscan: error: {db}: holds no dump 3 (its dumps: 1)\n",  # as `report {db}` says
    )
    assert _q(db, "SELECT count(*) FROM keys") == [(584,)]  # the database asked for is kept
    p = run_cli("report", SAMPLE, OTHER, "--dump-id", "2", "-q", "-f", "json", *OVERVIEW)
    assert p.returncode == 0 and json.loads(p.stdout)["overview"]["keys"] == 561
