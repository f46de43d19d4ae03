"""`rdbscan diff` and `rdbscan trend` as HTML (--format html, --html FILE): one self-contained
page each, the verdict first, SVG charts whose bars and lines carry the figures of the JSON (which
tests/test_diff.py checks against the scripted changes of tests/fixtures/diff), names from the
dump escaped, and a headless Chromium that loads the pages without a console message or a
request (RDBSCAN_REQUIRE_BROWSER=1 makes that test mandatory, as in test_html_report.py)."""

from __future__ import annotations

import collections
import html
import json
import re

import pytest
import rdbwriter as W
from common import run_cli
from test_diff import FIX, TRUTH, expected_changes, family, truth
from test_html_report import _FETCHABLE, CHROMIUM, _browser

from rdbscan.db.load import load
from rdbscan.reports.format import fmt_bytes

SPAN = 580 - 190 - 190 - 10  # the bar charts' bar area (html.pair_bars / stacked_bars)


def embedded(page: str, what: str) -> dict:
    m = re.search(
        rf'<script type="application/json" id="rdbscan-{what}">(.*?)</script>', page, re.S
    )
    assert m, what
    return json.loads(m.group(1))


def figure(page: str, caption: str) -> str:
    """The chart box whose caption is `caption` (escaped as the page writes it)."""
    m = re.search(
        r'<figure class="box"><figcaption>' + re.escape(html.escape(caption)) + r"</figcaption>"
        r"(.*?)</figure>",
        page,
        re.S,
    )
    assert m, caption
    return m.group(1)


def rows(svg: str) -> list[tuple[str, str]]:
    """(row title, row svg) of each bar row: <g><title>LABEL: TEXT</title>...</g>."""
    return re.findall(r"<g><title>(.*?)</title>(.*?)</g>", svg, re.S)


def widths(row: str, cls: str) -> float:
    return float(re.search(rf'<rect class="{cls}" x="[\d.]+" y="[\d.]+" width="([\d.]+)"', row)[1])


def self_contained(page: str) -> None:
    assert "http://" not in page and "https://" not in page
    assert not _FETCHABLE.search(page)
    assert page.count("<script") == 2 and "<link" not in page and "<img" not in page


@pytest.fixture(scope="module")
def pair_dbs(tmp_path_factory):
    d = tmp_path_factory.mktemp("dbs")
    load([str(FIX / "old.rdb")], str(d / "old.duckdb"))
    load([str(FIX / "new.rdb")], str(d / "new.duckdb"))
    return d / "old.duckdb", d / "new.duckdb"


@pytest.fixture(scope="module")
def pair_page(pair_dbs, tmp_path_factory):
    out = tmp_path_factory.mktemp("page") / "diff.html"
    args = ("diff", *pair_dbs, "--top", "1000", "--fail-on", "growth=20%,lost-ttl=0")
    res = run_cli(*args, "-q", "--html", out, "-f", "json")
    assert res.exit_code == 3, res.output  # the checks fail; the page is written all the same
    return out.read_text(), json.loads(res.stdout)


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    db = tmp_path_factory.mktemp("history") / "history.duckdb"
    for snap in TRUTH["history"]["snapshots"]:
        res = run_cli("load", "-q", "--instance", "cache-1", FIX / snap["file"], "-o", db)
        assert res.exit_code == 0, res.output
    return db


# --- the diff page ----------------------------------------------------------------------------


def test_diff_page_is_self_contained_and_holds_the_json(pair_page):
    page, js = pair_page
    self_contained(page)
    data = embedded(page, "diff")
    for name in ("old", "new", "totals", "families", "keys", "ttl", "fail_on", "options"):
        assert data[name] == js[name], name


