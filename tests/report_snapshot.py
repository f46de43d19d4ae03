"""Every report rdbscan draws, saved to files, to compare a change of the report code with the
code before it: the report of every bundled dump (tests/fixtures, sample_dumps) in JSON, text,
markdown and HTML, report options that change the layout (--section, --fail-on, --schema,
--rules, --top, several dumps), `diff`, `trend` and `schema`.

    python tests/report_snapshot.py save  [DIR]   # DIR/golden (default DIR: /tmp/report-golden)
    python tests/report_snapshot.py check [DIR]   # DIR/now, compared with DIR/golden
    python tests/report_snapshot.py quick [DIR]   # check, but only the samples' reports and
                                                  # the options (a minute, not five)

The dumps are loaded once, into DIR/dbs (kept between runs: the load's timings are in the
report), so both runs report on the same databases; times that change from run to run
(`generated_at`, `report_seconds`, ...) are blanked.  `check` lists the files that differ and
exits 1 if any does.  Not a test: it takes minutes (run it with `nice`).
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SAMPLES = ROOT / "sample_dumps"
FORMATS = ("json", "text", "markdown", "html")

# What changes from one run to the next, and what it becomes.
_VOLATILE = [
    (re.compile(r'("generated_at": ?)"[^"]*"'), r'\1"-"'),
    (re.compile(r'(generated_at = )"[^"]*"'), r'\1"-"'),
    (re.compile(r'("(?:report|diff|trend)_seconds": ?)[0-9.e-]+'), r"\g<1>0"),
    (re.compile(r"generated \d{4}-\d\d-\d\dT[0-9:+.]+"), "generated -"),
    (re.compile(r"(generated:? )\d{4}-\d\d-\d\d[T ][0-9:+.Z]+( UTC)?"), r"\1-"),
    (re.compile(r"/tmp/[^\s\"'<|)]*"), "/tmp/-"),  # temporary paths (schema --relations, ...)
]


def normalize(text: str) -> str:
    for pattern, repl in _VOLATILE:
        text = pattern.sub(repl, text)
    return text


def dumps() -> list[Path]:
    """Every bundled dump (the .rdb files), in a fixed order."""
    return sorted(FIXTURES.rglob("*.rdb")) + sorted(SAMPLES.glob("*.rdb"))


def slug(path: Path) -> str:
    rel = str(path.relative_to(ROOT))
    return re.sub(r"[^A-Za-z0-9._-]+", "_", rel) + "-" + hashlib.sha1(rel.encode()).hexdigest()[:6]


def _cli(*args: str) -> tuple[int, str, str]:
    from click.testing import CliRunner

    from rdbscan.cli.main import main

    res = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return res.exit_code, res.stdout, res.stderr


def _load(sources: list[Path], db: Path, *extra: str) -> None:
    if not db.exists():
        _cli("load", *map(str, sources), "-o", str(db), "-q", *extra)


def load_all(base: Path) -> dict[str, Path]:
    """The databases reported on: one per dump, then the multi-dump ones."""
    dbs = base / "dbs"
    dbs.mkdir(parents=True, exist_ok=True)
    out = {}
    for i, dump in enumerate(dumps()):
        db = dbs / f"{slug(dump)}.duckdb"
        _load([dump], db)
        out[slug(dump)] = db
        if i % 20 == 0:
            print(f"loaded {i} dumps", file=sys.stderr)
    _load(sorted(SAMPLES.glob("*.rdb")), dbs / "multi-samples.duckdb")
    out["multi-samples"] = dbs / "multi-samples.duckdb"
    diff = FIXTURES / "diff"
    _load([diff / "shard1-old.rdb", diff / "shard2-old.rdb"], dbs / "shards-old.duckdb")
    _load([diff / "shard1-new.rdb", diff / "shard2-new.rdb"], dbs / "shards-new.duckdb")
    history = dbs / "history.duckdb"
    if not history.exists():
        for n in range(1, 5):
            _cli(
                "load",
                str(diff / f"history-{n}.rdb"),
                "-o",
                str(history),
                "-q",
                "--instance",
                "cache-1",
            )
    return out


def _write(out: Path, name: str, text: str) -> None:
    (out / name).write_text(normalize(text), encoding="utf-8")


def _report_files(out: Path, name: str, db: Path) -> None:
    """The four formats of one database's report, from one build (as `rdbscan report` draws
    them: the HTML first, then the report without its charts)."""
    from rich.console import Console

    from rdbscan.reports.engine.database import open_database
    from rdbscan.reports.report import ReportOptions, build_report
    from rdbscan.reports.report.html import render_html
    from rdbscan.reports.report.render import render_json, render_markdown, render_text

    try:
        con = open_database(str(db))
    except Exception as e:  # noqa: BLE001 - a dump no database could hold
        _write(out, f"{name}.error", f"{type(e).__name__}: {e}\n")
        return
    try:
        report = build_report(con, ReportOptions(), charts=True)
    except Exception as e:  # noqa: BLE001
        _write(out, f"{name}.error", f"{type(e).__name__}: {e}\n")
        return
    finally:
        con.close()
    _write(out, f"{name}.html", render_html(report))
    report.pop("charts", None)
    _write(out, f"{name}.json", render_json(report))
    _write(out, f"{name}.md", render_markdown(report))
    buf = io.StringIO()
    render_text(report, Console(file=buf, width=140, color_system=None, force_terminal=False))
    _write(out, f"{name}.txt", buf.getvalue())
    buf = io.StringIO()
    render_text(report, Console(file=buf, width=100, color_system="truecolor", force_terminal=True))
    _write(out, f"{name}.ansi", buf.getvalue())


def _cli_files(out: Path, name: str, *args: str) -> None:
    code, stdout, stderr = _cli(*args)
    _write(
        out,
        name,
        f"$ rdbscan {' '.join(args)}\nexit {code}\n--- stderr\n{stderr}--- stdout\n{stdout}",
    )


def variants(out: Path, dbs: dict[str, Path], tmp: Path) -> None:
    """Report options that change the report, diff, trend and schema, through the command line."""
    sample = str(dbs[slug(SAMPLES / "redis-7.4.1.rdb")])
    values = str(dbs[slug(FIXTURES / "values" / "dump.rdb")])
    lfu = str(dbs[slug(FIXTURES / "values" / "lfu.rdb")])
    multi = str(dbs["multi-samples"])
    schema = tmp / "schema.toml"
    _cli("schema", sample, "-o", str(schema))
    rules = tmp / "rules.toml"
    rules.write_text(
        "[rules.uppercase]\nenabled = false\n\n[rules.max-length]\nmax_bytes = 100\n\n"
        "[big-keys]\ncollection_length = 500\n\n[fail-on]\nnaming = 1000000\n"
    )
    fail = "big-keys,big-keys-critical,no-ttl=10,no-ttl-share=30%,expired,naming,encodings"
    runs = {
        "section-ttl": [sample, "--section", "ttl"],
        "section-ttl-cold": [sample, "--section", "ttl", "--section", "cold"],
        "section-slots-overview": [sample, "--section", "slots", "--section", "overview"],
        "section-values": [values, "--section", "values"],
        "fail-on": [sample, "--fail-on", fail],
        "fail-on-pct": [sample, "--fail-on", "big-keys=5%,naming:uppercase=0,no-ttl-share=0.2"],
        "fail-on-section": [sample, "--fail-on", "no-ttl-share=50%", "--section", "overview"],
        "fail-on-bad": [sample, "--fail-on", "bogus"],
        "schema": [sample, "--schema", str(schema), "--fail-on", "schema,schema:undocumented=3"],
        "schema-values": [values, "--schema", str(schema)],
        "rules": [sample, "--rules", str(rules), "--top", "100"],
        "top3": [values, "--top", "3", "--delimiters", ":#"],
        "set": [sample, "--set", "hash-max-listpack-entries=1024", "--set", "min_keys=2"],
        "idle": [lfu, "--idle-days", "0"],
        "multi": [multi],
        "multi-dump2": [multi, "--dump-id", "2"],
    }
    for vname, args in runs.items():
        for fmt in FORMATS:
            _cli_files(out, f"report-{vname}.{fmt}", "report", *args, "-q", "--format", fmt)
    # --html next to another format: the HTML file, then the other format
    html = tmp / "report.html"
    _cli_files(
        out,
        "report-html-file.json",
        "report",
        sample,
        "-q",
        "--format",
        "json",
        "--html",
        str(html),
        "--fail-on",
        "naming",
    )
    _write(out, "report-html-file.html", html.read_text(encoding="utf-8"))
    diff = FIXTURES / "diff"
    held = out.parent / "dbs"
    history = str(held / "history.duckdb")
    pairs = {
        "pair": [str(dbs[slug(diff / "old.rdb")]), str(dbs[slug(diff / "new.rdb")])],
        "shards": [str(held / "shards-old.duckdb"), str(held / "shards-new.duckdb")],
        "history": [history],
        "history-from": [history, "--from", "1", "--to", "3"],
    }
    for pname, args in pairs.items():
        for fmt in FORMATS:
            _cli_files(out, f"diff-{pname}.{fmt}", "diff", *args, "--format", fmt)
    _cli_files(
        out,
        "diff-fail-on.text",
        "diff",
        *pairs["pair"],
        "--fail-on",
        "growth=1%,family-growth=1%,new-big-keys,lost-ttl=0",
    )
    _cli_files(out, "diff-top2.json", "diff", *pairs["pair"], "--top", "2", "--format", "json")
    for fmt in FORMATS:
        _cli_files(out, f"trend.{fmt}", "trend", history, "--format", fmt)
    _cli_files(out, "trend-top1.text", "trend", history, "--top", "1", "--from", "2")
    for src, sname in ((sample, "sample"), (values, "values"), (multi, "multi")):
        for fmt in ("toml", "markdown", "json"):
            _cli_files(out, f"schema-{sname}.{fmt}", "schema", src, "--format", fmt)
    _cli_files(
        out, "schema-relations.markdown", "schema", sample, "--relations", "--format", "markdown"
    )
    _cli_files(out, "queries.txt", "queries", "-v")
    _cli_files(out, "query-big_keys.txt", "query", sample, "big_keys", "--param", "top=3")
    _cli_files(out, "query-ttl_summary.txt", "query", sample, "ttl_summary")
    _cli_files(out, "report-help.txt", "report", "--help")


QUICK = ("sample_dumps", "values", "multi-samples", "redis-7.4.1_small")


def render_all(base: Path, which: str, quick: bool = False) -> Path:
    dbs = load_all(base)
    out = base / which
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    tmp = base / "tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    for i, (name, db) in enumerate(sorted(dbs.items())):
        if quick and not any(q in name for q in QUICK):
            continue
        _report_files(out, name, db)
        if i % 20 == 0:
            print(f"reported {i} of {len(dbs)}", file=sys.stderr)
    variants(out, dbs, tmp)
    return out


def compare(base: Path, quick: bool = False) -> list[str]:
    golden, now = base / "golden", base / "now"
    names = {p.name for p in now.iterdir()}
    if not quick:
        names |= {p.name for p in golden.iterdir()}
    return [
        n
        for n in sorted(names)
        if not (golden / n).exists()
        or not (now / n).exists()
        or (golden / n).read_bytes() != (now / n).read_bytes()
    ]


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("save", "check", "quick"):
        print(__doc__, file=sys.stderr)
        return 2
    base = Path(argv[1] if len(argv) > 1 else "/tmp/report-golden")
    os.environ.setdefault("COLUMNS", "140")
    if argv[0] == "save":
        out = render_all(base, "golden")
        print(f"{len(list(out.iterdir()))} files in {out}")
        return 0
    quick = argv[0] == "quick"
    out = render_all(base, "now", quick)
    differ = compare(base, quick)
    for n in differ:
        print(f"differs: {n}")
    print(f"{len(list(out.iterdir()))} files, {len(differ)} differ from {base / 'golden'}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
