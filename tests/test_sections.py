"""The report's sections are slices (docs/architecture.md, "The report, section by section"):
each a package of rdbscan/reports/report/sections/ owning its parts, listed once."""

from __future__ import annotations

import ast
from pathlib import Path

from rdbscan.reports.report.sections import FAIL_RULES, SECTION_NAMES, SECTIONS

PKG = Path(__file__).resolve().parent.parent / "rdbscan"
SECTIONS_DIR = PKG / "reports" / "report" / "sections"


def test_every_section_is_a_package_with_its_entry():
    packages = sorted(p.name for p in SECTIONS_DIR.iterdir() if (p / "__init__.py").exists())
    assert sorted(s.name for s in SECTIONS) == packages
    for s in SECTIONS:
        assert s.build.__module__.startswith(f"rdbscan.reports.report.sections.{s.name}")
        assert s.layout.__module__ == f"rdbscan.reports.report.sections.{s.name}.layout"
        for part in (s.findings, s.fail_value, s.chart_data, s.charts):
            if part is not None:
                assert part.__module__.startswith(f"rdbscan.reports.report.sections.{s.name}")
    assert SECTION_NAMES == tuple(s.name for s in SECTIONS if s.selectable)
    assert len(FAIL_RULES) == sum(len(s.fail_rules) for s in SECTIONS)  # no rule twice


def test_a_section_runs_only_its_own_sql_and_the_shared_base_relations():
    """Every query a section names (run.rows / run.one) is a file of its own queries/ folder."""
    for s in SECTIONS:
        own = {p.stem for p in (SECTIONS_DIR / s.name).glob("queries/*.sql")}
        for path in (SECTIONS_DIR / s.name).glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("rows", "one")
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                ):
                    name = node.args[0].value
                    assert name in own or s.name == "schema", f"{path}: {name}"


def test_the_list_of_sections_is_written_once():
    """No other module of the package spells three section names in one literal (a tuple, a
    list, a dict or a set of them, or of pairs that start with them): sections.SECTIONS is the
    one list."""
    names = {s.name for s in SECTIONS}
    copies = []
    for path in PKG.rglob("*.py"):
        if path == SECTIONS_DIR / "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
                items = node.keys if isinstance(node, ast.Dict) else node.elts
                found = {i.value for i in items if isinstance(i, ast.Constant) and i.value in names}
                if len(found) >= 3:
                    copies.append(f"{path.relative_to(PKG.parent)}:{node.lineno}")
    assert not copies, copies


def test_the_engine_finds_the_sections_base_relations_itself():
    """A `_*.sql` file of a section creates its base relations (rnaming, rslots, ...): the
    engine reads their names from the file, in dependency order, and names none of them."""
    from rdbscan.reports.engine.querylib import bundled_queries
    from rdbscan.reports.engine.relations import base_relations

    relations = base_relations()
    assert {
        "rkeys",
        "rfamilies",
        "rlimits",
        "rnaming",
        "rcandidates",
        "rslots",
        "rhashtags",
    } <= set(relations)
    files = list(dict.fromkeys(relations.values()))
    assert files[0] == "_rkeys"
    assert files.index("_rlimits") < files.index("_rcandidates")  # rcandidates reads rlimits
    paths = {n: q.path for n, q in bundled_queries(include_base=True).items()}
    assert paths["_rnaming"].parent.parent.name == "naming"
    engine = (PKG / "reports" / "engine" / "relations.py").read_text(encoding="utf-8")
    assert not any(f'"{r}"' in engine for r in relations if r != "rkeys")