def test_diff_page_opens_with_the_verdict(pair_page):
    """The verdict comes before the charts and the sections: the failed checks first, then
    what needs a look, then the largest changes, with the counts of the scripted changes."""
    page, js = pair_page
    verdict = page.index('<section id="verdict">')
    assert verdict < page.index('<section id="charts">') < page.index('<section id="sections">')
    block = page[verdict : page.index('<section id="charts">')]
    t = js["totals"]["all"]
    assert "Verdict: memory +1.8 MiB (+1561.8%) to 1.9 MiB, keys +20 to 374" in block
    items = re.findall(r'<li class="finding (\w+)">(.*?)</li>', block, re.S)
    sev = [s for s, _ in items]
    assert sev == sorted(sev, key=["critical", "warning", "info"].index)
    assert sev[:2] == ["critical", "critical"]  # growth and lost-ttl
    assert "--fail-on growth failed" in items[0][1] and "--fail-on lost-ttl failed" in items[1][1]
    old, new, steps = truth("pair")
    kinds = collections.Counter(expected_changes(old, new, steps).values())
    unchanged = len(old.rows.keys() & new.rows.keys()) - kinds["changed"]
    line = (
        f"{kinds['added']} keys added, {kinds['removed']} removed, {kinds['changed']} changed, "
        f"{unchanged} unchanged"
    )
    assert any(line in text for _, text in items)
    lost = [k for k in old.rows.keys() & new.rows.keys() if old.rows[k][3] and not new.rows[k][3]]
    assert any(f"{len(lost)} keys lost their expiry" in text for _, text in items)
    assert t["new_keys"] == len(new.rows) and t["old_keys"] == len(old.rows)


