"""docs/ is the specification, kept true by these tests (the sqlite-utils way): the command
reference is generated from --help and current, every command, option, table column, macro and
JSON field is documented, and every reference in the code resolves inside the repository."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import click
import pytest
from common import run_cli

from rdbscan.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SAMPLE = ROOT / "sample_dumps" / "redis-7.4.1.rdb"


def _gen_commands():
    spec = importlib.util.spec_from_file_location("gen_commands", DOCS / "gen_commands.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _commands() -> dict[str, click.Command]:
    return {name: cmd for name, cmd in main.every_command().items() if not cmd.hidden}


def test_the_commands_page_is_current():
    page = (DOCS / "commands.md").read_text(encoding="utf-8")
    assert _gen_commands().render() == page, "run `python docs/gen_commands.py`"


def test_every_command_and_option_is_documented():
    page = (DOCS / "commands.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name, cmd in _commands().items():
        assert f"## rdbscan {name}\n" in page, name
        assert f"`rdbscan {name}" in readme, f"the README has no line for `rdbscan {name}`"
        for param in cmd.params:
            for opt in [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]:
                if opt.startswith("-"):
                    assert re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", page), (name, opt)


def _markdown_files() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))]


def test_links_between_the_pages_resolve():
    broken = []
    for md in _markdown_files():
        text = re.sub(r"```.*?```", "", md.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#", 1)[0]
            if not (md.parent / path).exists():
                broken.append(f"{md.relative_to(ROOT)}: {target}")
    assert not broken, "\n".join(broken)


def _format_sections() -> set[str]:
    text = (DOCS / "rdb-format.md").read_text(encoding="utf-8")
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", text, flags=re.M))


def _source_files() -> list[Path]:
    pkg = ROOT / "rdbscan"
    return [*pkg.rglob("*.py"), *pkg.rglob("*.pyx"), *pkg.rglob("*.sql"), ROOT / "setup.py"]


def test_every_reference_in_the_code_resolves_in_the_repository():
    sections = _format_sections()
    wrong = []
    for path in _source_files():
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(ROOT)
        for page in re.findall(r"\bdocs/([\w-]+\.md)", text):
            if not (DOCS / page).exists():
                wrong.append(f"{where}: docs/{page} does not exist")
        for ref in re.findall(r"rdb-format\.md sections? ([\d.]+(?:-[\d.]+)?)", text):
            for number in re.findall(r"\d+(?:\.\d+)?", ref):
                if number not in sections:
                    wrong.append(f"{where}: docs/rdb-format.md has no section {number}")
        for bad in re.findall(r"README_\w+\.md|§\s?\d|/work/\S+|/home/\S+|\.\./shared/\S+", text):
            wrong.append(f"{where}: {bad!r} cannot be followed from the repository")
    assert not wrong, "\n".join(wrong)


def test_every_table_column_is_documented(tmp_path):
    from rdbscan.db.store import Store

    store = Store(str(tmp_path / "t.duckdb"))
    try:
        page = (DOCS / "tables.md").read_text(encoding="utf-8")
        for table in ("keys", "dumps", "streams", "stream_groups", "slot_info", "db_sizes"):
            for (column,) in store.run(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table]
            ):
                assert f"`{column}`" in page or re.search(rf"\b{column}\b", page), (
                    f"docs/tables.md does not document {table}.{column}"
                )
    finally:
        store.close()


def test_every_macro_is_documented():
    from rdbscan.db.macros import MACROS

    page = (DOCS / "queries.md").read_text(encoding="utf-8")
    for sql in MACROS:
        name = re.search(r"MACRO (\w+)\(", sql).group(1)
        assert f"`{name}(" in page, f"docs/queries.md does not document the macro {name}"


@pytest.fixture(scope="module")
def report_json(tmp_path_factory) -> dict:
    db = tmp_path_factory.mktemp("docs") / "r.duckdb"
    res = run_cli(
        "report", str(SAMPLE), "-o", str(db), "-q", "--format", "json", "--fail-on", "big-keys"
    )
    assert res.exit_code in (0, 3), res.output
    return json.loads(res.stdout)


def test_every_json_field_is_documented(report_json):
    page = (DOCS / "json.md").read_text(encoding="utf-8")
    missing = []

    def walk(value, where):
        if isinstance(value, dict):
            for key, sub in value.items():
                if where.endswith(("keys_by_db", "thresholds", "threshold_sources")):
                    continue  # maps keyed by data
                if not re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", page):
                    missing.append(f"{where}.{key}")
                walk(sub, f"{where}.{key}")
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            walk(value[0], where + "[]")

    walk(report_json, "report")
    assert not missing, "docs/json.md does not document: " + ", ".join(missing)


def _typed_keys(data: type, value: dict, where: str, wrong: list[str], fields: set[str]) -> None:
    """`value` holds every required field of the TypedDict `data` and only its fields; nested
    TypedDicts alike, in lists (every item) and in unions (the member the item fits).  `fields`
    collects every field declared, also of the TypedDicts that `value` does not reach."""
    import typing

    declared = typing.get_type_hints(data)
    fields.update(declared)
    required = set(data.__required_keys__)  # type: ignore[attr-defined]
    if not required <= set(value):
        wrong.append(f"{where} lacks {sorted(required - set(value))}")
    if not set(value) <= set(declared):
        wrong.append(
            f"{where} holds fields its TypedDict does not declare: {sorted(set(value) - set(declared))}"
        )
    for key, hint in declared.items():
        _typed_value(hint, value.get(key), f"{where}.{key}", wrong, fields)


def _typed_value(hint, value, where: str, wrong: list[str], fields: set[str]) -> None:
    import typing

    if typing.is_typeddict(hint):
        if isinstance(value, dict):
            _typed_keys(hint, value, where, wrong, fields)
        else:  # absent or null: its fields only
            _typed_keys(hint, {}, where, [], fields)
        return
    args = typing.get_args(hint)
    if typing.get_origin(hint) is list and args:
        items = value if isinstance(value, list) else []
        _typed_value(args[0], None, where + "[]", [], fields)  # every field, even of no item
        for i, item in enumerate(items):
            _typed_value(args[0], item, f"{where}[{i}]", wrong, fields)
        return
    members = [a for a in args if typing.is_typeddict(a)]
    for member in members:
        _typed_keys(member, {}, where, [], fields)
    if members and isinstance(value, dict):
        fits = [m for m in members if _fits(m, value)]
        _typed_keys(fits[0] if fits else members[0], value, where, wrong, fields)


def _fits(data: type, value: dict) -> bool:
    import typing

    required = set(data.__required_keys__)  # type: ignore[attr-defined]
    return required <= set(value) <= set(typing.get_type_hints(data))


def test_the_sections_typed_data_are_the_json_report(report_json):
    """Each section's object of the JSON report has the fields of its TypedDict (Section.data,
    in the section's build.py), and docs/json.md documents every field a TypedDict declares,
    also those the sample leaves out (cold keys' figures without LRU data)."""
    from rdbscan.reports.report.sections import SECTIONS

    page = (DOCS / "json.md").read_text(encoding="utf-8")
    schema_page = (DOCS / "schema.md").read_text(encoding="utf-8")
    wrong: list[str] = []
    for section in SECTIONS:
        assert section.data is not None, f"section {section.name} declares no typed data"
        fields: set[str] = set()
        if section.name in report_json:
            _typed_keys(section.data, report_json[section.name], section.name, wrong, fields)
        else:  # schema: only with --schema
            _typed_keys(section.data, {}, section.name, [], fields)
        text = schema_page + page if section.name == "schema" else page
        for field in sorted(fields):
            if not re.search(rf"(?<![\w-]){re.escape(field)}(?![\w-])", text):
                wrong.append(f"docs/json.md does not document {section.name}: {field}")
    assert not wrong, "\n".join(wrong)


def test_the_report_type_is_the_json_report(report_json):
    """The whole JSON report has the fields of `ReportData` (report/data.py: its own fields, the
    findings, `fail_on`, and each section's TypedDict), and docs/json.md documents every field
    it declares, also those this report leaves out (`dumps[]`, `charts`, `note`; the `schema`
    section's in docs/schema.md)."""
    from rdbscan.reports.report.data import ReportData

    page = (DOCS / "json.md").read_text(encoding="utf-8")
    page += (DOCS / "schema.md").read_text(encoding="utf-8")
    wrong: list[str] = []
    fields: set[str] = set()
    _typed_keys(ReportData, report_json, "report", wrong, fields)
    for field in sorted(fields):
        if not re.search(rf"(?<![\w-]){re.escape(field)}(?![\w-])", page):
            wrong.append(f"docs/json.md does not document the report's {field}")
    assert "fail_on" in report_json and not wrong, "\n".join(wrong)


DIFF_FIX = ROOT / "tests" / "fixtures" / "diff"


@pytest.fixture(scope="module")
def product_json(tmp_path_factory) -> dict[str, dict]:
    """The diff (every --fail-on rule), the trend of the database it kept, the inferred key
    schema, and the report's check of the new dump against the old one's schema, as
    `--format json` prints them."""
    where = tmp_path_factory.mktemp("products")
    db = where / "pair.duckdb"
    old, new = DIFF_FIX / "old.rdb", DIFF_FIX / "new.rdb"
    rules = "growth,family-growth,new-big-keys,lost-ttl"
    diff = run_cli("diff", "-q", old, new, "--database", db, "-f", "json", "--fail-on", rules)
    assert diff.exit_code == 3, diff.output  # the scripted changes fail growth and lost-ttl
    trend = run_cli("trend", db, "-f", "json")
    assert trend.exit_code == 0, trend.output
    schema = run_cli("schema", "-q", new, "-f", "json")
    assert schema.exit_code == 0, schema.output
    assert run_cli("schema", "-q", old, "-o", where / "old.toml").exit_code == 0
    check = run_cli("report", "-q", new, "--schema", where / "old.toml", "-f", "json")
    assert check.exit_code == 0, check.output
    out = {
        k: json.loads(r.stdout) for k, r in (("diff", diff), ("trend", trend), ("schema", schema))
    }
    out["schema check"] = json.loads(check.stdout)["schema"]
    assert {c["check"] for c in out["schema check"]["checks"] if c["count"]} == {
        "undocumented",  # order:{id}, temp:{id} are new
        "type",  # a cache:item:{id} became a hash, a queue:{id} a string
        "ttl-required",  # session:{id} and cache:item:{id} keys lost their expiry
        "ttl-none",  # user:{id}:profile keys gained one
        "no-keys",  # legacy:{id} vanished
    }
    return out


def _part(page: str, start: str, end: str) -> str:
    """The text of `page` from `start` (the line after it, for a heading) to `end`."""
    i = page.index(start)
    j = page.index("\n", i) + 1 if start.startswith("#") else i
    return page[j : page.index(end, i)]


def _named_fields(text: str) -> set[str]:
    """The field names a part of docs/ writes in backticks: `a`, `a.b[]`, `a b c` (a row's
    fields), left out `--options`, values with spaces or signs, `{placeholders}`."""
    names = set()
    for span in re.findall(r"`([^`]+)`", text):
        for word in re.split(r"[\s,]+", span):
            for piece in word.split("."):
                if re.fullmatch(r"[a-z][a-z0-9_]*", piece.removesuffix("[]")):
                    names.add(piece.removesuffix("[]"))
    return names


# Where docs/ documents each product's JSON (the part named by its first and last words), its
# TypedDict, and the words in backticks there that are values or references, not fields.
PRODUCT_DOCS = {
    "diff": ("diff.md", "## JSON contract", "## `rdbscan trend", {"ttl_bucket"}),
    "trend": ("diff.md", "JSON: `rdbscan_trend`", "`tests/test_diff.py` checks", set()),
    "schema": (
        "schema.md",
        "## What `schema` infers per family",
        "Percentiles are exact",
        {"key_pattern", "required", "none", "optional", "always", "never", "mixed"},
    ),
    # the report's `schema` section (report/sections/schema, built by schema/check.py)
    "schema check": (
        "schema.md",
        "The section (JSON: `schema`) has",
        "The SQL is",
        {"schema", "max_ttl"},
    ),
}


def _product_type(name: str) -> type:
    from rdbscan.reports.diff.data import DiffData
    from rdbscan.reports.diff.trend_data import TrendData
    from rdbscan.reports.schema.check import SchemaCheckData
    from rdbscan.reports.schema.data import SchemaData

    types = {"diff": DiffData, "trend": TrendData, "schema": SchemaData}
    return {**types, "schema check": SchemaCheckData}[name]


@pytest.mark.parametrize("product", sorted(PRODUCT_DOCS))
def test_the_diff_trend_and_schema_types_are_their_json(product_json, product):
    """The JSON of the diff, the trend and the key schema has the fields of its TypedDict
    (reports/diff/data.py, reports/schema/data.py); the page of docs/ that documents it names
    every field the TypedDicts declare, and declares no field the types lack."""
    page_name, start, end, not_fields = PRODUCT_DOCS[product]
    page = (DOCS / page_name).read_text(encoding="utf-8")
    part = _part(page, start, end)
    wrong: list[str] = []
    fields: set[str] = set()
    _typed_keys(_product_type(product), product_json[product], product, wrong, fields)
    # the schema's head and limits are documented with the TOML file, further down its page
    where = page if product == "schema" else part
    for field in sorted(fields):
        if not re.search(rf"(?<![\w-]){re.escape(field)}(?![\w-])", where):
            wrong.append(f"docs/{page_name} does not document {product}: {field}")
    for field in sorted(_named_fields(part) - fields - not_fields):
        wrong.append(f"docs/{page_name} documents {product}: {field}, which no type declares")
    assert not wrong, "\n".join(wrong)


def test_the_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_bytes()
    assert len(readme) < 12 * 1024, f"README.md is {len(readme)} bytes; the manual belongs in docs/"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = re.search(r"```sh\n(python3 -m venv [^\n]*pytest[^\n]*)\n```", readme.decode()).group(
        1
    )
    assert command in ci.splitlines(), ".ci/run must run the README's test command word for word"


def test_the_readmes_first_report_is_what_rdbscan_prints():
    """Every line of the README's "A first report" excerpt ("..." aside) is a line of
    `rdbscan report sample_dumps/redis-7.4.1.rdb` at the excerpt's width (96 columns): the
    excerpt said "Big keys    3" for two days after the sample's report had said 2."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    excerpt = readme.split("one section per question:\n\n```\n", 1)[1].split("```", 1)[0]
    lines = [line for line in excerpt.splitlines() if line != "..."]
    width = len(lines[0])
    assert width == 96 and len(lines) == 26
    res = run_cli("report", "-q", SAMPLE, env={"COLUMNS": str(width)})
    assert res.exit_code == 0, res.output
    printed = {line.rstrip() for line in res.stdout.splitlines()}
    assert [line for line in lines if line.rstrip() not in printed] == []
