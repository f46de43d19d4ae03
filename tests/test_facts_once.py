"""Facts written once: the compact-encoding thresholds' defaults live in the header of
rdbscan/reports/engine/queries/_rlimits.sql; every other query takes them from there (`from
_rlimits.sql: ...`) and default_thresholds() starts from them."""

from __future__ import annotations

import re

from rdbscan.reports.engine import querylib
from rdbscan.reports.engine import thresholds as rpt

QUERIES = querylib.REPORTS  # every .sql below: the report's, the key schema's, the diff's
RLIMITS = QUERIES / "engine" / "queries" / "_rlimits.sql"


def _declared(path) -> set[str]:
    """Parameters the file's header declares with a default of its own."""
    names = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("--"):
            break
        m = querylib._PARAM_LINE.match(line)
        if m:
            names.add(m.group(1))
    return names


def test_threshold_defaults_are_declared_in_rlimits_only():
    thresholds = set(rpt.NEWEST_THRESHOLDS)
    assert thresholds == _declared(RLIMITS)
    assert len(thresholds) == 12
    elsewhere = {
        str(p.relative_to(QUERIES)): sorted(_declared(p) & thresholds)
        for p in sorted(QUERIES.rglob("*.sql"))
        if p != RLIMITS and _declared(p) & thresholds
    }
    assert elsewhere == {}


def test_queries_take_the_thresholds_from_rlimits():
    rlimits = querylib.parse_query(RLIMITS).params
    takers = []
    for path in sorted(QUERIES.rglob("*.sql")):
        q = querylib.parse_query(path)
        assert q.used_params & set(rlimits) <= set(q.params), q.name  # all declared
        if path != RLIMITS and set(q.params) & set(rlimits):
            takers.append(str(path.relative_to(QUERIES)))
            assert re.search(r"^--\s+from _rlimits\.sql: ", path.read_text(), re.M), q.name
            for name in set(q.params) & set(rlimits):
                assert q.params[name] == rlimits[name], (q.name, name)
    assert takers == [
        "diff/queries/encodings.sql",
        "report/sections/encodings/queries/_rcandidates.sql",
        "report/sections/encodings/queries/encoding_candidates.sql",
        "report/sections/encodings/queries/encoding_candidates_by_dump.sql",
        "report/sections/encodings/queries/encoding_candidates_summary.sql",
        "report/sections/encodings/queries/encoding_near.sql",
        "report/sections/encodings/queries/encoding_whatif.sql",
        "report/sections/encodings/queries/strings_to_hashes.sql",
    ]


def test_default_thresholds_start_from_the_header():
    header = {n: p.default for n, p in querylib.parse_query(RLIMITS).params.items()}
    assert rpt.default_thresholds("redis", "8.6.3", 13) == header
    assert rpt.default_thresholds("valkey", "9.1.2", 80) == header
    old = rpt.default_thresholds("redis", "2.2.0", 4)
    assert old == {
        **header,
        "zset_max_listpack_entries": 0,
        "set_max_listpack_entries": 0,
        "list_compact_encoding": "ziplist",
        "compact_encoding": "ziplist",
    }
    assert rpt.SETTING_NAMES["list_max_listpack_size"] == "list-max-listpack-size"
    assert rpt.CONFIG_ALIASES["hash-max-ziplist-entries"] == "hash_max_listpack_entries"
    assert set(rpt.CONFIG_ALIASES.values()) == set(rpt.SETTING_NAMES)


def test_a_shared_parameter_that_does_not_exist_is_an_error(tmp_path, monkeypatch):
    bad = tmp_path / "bad.sql"
    bad.write_text("-- name: bad\n-- params:\n--   from _rlimits.sql: no_such_param\nSELECT 1\n")
    try:
        querylib.parse_query(bad)
    except ValueError as e:
        assert str(e) == "bad.sql: _rlimits.sql declares no parameter no_such_param"
    else:
        raise AssertionError("no error")


def test_every_compiled_twin_names_the_tests_that_compare_it():
    """docs/architecture.md lists each function of the compiled core with its Python twin and
    the tests that hold the two equal: every public function is there, every test exists."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    pyx = "".join(p.read_text(encoding="utf-8") for p in sorted(root.glob("rdbscan/*/*.pyx")))
    public = set(re.findall(r"^(?:def|cdef class) (\w+)", pyx, re.M))
    internal = set(re.findall(r"^cdef (?!class)[\w ]+?\*? ?(\w+)\(", pyx, re.M))
    text = (root / "docs/architecture.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)`[^|]*\| ([^|]+) \| ([^|]+) \|$", text, re.M)
    # every public function, and C-level helpers only where they have a Python twin of their own
    listed = {r[0] for r in rows}
    assert public <= listed and listed - public <= internal, listed ^ public
    tests = "".join(
        (root / "tests" / f).read_text()
        for f in (
            "test_speedups.py",
            "test_family.py",
            "test_blob_stream.py",
            "test_lzf_stream.py",
            "test_columns.py",
            "test_key_stream.py",
        )
    )
    defined = set(re.findall(r"^def (test_\w+)", tests, re.M))
    named = set()
    for _, _, compared in rows:
        for name, generated in re.findall(r"`(test_\w+?)(\(_generated\))?`", compared):
            named.add(name)
            if generated:
                named.add(name + "_generated")
    assert named and named <= defined, sorted(named - defined)