def test_diff_charts_carry_the_figures(pair_page):
    page, js = pair_page
    fams = js["families"]["items"]
    # memory by family, old and new: one row per family, bars proportional to the bytes
    bars = rows(figure(page, "Memory by family, old and new (the largest changes)"))
    assert [html.unescape(t).rsplit(": ", 1)[0] for t, _ in bars] == [f["pattern"] for f in fams]
    top = max(max(f["old_memory_bytes"], f["new_memory_bytes"]) for f in fams)
    for (_, row), f in zip(bars, fams):
        for cls in ("old", "new"):
            v = f[f"{cls}_memory_bytes"]
            assert widths(row, cls) == pytest.approx(max(1.0, SPAN * v / top) if v else 0, abs=0.06)
    # growth per family: grows to the right of the zero line, shrinks to the left
    growth = rows(figure(page, "Growth of memory per family"))
    zero = float(re.search(r'<line x1="([\d.]+)"', figure(page, "Growth of memory per family"))[1])
    for (title, row), f in zip(growth, fams):
        x, w = (
            float(v)
            for v in re.search(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', row).groups()
        )
        if f["delta_memory_bytes"] > 0:
            assert x == pytest.approx(zero, abs=0.06) and 'fill="#e15759"' in row
        elif f["delta_memory_bytes"] < 0:
            assert x + w == pytest.approx(zero, abs=0.11) and 'fill="#59a14f"' in row
        if f["status"] == "vanished":
            assert html.unescape(title).endswith("(vanished)")
    # keys added, removed and changed per family: the scripted changes, family by family
    old, new, steps = truth("pair")
    per = collections.defaultdict(collections.Counter)
    for (_db, key), kind in expected_changes(old, new, steps).items():
        per[family(key)][kind] += 1
    stacked = figure(page, "Keys added, removed and changed per family")
    seen = {}
    for title, row in rows(stacked):
        label = html.unescape(title).rsplit(": ", 1)[0]
        seen[label] = {
            kind: int(n.replace(",", ""))
            for n, kind in re.findall(
                r"<title>[^<]*: ([\d,]+) (added|removed|changed)</title>", row
            )
        }
    assert seen == {
        fam: {k: n for k, n in c.items() if n} for fam, c in per.items() if any(c.values())
    }
    # memory by type and the TTL distribution: old and new of every row
    types = rows(figure(page, "Memory by type, old and new"))
    assert [html.unescape(t).split(": ")[0] for t, _ in types] == [
        r["name"] for r in js["totals"]["by_type"]
    ]
    ttl = rows(figure(page, "Remaining TTL at each snapshot (keys)"))
    assert [html.unescape(t) for t, _ in ttl] == [
        f"{r['bucket']}: {r['old_keys']:,} → {r['new_keys']:,} "
        + (f"({r['delta_keys']:+,})" if r["delta_keys"] else "(0)")
        for r in js["ttl"]["distribution"]
    ]


def test_diff_format_html_and_output_files(pair_dbs, tmp_path):
    # --format html: the page on stdout, or to -o FILE.html
    res = run_cli("diff", *pair_dbs, "-q", "--format", "html")
    assert res.exit_code == 0 and res.stdout.startswith("<!DOCTYPE html>")
    out = tmp_path / "d.html"
    assert run_cli("diff", *pair_dbs, "-q", "--format", "html", "-o", out).exit_code == 0
    assert embedded(out.read_text(), "diff")["keys"] == embedded(res.stdout, "diff")["keys"]
    # a file rdbscan did not write is refused before any work (from dumps: nothing loaded)
    mine = tmp_path / "notes.html"
    mine.write_text("<html>my notes</html>")
    res = run_cli("diff", FIX / "old.rdb", FIX / "new.rdb", "--html", mine)
    assert (res.exit_code, res.output) == (
        7,
        f"rdbscan: error: {mine}: exists and is not a report rdbscan wrote; not overwritten\n",
    )
    assert mine.read_text() == "<html>my notes</html>"
    res = run_cli("diff", *pair_dbs, "-q", "--html", tmp_path / "missing" / "d.html")
    assert res.exit_code == 7 and "its directory does not exist" in res.output
    # a page it wrote is replaced; --html goes with any --format
    out.write_text(out.read_text().replace('"added":', '"stale":'))
    res = run_cli("diff", *pair_dbs, "-q", "--html", out, "-f", "markdown")
    assert res.exit_code == 0 and res.stdout.startswith("# rdbscan diff\n")
    assert '"stale":' not in out.read_text() and embedded(out.read_text(), "diff")["keys"]


def test_diff_text_opens_with_the_verdict(pair_dbs):
    out = run_cli("diff", *pair_dbs, "--fail-on", "new-big-keys").stdout
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert lines[0].startswith("Verdict: memory +1.8 MiB (+1561.8%) to 1.9 MiB, keys +20 to 374")
    assert lines[1].startswith("CRIT --fail-on new-big-keys failed: 2 keys (threshold 0)")
    assert out.index("Verdict:") < out.index("Snapshots ─")
    md = run_cli("diff", *pair_dbs, "-f", "markdown").stdout
    assert md.startswith("# rdbscan diff\n\n## Verdict: memory +1.8 MiB")


# --- names from the dump ----------------------------------------------------------------------

EVIL = "<script>alert(1)</script>"
IMG = '<img src=x onerror="alert(2)">'


def _dump(values: dict) -> bytes:
    body = b"\xfe\x00" + b"".join(W.key(0, k, W.string(v)) for k, v in values.items())
    return W.rdb(body, version=11, aux={"redis-ver": "7.2.4", "ctime": "1700000000"})


def test_names_from_the_dump_are_escaped(tmp_path):
    old = {f"{EVIL}:{i}".encode(): b"v" for i in range(3)}
    new = {f"{EVIL}:{i}".encode(): b"v" * 100 for i in range(4)}
    new[IMG.encode()] = b"x" * 20000  # a new big key, named in the verdict and the tables
    (tmp_path / "old.rdb").write_bytes(_dump(old))
    (tmp_path / "new.rdb").write_bytes(_dump(new))
    out = tmp_path / "d.html"
    res = run_cli("diff", tmp_path / "old.rdb", tmp_path / "new.rdb", "-q", "--html", out)
    assert res.exit_code == 0, res.output
    page = out.read_text()
    self_contained(page)
    assert "<script>alert" not in page and "<img" not in page and 'alert(2)">' not in page
    assert html.escape(f"{EVIL}:{{id}}") in page and html.escape(IMG) in page
    data = embedded(page, "diff")
    assert {f["pattern"] for f in data["families"]["items"]} == {f"{EVIL}:{{id}}", IMG}
    assert [b["key"] for b in data["keys"]["big_keys"]["items"]] == [IMG]


# --- the trend page ---------------------------------------------------------------------------


@pytest.mark.slow
def test_trend_page_draws_each_family_over_the_snapshots(history, tmp_path):
    out = tmp_path / "t.html"
    res = run_cli("trend", history, "--html", out, "-f", "json")
    assert res.exit_code == 0, res.output
    page = out.read_text()
    self_contained(page)
    js = json.loads(res.stdout)
    data = embedded(page, "trend")
    assert data["instances"] == js["instances"]
    assert page.index('<section id="verdict">') < page.index('<section id="charts">')
    assert "Trend: 1 instance, 4 snapshots" in page
    snaps = TRUTH["history"]["snapshots"]
    # keys by family: one line per family, one point per snapshot, the scripted counts
    svg = figure(page, "cache-1: keys by family per snapshot")
    series = re.findall(r'<g class="series"><title>(.*?)</title>(.*?)</g>', svg, re.S)
    assert [html.unescape(n) for n, _ in series] == [
        f["pattern"] for f in js["instances"][0]["families"]
    ]
    assert {n for n, _ in series} == set(snaps[0]["families"])
    top = max(n for s in snaps for n in s["families"].values())
    for name, body in series:
        counts = [
            int(v.replace(",", "")) for v in re.findall(r"<title>[^<]*: ([\d,]+)</title>", body)
        ]
        assert counts == [s["families"][html.unescape(name)] for s in snaps]
        # the line's points are the counts on the chart's scale (plot height 234 px, y from 10)
        [points] = re.findall(r'<polyline [^>]*points="([^"]*)"', body)
        ys = [float(p.split(",")[1]) for p in points.split()]
        assert ys == pytest.approx([10 + 234 - n / top * 234 for n in counts], abs=0.06)
    # memory per snapshot: the totals of the JSON; --format html alone writes the page to stdout
    mem = figure(page, "cache-1: memory and keys per snapshot")
    assert re.findall(r"memory \(estimate\) at #\d+ [^<]*?\d\d:\d\d: ([^<]*)</title>", mem) == [
        fmt_bytes(s["memory_bytes"]) for s in js["instances"][0]["snapshots"]
    ]
    res = run_cli("trend", history, "--format", "html")
    assert res.exit_code == 0 and embedded(res.stdout, "trend")["instances"] == js["instances"]


# --- in a real browser ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(
    not CHROMIUM and __import__("os").environ.get("RDBSCAN_REQUIRE_BROWSER") != "1",
    reason="no chromium (apt-get install chromium); .ci/run installs it",
)
@pytest.mark.parametrize("what", ["diff", "trend"])
def test_pages_in_headless_chromium(what, pair_dbs, history, tmp_path):
    assert CHROMIUM, "RDBSCAN_REQUIRE_BROWSER=1 but no chromium on PATH"
    out = tmp_path / f"{what}.html"
    args = ("diff", *pair_dbs, "-q") if what == "diff" else ("trend", history)
    assert run_cli(*args, "--html", out).exit_code == 0
    page = out.read_text()
    res = _browser(out.as_uri(), tmp_path, "--dump-dom")
    assert res.returncode == 0, res.stderr[-2000:]
    assert [ln for ln in res.stderr.splitlines() if ":CONSOLE" in ln] == []
    dom = res.stdout
    # the browser built every chart and table of the page
    assert dom.count("<svg") == page.count("<svg") >= 4
    assert dom.count('<table class="sortable"') == page.count('<table class="sortable"') >= 2
    urls = set(re.findall(r'"url":"([^"]*)"', (tmp_path / "net.json").read_text()))
    own = re.compile(r"^https?://([a-z0-9-]+\.)*(google\.com|gstatic\.com|googleapis\.com)/")
    assert {
        u
        for u in urls
        if not u.startswith(("file:", "data:", "about:", "chrome")) and not own.match(u)
    } == set()
    shot = tmp_path / "p.png"
    res = _browser(out.as_uri(), tmp_path, f"--screenshot={shot}", "--window-size=1300,2000")
    assert res.returncode == 0 and shot.stat().st_size > 20_000
