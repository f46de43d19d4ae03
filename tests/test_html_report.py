"""The verdict first (findings) and the self-contained HTML report.

Findings are checked against the manifests (which keys are big, which are compact candidates);
the HTML against the JSON report of the same database, for references a browser would fetch, and
in a real headless Chromium (Debian's `chromium`; `.ci/run` installs it and sets
RDBSCAN_REQUIRE_BROWSER=1 so that the browser test cannot be skipped there).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest
from common import run_cli
from report_truth import FIXTURES, big_key_rules, manifest

from rdbscan.reports import report as rpt
from rdbscan.reports.document import table
from rdbscan.reports.engine.database import open_database
from rdbscan.reports.format import fmt_bytes
from rdbscan.reports.html.page import blocks_html, esc
from rdbscan.reports.report.html import render_html

SAMPLE = "redis-7.4.1/small"  # the same bytes as sample_dumps/redis-7.4.1.rdb
LFU = "redis-7.0.15/variants/lfu"
LRU = "redis-7.0.15/variants/lru"
CLUSTER = "redis-7.4.1/variants/cluster"


@pytest.fixture(scope="module")
def dbs(loaded):
    return {rel: loaded(rel) for rel in (SAMPLE, LFU, LRU, CLUSTER)}


def _report(db, **kw):
    con = open_database(db)
    try:
        return rpt.build_report(con, rpt.ReportOptions(**kw), charts=True)
    finally:
        con.close()


# --- findings ---------------------------------------------------------------------------------


def test_findings_contract_and_big_keys_against_the_manifest(dbs):
    m = manifest(SAMPLE)
    rep = _report(dbs[SAMPLE])
    assert list(rep)[:4] == ["rdbscan_report", "generated_at", "options", "findings"]
    found = rep["findings"]
    assert 0 < len(found) <= 10
    for f in found:
        assert set(f) == {"id", "severity", "section", "memory_bytes", "keys", "message", "advice"}
        assert f["severity"] in ("critical", "warning", "info")
    order = [{"critical": 0, "warning": 1, "info": 2}[f["severity"]] for f in found]
    assert order == sorted(order)
    # big keys: the keys the manifest says are over a threshold, and their memory in `keys`
    big = [k for k in m.keys if big_key_rules(k)]
    critical = [k for k in big if any(r.endswith("-critical") for r in big_key_rules(k))]
    assert not critical
    names = [k.text for k in big]
    con = duckdb.connect(dbs[SAMPLE], read_only=True)
    mem = con.execute(
        "SELECT sum(memory_bytes) FROM keys WHERE key IN (SELECT unnest(?))", [names]
    ).fetchone()[0]
    con.close()
    [f] = [f for f in found if f["id"] == "big-keys"]
    assert (f["keys"], f["memory_bytes"]) == (len(big), mem)
    assert f["message"].startswith(f"{len(big)} big keys ")
    assert not [f for f in found if f["id"] == "big-keys-critical"]


def test_critical_big_keys_come_first(dbs):
    """Lower the critical threshold so that the sample has critical keys: they lead the list."""
    m = manifest(SAMPLE)
    rep = _report(dbs[SAMPLE], big_keys={"collection_critical_length": 5000})
    crit = [
        k
        for k in m.keys
        if big_key_rules(k, coll_critical=5000) & {"big-collection-critical", "big-string-critical"}
    ]
    assert crit
    first = rep["findings"][0]
    assert first["id"] == "big-keys-critical" and first["severity"] == "critical"
    assert first["keys"] == len(crit) == rep["big_keys"]["critical"]
    assert first["memory_bytes"] == rep["big_keys"]["critical_memory_bytes"]


@pytest.mark.slow
def test_cold_findings_from_lfu_and_lru_data(dbs):
    rep = _report(dbs[LFU], max_freq=0)
    m = manifest(LFU)
    cold = [k for k in m.keys if k.lfu_freq is not None and k.lfu_freq <= 0]
    [f] = [f for f in rep["findings"] if f["id"] == "cold-keys"] or [None]
    if cold:
        assert f["keys"] == len(cold)
    else:
        assert f is None
    assert sum(r["keys"] for r in rep["charts"]["lfu"]) == sum(
        1 for k in m.keys if k.lfu_freq is not None
    )
    rep = _report(dbs[LRU])
    m = manifest(LRU)
    assert sum(r["keys"] for r in rep["charts"]["idle"]) == sum(
        1 for k in m.keys if k.lru_idle_s is not None
    )


@pytest.mark.slow
def test_text_report_opens_with_the_findings_in_25_lines(tmp_path):
    """An 80x25 terminal shows the summary line and every finding before anything else."""
    dump = FIXTURES / SAMPLE / "dump.rdb"
    res = run_cli("report", dump, "-q", env={"COLUMNS": "80", "LINES": "25"})
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    first = [ln for ln in lines if ln.strip()][0]
    assert first.startswith("Findings: redis 7.4.1, 584 keys")
    json_res = run_cli("report", dump, "-q", "--format", "json")
    assert json_res.exit_code == 0, json_res.stderr
    rep = json.loads(json_res.stdout)
    overview = next(i for i, ln in enumerate(lines) if ln.startswith("Overview"))
    assert overview <= 25
    block = " ".join(" ".join(ln.split()) for ln in lines[:overview])
    for f in rep["findings"]:
        assert " ".join(f["message"].split()) in block
    assert all(len(ln.rstrip()) <= 80 for ln in lines[:overview])


def test_empty_sections_print_one_line(dbs):
    rep = _report(dbs[SAMPLE])
    from rdbscan.reports.report.render import document

    blocks = document(rep)
    slots = blocks.index(
        next(b for b in blocks if b.kind == "section" and b.text == "Cluster slots")
    )
    # the sample is standalone but has hashtags: the hashtag table stays
    assert rep["slots"]["hashtags"]
    assert any(b.kind == "table" for b in blocks[slots + 1 : slots + 6])
    # a report with no streams: one line
    rep["streams"] = {"items": [], "hash_field_ttl": [], "advice": []}
    rep["slots"] = {**rep["slots"], "hashtags": [], "announced_slots": 0}
    blocks = document(rep)
    for title, text in (
        ("Streams and hash field TTLs", "No streams and no hashes with field TTLs."),
        ("Cluster slots", "Standalone dump: its 584 keys would use"),
    ):
        i = blocks.index(next(b for b in blocks if b.kind == "section" and b.text == title))
        nxt = blocks[i + 1 :]
        body = nxt[: next((j for j, b in enumerate(nxt) if b.kind == "section"), len(nxt))]
        assert len(body) == 1 and body[0].kind == "note" and body[0].text.startswith(text)


# --- the HTML file ----------------------------------------------------------------------------

_FETCHABLE = re.compile(
    r"""(?:src|href|action|poster|data)\s*=\s*["']?\s*(?:https?:)?//|url\(|@import""", re.I
)


