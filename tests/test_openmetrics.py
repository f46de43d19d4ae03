"""`report --format openmetrics` (rdbscan/export/metrics.py, docs/export.md): read back by
prometheus_client's OpenMetrics parser and its Prometheus text parser, the figures are the
report's, and the family series add up to the whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rdbscan.cli.main import main
from rdbscan.export.metrics import render_openmetrics

om_parser = pytest.importorskip("prometheus_client.openmetrics.parser")
from prometheus_client.parser import text_string_to_metric_families as prom_families  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLE = str(FIXTURES / "redis-7.4.1" / "small" / "dump.rdb")
CLUSTER = [str(p) for p in sorted((FIXTURES / "redis-7.4.1" / "variants").glob("*/dump.rdb"))][:2]


def _samples(text: str) -> dict[str, list]:
    """{metric name: [(labels, value)]} as the OpenMetrics parser reads it."""
    out: dict[str, list] = {}
    for fam in om_parser.text_string_to_metric_families(text):
        assert fam.type == "gauge", fam.name
        for s in fam.samples:
            out.setdefault(s.name, []).append((s.labels, s.value))
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("om") / "r.duckdb")
    res = CliRunner().invoke(main, ["report", SAMPLE, "-o", db, "-q", "-f", "json"])
    report = json.loads(res.stdout)
    res = CliRunner().invoke(
        main, ["report", db, "-q", "-f", "openmetrics", "--metrics-instance", "cache-1"]
    )
    assert res.exit_code == 0, res.output
    return report, res.stdout


def test_the_parsers_read_it(run):
    report, text = run
    assert text.endswith("# EOF\n")
    om = _samples(text)
    prom = {f.name: f for f in prom_families(text)}
    assert len(om) > 20 and set(om) >= {"rdbscan_keys", "rdbscan_family_memory_bytes"}
    assert {f"{n}" for n in prom} >= {"rdbscan_keys", "rdbscan_family_memory_bytes"}
    for labels, _ in sum(om.values(), []):
        assert labels["rdb_instance"] == "cache-1" and labels["server"] == "redis 7.4.1"


def test_the_figures_are_the_reports(run):
    report, text = run
    om = _samples(text)
    ov = report["overview"]

    def one(name):
        (only,) = om[name]
        return only[1]

    assert one("rdbscan_keys") == ov["keys"] == 584
    assert one("rdbscan_memory_bytes") == ov["memory_bytes"]
    assert one("rdbscan_keys_with_ttl") == ov["keys_with_ttl"]
    assert one("rdbscan_memory_without_ttl_bytes") == report["ttl"]["memory_without_ttl"]
    assert one("rdbscan_used_memory_bytes") == ov["used_mem"]
    assert one("rdbscan_snapshot_timestamp_seconds") == ov["snapshot_ms"] / 1000
    assert one("rdbscan_complete") == 1
    big = dict((lab["severity"], v) for lab, v in om["rdbscan_big_keys"])
    assert big == {
        "critical": report["big_keys"]["critical"],
        "warning": report["big_keys"]["keys"] - report["big_keys"]["critical"],
    }
    findings = dict((lab["severity"], v) for lab, v in om["rdbscan_findings"])
    for sev in ("critical", "warning", "info"):
        assert findings[sev] == sum(1 for f in report["findings"] if f["severity"] == sev)
    assert sum(findings.values()) == len(report["findings"]) > 0
    (info,) = om["rdbscan_snapshot_info"]
    assert info[0]["snapshot"] == ov["snapshot_time"] and info[0]["filter"] == ""


def test_family_series_add_up_to_the_whole(run):
    report, text = run
    om = _samples(text)
    ov = report["overview"]
    for name, total in (
        ("rdbscan_family_keys", ov["keys"]),
        ("rdbscan_family_memory_bytes", ov["memory_bytes"]),
        ("rdbscan_family_memory_without_ttl_bytes", report["ttl"]["memory_without_ttl"]),
        ("rdbscan_family_big_keys", report["big_keys"]["keys"]),
    ):
        series = om[name]
        assert sum(v for _, v in series) == total, name
        assert series[-1][0]["family"] == "other"
    top = [i["pattern"] for i in report["patterns"]["items"]]
    assert [lab["family"] for lab, _ in om["rdbscan_family_memory_bytes"]] == top + ["other"]
    assert len(top) >= 10  # --top


def test_per_dump_series(tmp_path):
    res = CliRunner().invoke(main, ["report", *CLUSTER, "-q", "-f", "openmetrics"])
    assert res.exit_code == 0, res.output
    om = _samples(res.stdout)
    dumps = {lab["dump"]: v for lab, v in om["rdbscan_dump_keys"]}
    assert set(dumps) == set(CLUSTER)
    (total,) = om["rdbscan_keys"]
    assert sum(dumps.values()) == total[1]
    # the default rdb_instance: the first dump's file name
    assert {lab["rdb_instance"] for lab, _ in om["rdbscan_keys"]} == {"dump"}


def test_label_values_are_escaped():
    report = {
        "overview": {"keys": 3, "memory_bytes": 30, "server": "redis", "server_version": "7.4.1"},
        "patterns": {"items": [{"pattern": 'a"b\\c\nd', "keys": 2, "memory_bytes": 20}]},
        "findings": [],
    }
    text = render_openmetrics(report, instance="x")
    om = _samples(text)
    assert om["rdbscan_family_keys"] == [
        ({"rdb_instance": "x", "server": "redis 7.4.1", "family": 'a"b\\c\nd'}, 2),
        ({"rdb_instance": "x", "server": "redis 7.4.1", "family": "other"}, 1),
    ]
    assert list(prom_families(text))
