"""The library API the command line wraps (rdbscan/api.py, rdbscan/reports/report/run.py): load then
report is one call, and it gives what `rdbscan report` prints and the exit code it exits with."""

from __future__ import annotations

import json
import os
import tempfile

import pytest
from common import run_cli
from report_truth import manifest

import rdbscan
from rdbscan.errors import EXIT_DAMAGED, EXIT_FINDINGS, EXIT_INPUT, EXIT_USAGE, CommandError
from rdbscan.reports.report import ReportOptions, parse_fail_on
from rdbscan.reports.report.render import render_json
from rdbscan.reports.report.run import run_report

REL = "redis-7.0.15/small"
TIMED = ("parse_seconds", "bytes_per_second", "keys_per_second")


def _steady(doc: dict) -> dict:
    """The report without what changes from run to run (when it ran, how long it took)."""
    doc = json.loads(render_json(doc)) if not isinstance(doc, str) else json.loads(doc)
    doc.pop("report_seconds"), doc.pop("generated_at")
    for d in doc["overview"]["dumps"]:
        for k in TIMED:
            d.pop(k, None)
    for k in TIMED:
        doc["overview"].pop(k)
    return doc


@pytest.mark.slow
def test_report_of_a_dump_is_the_cli_json():
    dump = str(manifest(REL).dump)
    res = run_cli("report", dump, "-q", "-f", "json")
    assert res.exit_code == 0, res.output
    from_cli = _steady(res.stdout)
    from_api = _steady(rdbscan.report([dump]))
    assert from_api == from_cli
    assert from_api["overview"]["keys"] == len(manifest(REL).keys)
    assert _steady(rdbscan.report(dump)) == from_cli  # one path: a dump too


def test_report_of_a_database_and_of_its_dumps_agree(tmp_path):
    dump = str(manifest(REL).dump)
    db = str(tmp_path / "small.duckdb")
    options = ReportOptions(top=3, sections=("overview", "big_keys"))
    first = rdbscan.report([dump], options, output=db)  # loads into db and keeps it
    assert os.path.exists(db)
    again = rdbscan.report(db, options)  # the database: nothing loaded again
    assert _steady(again) == _steady(first)
    assert set(first) >= {"overview", "big_keys"} and "ttl" not in first
    res = run_cli(
        "report",
        db,
        "-q",
        "-f",
        "json",
        "--top",
        3,
        "--section",
        "overview",
        "--section",
        "big_keys",
    )
    assert _steady(res.stdout) == _steady(first)


def test_the_temporary_database_is_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    rdbscan.report([str(manifest(REL).dump)], ReportOptions(sections=("overview",)))
    assert os.listdir(tmp_path) == []


@pytest.mark.slow
def test_run_report_tells_the_load_and_decides_the_exit_code(tmp_path):
    dump = str(manifest(REL).dump)
    said: list[str] = []
    run = run_report([dump], say=said.append, fail_on=parse_fail_on("big-keys=0"))
    assert run.messages == said and len(said) == 1
    assert said[0].startswith(f"rdbscan: loaded {dump}: {len(manifest(REL).keys):,} keys in ")
    big = run.report["big_keys"]["keys"]
    assert big > 0  # so the check fails: exit 3, as `rdbscan report --fail-on big-keys=0`
    assert run.failed_checks() == [f"big-keys {big} > 0"]
    assert run.exit_code == EXIT_FINDINGS
    res = run_cli("report", dump, "-q", "-f", "json", "--fail-on", "big-keys=0")
    assert res.exit_code == run.exit_code


@pytest.mark.slow
def test_a_truncated_dump_reports_the_keys_read_and_exits_4(tmp_path):
    data = manifest(REL).dump.read_bytes()
    cut = tmp_path / "cut.rdb"
    cut.write_bytes(data[: len(data) * 2 // 3])
    run = run_report([str(cut)], quiet=True)
    assert run.exit_code == EXIT_DAMAGED
    assert run.report is not None and run.report["overview"]["complete"] is False
    assert 0 < run.report["overview"]["keys"] < len(manifest(REL).keys)
    assert any(m.startswith(f"rdbscan: error: {cut}") for m in run.messages)
    assert run_cli("report", cut, "-q", "-f", "json").exit_code == EXIT_DAMAGED


@pytest.mark.slow
def test_nothing_read_is_no_report_and_exit_4(tmp_path):
    junk = tmp_path / "junk.rdb"
    junk.write_bytes(b"not an rdb file at all")
    run = run_report([str(junk)])
    assert run.report is None and run.exit_code == EXIT_DAMAGED
    assert [m for m in run.messages if m.startswith("rdbscan: error: ")]
    with pytest.raises(CommandError) as e:
        rdbscan.report([str(junk)])
    assert e.value.code == EXIT_DAMAGED and str(junk) in e.value.message
    assert run_cli("report", junk, "-q").exit_code == EXIT_DAMAGED


def test_user_mistakes_are_command_errors(tmp_path):
    dump = str(manifest(REL).dump)
    with pytest.raises(CommandError) as e:
        rdbscan.report([str(tmp_path / "missing.rdb")])
    assert (e.value.code, e.value.message) == (
        EXIT_INPUT,
        f"{tmp_path / 'missing.rdb'}: No such file or directory",
    )
    with pytest.raises(CommandError) as e:
        rdbscan.report([dump], ReportOptions(settings={"no-such-setting": "1"}))
    assert e.value.code == EXIT_USAGE and "--set no-such-setting" in e.value.message


@pytest.mark.parametrize("name", ["x.json", "out.HTML", "report.prom"])
def test_a_database_is_never_written_under_a_reports_name(tmp_path, name):
    dump = str(manifest(REL).dump)
    target = tmp_path / name
    with pytest.raises(CommandError) as e:
        rdbscan.report([dump], output=str(target))
    assert (e.value.code, e.value.message) == (
        EXIT_USAGE,
        f"output {target}: a report's name, not a database's; give the database a name ending "
        ".duckdb",
    )
    with pytest.raises(CommandError) as e:
        rdbscan.load([dump], str(target))
    assert (e.value.code, e.value.message) == (
        EXIT_USAGE,
        f"db_path {target}: a report's name, not a database's; give the database a name ending "
        ".duckdb",
    )
    assert not target.exists() and not list(tmp_path.iterdir())


def test_one_path_is_one_dump_given_as_str_or_path(tmp_path):
    """rdbscan.load("dump.rdb", ...) loads that dump (a string is not a list of one-character
    names), and pathlib paths go where strings go: load, load_dataset and report."""
    dump = manifest(REL).dump
    keys = len(manifest(REL).keys)
    db = tmp_path / "one.duckdb"
    (result,) = rdbscan.load(str(dump), db)
    assert (result.path, result.keys, result.complete) == (str(dump), keys, True)
    assert rdbscan.report(db, ReportOptions(sections=("overview",)))["overview"]["keys"] == keys
    (again,) = rdbscan.load(dump, str(tmp_path / "two.duckdb"))
    assert again.keys == keys
    (part,) = rdbscan.load_dataset(dump, tmp_path / "dataset")
    assert part.keys == keys and (tmp_path / "dataset").is_dir()
    doc = rdbscan.report(dump, ReportOptions(sections=("overview",)), output=tmp_path / "r.duckdb")
    assert doc["overview"]["keys"] == keys and (tmp_path / "r.duckdb").exists()
