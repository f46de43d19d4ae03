"""The report's sections are slices (docs/architecture.md, "The report, section by section"):
each a package of rdbscan/reports/report/sections/ owning its parts, listed once."""

from __future__ import annotations

import ast
from pathlib import Path

from rdbscan.reports.engine import querylib
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
        # and the NAME_by_dump form of a file with a `by dump:` entry (querylib.by_dump)
        own |= {
            p.stem + "_by_dump"
            for p in (SECTIONS_DIR / s.name).glob("queries/*.sql")
            if querylib.parse_query(p).by_dump
        }
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


# --- the sections' objects are read through their types (issue 26) --------------------------

REPORT_DIR = PKG / "reports" / "report"
# Fields required in the JSON that a section's findings may find absent, and read with `.get`:
# in a dump's object from the section's `by_dump` (over more than 32 dumps), which gives only what
# its dump findings need, and in the overview that `--section` left out (its `always` fields).
ABSENT_SOMETIMES = {
    ("ttl", "families"),
    ("slots", "hottest"),
    ("overview", "stopped_by"),
    ("overview", "complete"),
    ("overview", "checksum"),
}


def _typed_dicts() -> dict[str, type]:
    """Every TypedDict the report's parts read, by name: the report's (report/data.py) and
    each section's (its build.py; the schema section's is the key-schema product's)."""
    import importlib
    import typing

    modules = [importlib.import_module("rdbscan.reports.report.data")]
    modules += [importlib.import_module(s.build.__module__) for s in SECTIONS]
    modules.append(importlib.import_module("rdbscan.reports.schema.check"))
    return {
        name: value
        for m in modules
        for name, value in vars(m).items()
        if typing.is_typeddict(value)
    }


def _annotation(node) -> str:
    return ast.unparse(node) if node is not None else ""


def test_each_sections_parts_name_its_typed_data():
    """A section's builder returns its TypedDict (`Section.data`), its layout and findings take
    it and the report (`ReportData`), its charts and `--fail-on` measure take the report: mypy
    then checks each field they read (`Section` is generic in its object)."""
    import inspect

    def names(fn) -> list[str]:
        sig = inspect.signature(fn)
        out = [_name(p.annotation) for p in sig.parameters.values()]
        return out + [_name(sig.return_annotation)]

    def _name(a) -> str:
        return a if isinstance(a, str) else getattr(a, "__name__", repr(a))

    for s in SECTIONS:
        data = s.data.__name__
        assert names(s.build)[-1] == data, s.name
        assert names(s.layout) == [data, "ReportData", "list[Block]"], s.name
        if s.findings is not None:
            assert names(s.findings) == [data, "ReportData", "list[Finding]"], s.name
        if s.charts is not None:
            assert names(s.charts) == ["ReportData", "list[str]"], s.name
        if s.fail_value is not None:
            assert names(s.fail_value)[1] == "ReportData", s.name


def test_the_report_type_holds_each_sections_type():
    """`ReportData` (report/data.py) has a field per section, of the section's TypedDict: the
    type of the whole report is the sections' types (and the JSON, tests/test_docs.py)."""
    import typing

    from rdbscan.reports.report.data import ReportData

    hints = typing.get_type_hints(ReportData)
    for s in SECTIONS:
        assert hints[s.name] is s.data, s.name
    # the sections and the report's own fields, nothing else
    own = {"rdbscan_report", "generated_at", "options", "dumps", "note", "findings"}
    own |= {"fail_on", "charts", "redaction", "report_seconds"}
    assert set(hints) == own | {s.name for s in SECTIONS}


def test_no_required_field_is_read_with_get():
    """In the sections' layouts, findings and charts and the report's findings, text and HTML,
    a parameter typed with a TypedDict is read with `["field"]` for each field its type
    requires (mypy checks those; `.get` hides a renamed field): `.get` is for fields that may
    be absent (total=False, or ABSENT_SOMETIMES)."""
    types = _typed_dicts()
    paths = [p for p in SECTIONS_DIR.glob("*/*.py") if p.stem in ("layout", "findings", "charts")]
    paths += [REPORT_DIR / f"{m}.py" for m in ("findings", "render", "html", "fail_on")]
    wrong, typed_params = [], 0
    for path in sorted(paths):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]:
            params = {
                a.arg: types[_annotation(a.annotation)]
                for a in fn.args.args
                if _annotation(a.annotation) in types
            }
            typed_params += len(params)
            for node in ast.walk(fn):
                if not (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "get"
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id in params
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                ):
                    continue
                field = node.args[0].value
                required = params[node.func.value.id].__required_keys__  # type: ignore[attr-defined]
                if field in required and (path.parent.name, field) not in ABSENT_SOMETIMES:
                    wrong.append(f"{path.relative_to(PKG.parent)}:{node.lineno} .get({field!r})")
    assert typed_params >= 85  # 91: every layout, findings and chart function, their helpers
    assert not wrong, wrong