def _embedded(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="rdbscan-report">(.*?)</script>', page, re.S)
    return json.loads(m.group(1))


@pytest.mark.slow
@pytest.mark.parametrize("rel", [SAMPLE, CLUSTER, LFU])
def test_html_is_self_contained_and_holds_the_json_report(dbs, rel, tmp_path):
    out = tmp_path / "r.html"
    res = run_cli("report", dbs[rel], "-q", "--format", "html", "-o", out)
    assert res.exit_code == 0, res.output
    page = out.read_text()
    assert "http://" not in page and "https://" not in page
    assert not _FETCHABLE.search(page)
    assert page.count("<script") == 2 and "<link" not in page and "<img" not in page
    data = _embedded(page)
    js = json.loads(run_cli("report", dbs[rel], "-q", "--format", "json").stdout)
    for name in rpt.SECTION_NAMES + ("findings",):
        assert data[name] == js[name], name
    # the charts: the family tree's first level adds up to the whole keyspace
    tree = data["charts"]["family_tree"]
    assert sum(n["keys"] for n in tree if n["depth"] == 1) == js["overview"]["keys"]
    assert sum(n["memory_bytes"] for n in tree if n["depth"] == 1) == js["overview"]["memory_bytes"]
    for n in tree:
        kids = [c for c in tree if c["parent"] == n["prefix"] and c["depth"] == n["depth"] + 1]
        if kids:
            assert sum(c["keys"] for c in kids) == n["keys"], n["prefix"]
    slots = data["charts"]["slots"]
    assert sum(s["keys"] for s in slots) == js["overview"]["keys"]
    assert max(s["keys"] for s in slots) == js["slots"]["max_keys_in_slot"]
    for f in js["findings"]:
        assert esc(f["message"]) in page


def test_family_tree_keeps_the_largest_children_and_folds_the_rest(tmp_path):
    """The treemap's tree over families whose truth is known: thirty one-key families
    `rl:10-0-0-N` (hyphens, so not one `{ip}` family; value N bytes long, so memory grows with
    N) and `app:{id}:a`, `app:{id}:b` (three keys each, larger values), with two children kept per node: `rl` keeps its two largest
    families and folds the 28 others into `(other)`; `app` keeps `app:{id}`, which keeps both of
    its children (no `(other)`); the root has two nodes, so no `(other)` either."""
    import rdbwriter as W

    from rdbscan.db.load import load
    from rdbscan.reports.engine import querylib, relations

    body = b"".join(W.key(0, f"rl:10-0-0-{n}", W.string("v" * n)) for n in range(1, 31))
    body += b"".join(W.key(0, f"app:{i}:{x}", W.string("w" * 200)) for i in range(3) for x in "ab")
    dump = tmp_path / "t.rdb"
    dump.write_bytes(W.rdb(b"\xfe\x00" + body))
    db = str(tmp_path / "t.duckdb")
    load([str(dump)], db)
    con = open_database(db)
    try:
        values = {"dump_id": 0, "delimiters": ":", "children": 2}
        q = querylib.get_query("chart_family_tree")
        relations.prepare(con, values, needs=relations.relations_used(q))
        tree = querylib.run_dicts(con, q, values)
        memory = dict(con.execute("SELECT key, memory_bytes FROM keys").fetchall())
    finally:
        con.close()
    nodes = {(n["depth"], n["parent"], n["prefix"]): n["keys"] for n in tree}
    assert nodes == {
        (1, None, "app"): 6,
        (1, None, "rl"): 30,
        (2, "app", "app:{id}"): 6,
        (2, "rl", "rl:10-0-0-30"): 1,
        (2, "rl", "rl:10-0-0-29"): 1,
        (2, "rl", "(other)"): 28,
        (3, "app:{id}", "app:{id}:a"): 3,
        (3, "app:{id}", "app:{id}:b"): 3,
    }
    other = next(n for n in tree if n["prefix"] == "(other)")
    assert other["memory_bytes"] == sum(memory[f"rl:10-0-0-{n}"] for n in range(1, 29))


def test_html_names_from_the_dump_are_escaped(dbs):
    """A path and a finding's text (names from the dump) in a whole report (the renderers read
    every field its type requires) are escaped in the page and kept in its embedded data."""
    rep = _report(dbs[SAMPLE], sections=("overview",))
    rep["overview"]["dumps"][0]["path"] = "<b>x</b>"
    rep["findings"] = [
        {
            "id": "x",
            "severity": "info",
            "section": "overview",
            "memory_bytes": 1,
            "keys": 1,
            "message": "key </script><script>alert(1)</script>",
            "advice": "a",
        }
    ]
    page = render_html(rep)
    assert "<script>alert(1)" not in page and "<b>x</b>" not in page
    assert _embedded(page)["findings"][0]["message"] == "key </script><script>alert(1)</script>"


@pytest.mark.slow
def test_html_never_overwrites_a_file_it_did_not_write(dbs, tmp_path):
    mine = tmp_path / "notes.html"
    mine.write_text("<html>my notes</html>")
    res = run_cli("report", dbs[SAMPLE], "-q", "--html", mine)
    assert (res.exit_code, res.output) == (
        7,
        f"rdbscan: error: {mine}: exists and is not a report rdbscan wrote; not overwritten\n",
    )
    assert mine.read_text() == "<html>my notes</html>"
    ours = tmp_path / "r.html"
    assert run_cli("report", dbs[SAMPLE], "-q", "--html", ours).exit_code == 0
    first = ours.read_text()
    assert run_cli("report", dbs[SAMPLE], "-q", "--html", ours, "--format", "json").exit_code == 0
    assert _embedded(ours.read_text())["overview"] == _embedded(first)["overview"]


# --- in a real browser ------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _browser(url: str, tmp_path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            # no network: every host resolves to nothing and any proxy request goes to a closed port
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--proxy-server=127.0.0.1:9",
            f"--log-net-log={tmp_path / 'net.json'}",
            *extra,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(
    not CHROMIUM and os.environ.get("RDBSCAN_REQUIRE_BROWSER") != "1",
    reason="no chromium (apt-get install chromium); .ci/run installs it",
)
@pytest.mark.parametrize("rel", [SAMPLE, CLUSTER])
def test_html_in_headless_chromium(dbs, rel, tmp_path):
    assert CHROMIUM, "RDBSCAN_REQUIRE_BROWSER=1 but no chromium on PATH"
    out = tmp_path / "r.html"
    assert run_cli("report", dbs[rel], "-q", "--html", out).exit_code == 0
    data = _embedded(out.read_text())
    res = _browser(out.as_uri(), tmp_path, "--dump-dom")
    assert res.returncode == 0, res.stderr[-2000:]
    console = [ln for ln in res.stderr.splitlines() if ":CONSOLE" in ln]
    assert console == []
    dom = res.stdout
    # the script ran: one treemap block per first-level family node, the slot legend filled in
    first = [n for n in data["charts"]["family_tree"] if n["depth"] == 1 and n["memory_bytes"] > 0]
    assert len(re.findall(r'class="tm(?: drill)?"', dom)) == len(first)
    # each block names its family, memory and share of all memory without hovering
    total = sum(n["memory_bytes"] for n in first)
    for n in first:
        label = f'<b>{esc(n["prefix"])}</b><span class="tmv">{fmt_bytes(n["memory_bytes"])} · '
        assert label + f"{n['memory_bytes'] / total * 100:.1f}%</span>" in dom, n["prefix"]
    # the slot heat map for the cluster node only
    if rel == CLUSTER:
        assert f"max {data['slots']['max_keys_in_slot']:,} keys in one slot" in dom
    else:
        assert 'id="slotmap"' not in dom and data["slots"]["announced_slots"] == 0
    # the table of contents: every link's target is in the page the script left
    for target in re.findall(r'<nav class="toc".*?</nav>', dom, re.S)[0].split('href="#')[1:]:
        assert f'id="{target.split(chr(34))[0]}"' in dom
    # nothing but the file itself was requested (the browser's own calls home are not the page's)
    urls = set(re.findall(r'"url":"([^"]*)"', (tmp_path / "net.json").read_text()))
    own = re.compile(r"^https?://([a-z0-9-]+\.)*(google\.com|gstatic\.com|googleapis\.com)/")
    assert {
        u
        for u in urls
        if not u.startswith(("file:", "data:", "about:", "chrome")) and not own.match(u)
    } == set()
    shot = tmp_path / "r.png"
    res = _browser(out.as_uri(), tmp_path, f"--screenshot={shot}", "--window-size=1300,2000")
    assert res.returncode == 0 and shot.stat().st_size > 20_000


# --- read at a glance: labels, axes, charts that apply, contents ------------------------------


def _values_written(svg: str) -> list[str]:
    return re.findall(r'<text class="value"[^>]*>([^<]*)</text>', svg)


def test_column_values_are_written_on_the_bars():
    from rdbscan.reports.html.svg import columns

    rows = [("a", 6, "6 keys"), ("b", 0, "none"), ("c", 1234, "1,234 keys")]
    assert _values_written(columns("t", rows)) == []  # only when asked
    wide = columns("t", rows, values=True)
    assert _values_written(wide) == ["6", "1,234"]  # a bar of 0 has no value written
    # 40 bars in 580 px are too narrow for their numbers: the five highest only
    narrow = columns("t", [(str(i), 1000 + i, "") for i in range(40)], values=True)
    assert _values_written(narrow) == ["1,035", "1,036", "1,037", "1,038", "1,039"]


@pytest.mark.slow
def test_html_labels_axes_contents_and_slot_map_only_for_a_cluster(dbs):
    pages = {}
    for rel in (SAMPLE, CLUSTER, LFU):
        report = _report(dbs[rel])
        pages[rel] = (report, render_html(report))
    # the slot heat map only for a dump that announces its slots (a cluster node)
    for rel, (report, page) in pages.items():
        assert ('id="slotmap"' in page) == bool(report["slots"]["announced_slots"]), rel
    assert pages[CLUSTER][0]["slots"]["announced_slots"] == 527
    assert pages[SAMPLE][0]["slots"]["announced_slots"] == 0
    report, page = pages[SAMPLE]
    # every link of the table of contents leads to an element of the page
    links = re.findall(r'<nav class="toc".*?</nav>', page, re.S)[0]
    targets = re.findall(r'href="#([^"]+)"', links)
    assert targets[:4] == ["verdict", "charts", "s-overview", "s-big-keys"]
    assert len(targets) == 2 + sum(1 for s in rpt.SECTION_NAMES if s in report and s != "schema")
    for t in targets:
        assert page.count(f'id="{t}"') == 1, t
    # the TTL bars carry their key counts (from the JSON report)
    ttl_chart = page[page.index('aria-label="TTL distribution"') :]
    ttl_chart = ttl_chart[: ttl_chart.index("</svg>")]
    assert _values_written(ttl_chart) == [
        f"{d['keys']:,}" for d in report["ttl"]["distribution"] if d["keys"]
    ]
    assert _values_written(ttl_chart) == ["6", "35", "11", "62", "470"]
    # the expiry timeline on a log axis: the 52 keys expiring within a week are apart from the 62
    # expiring in decades, each bar a power of ten of seconds a quarter wide
    timeline = report["charts"]["expiry_timeline"]
    assert sum(r["keys"] for r in timeline) == report["ttl"]["keys_with_ttl"] == 114
    assert sum(r["keys"] for r in timeline if r["bucket"] < 24) == 52  # under 11.6 days
    assert sum(r["keys"] for r in timeline if r["bucket"] >= 36) == 62  # over 31.7 years
    assert "log time axis" in page
    # the LFU counters are written on their bars
    report, page = pages[LFU]
    lfu = page[page.index('aria-label="LFU counter"') :]
    lfu = lfu[: lfu.index("</svg>")]
    counts = [r["keys"] for r in report["charts"]["lfu"]]
    assert len(counts) == 11  # bars wide enough for their numbers: every one written
    written = sorted(int(v.replace(",", "")) for v in _values_written(lfu))
    assert written == sorted(c for c in counts if c) and sum(written) == sum(counts)


@pytest.mark.slow
def test_many_dumps_fold_their_table_below_the_findings(dbs, tmp_path):
    """Up to OPEN_DUMPS_TABLE dumps the page opens with their table; over more, the table is
    folded into one line so that the findings (a line per dump) are on the first screen."""
    from rdbscan.db.load import load
    from rdbscan.reports.report.html import OPEN_DUMPS_TABLE

    one = render_html(_report(dbs[SAMPLE]))
    assert "<details><summary>The" not in one
    assert one.count('<table class="dumps">') == 1
    rels = (SAMPLE, LFU, LRU, CLUSTER, "redis-7.0.15/small")
    assert len(rels) == OPEN_DUMPS_TABLE + 1
    db = str(tmp_path / "five.duckdb")
    load([str(FIXTURES / rel / "dump.rdb") for rel in rels], db)
    page = render_html(_report(db))
    folded = (
        "<details><summary>The 5 dumps: server, RDB version, snapshot, keys, memory</summary>"
        '<table class="dumps">'
    )
    assert page.count(folded) == 1
    header = page[page.index("<header>") : page.index("</header>")]
    assert re.search(r'<p class="sub">generated [^<]* · 5 dumps · [\d,]+ keys · ', header)
    assert header.count("<tr><td>") == 5  # every dump still listed, one click away
    assert page.index("</header>") < page.index('<section id="verdict">')


def test_a_short_word_in_a_table_cell_is_never_broken():
    """Cells may break anywhere (a long key name must not widen its table), but one word of at
    most 24 characters keeps its line (`nw`): at 800 pixels `migrate`'s page cut "converts"
    after "convert", where the column's header ended."""
    key = "verylong:" + "z" * 40
    html = blocks_html(
        [
            table(
                "",
                ["record", "action", "keys", "what"],
                [["type 0 string", "converts", "309", key]],
                numeric=(2,),
            )
        ]
    )
    cells = re.findall(r"<td([^>]*)>([^<]*)</td>", html)
    assert cells == [
        ("", "type 0 string"),
        (' class="nw"', "converts"),
        (' class="num nw"', "309"),
        ("", key),
    ]
    css = (Path(__file__).parent.parent / "rdbscan/reports/html/assets/report.css").read_text()
    assert "td.nw { white-space: nowrap; }" in css and "overflow-wrap: anywhere" in css


# The widths read: 500 pixels (Chromium's narrowest window: a phone or half a laptop screen)
# and 800. The script writes, once the page has loaded, the page's width and every table that
# scrolls by itself into an attribute that --dump-dom shows.
_MEASURE = (
    "<script>window.addEventListener('load', function () {"
    " var wide = [];"
    " document.querySelectorAll('table').forEach(function (t) {"
    "  if (t.scrollWidth > t.clientWidth + 1) wide.push(t.className || 'table'); });"
    " document.body.setAttribute('data-measured', document.documentElement.scrollWidth + ' '"
    "  + document.documentElement.clientWidth + ' ' + wide.length); });</script></body>"
)


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(
    not CHROMIUM and os.environ.get("RDBSCAN_REQUIRE_BROWSER") != "1",
    reason="no chromium (apt-get install chromium); .ci/run installs it",
)
def test_no_page_is_wider_than_the_window(dbs, tmp_path):
    """The report's, the diff's and migrate's pages at 500 and 800 pixels: the page never
    scrolls sideways (the diff's family table made it 858 pixels wide at 800); a wide table
    scrolls by itself, a chart shrinks to the window, a long path wraps."""
    assert CHROMIUM, "RDBSCAN_REQUIRE_BROWSER=1 but no chromium on PATH"
    # dumps under a path longer than the window is wide: it is written in headings, lines and
    # the dumps' table (a checkout in a temporary directory made the diff page 495 wide at 500)
    where = tmp_path / ("a_directory_with_a_rather_long_name_" * 3) / "shards"
    where.mkdir(parents=True)
    for name in ("old.rdb", "new.rdb"):
        shutil.copyfile(FIXTURES / "diff" / name, where / name)
    dump = where / "a_rather_long_dump_file_name_for_the_first_shard.rdb"
    shutil.copyfile(manifest(SAMPLE).dump, dump)
    pages = {
        "report": ["report", dump, "-q", "-o"],
        "diff": ["diff", where / "old.rdb", where / "new.rdb", "-q", "-o"],
        "migrate": ["migrate", dump, "--to", "valkey-9.0", "-q", "-o"],
    }
    scrolled = {}
    for name, args in pages.items():
        out = tmp_path / f"{name}.html"
        assert run_cli(*args, out).exit_code == 0, name
        page = tmp_path / f"{name}-measured.html"
        page.write_text(out.read_text().replace("</body>", _MEASURE))
        for width in (500, 800):
            res = _browser(page.as_uri(), tmp_path, "--dump-dom", f"--window-size={width},2000")
            assert res.returncode == 0, res.stderr[-2000:]
            page_width, window, tables = map(
                int, re.search(r'data-measured="(\d+) (\d+) (\d+)"', res.stdout).groups()
            )
            assert window <= width and page_width == window, (name, width)
            scrolled[name, width] = tables
    # at 500 pixels the report's widest tables (the dumps, families, ...) scroll by themselves
    assert scrolled["report", 500] > 0 and scrolled["report", 800] == 0
    assert scrolled["diff", 800] > 0  # the one that made the page scroll before
