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
    return {name: cmd for name, cmd in main.commands.items() if not cmd.hidden}


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
    TypedDicts alike.  `fields` collects every field declared."""
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
        if typing.is_typeddict(hint) and isinstance(value.get(key), dict):
            _typed_keys(hint, value[key], f"{where}.{key}", wrong, fields)


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


def test_the_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_bytes()
    assert len(readme) < 12 * 1024, f"README.md is {len(readme)} bytes; the manual belongs in docs/"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = re.search(r"```sh\n(python3 -m venv [^\n]*pytest[^\n]*)\n```", readme.decode()).group(
        1
    )
    assert command in ci.splitlines(), ".ci/run must run the README's test command word for word"
