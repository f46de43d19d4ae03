"""No function in rdbscan/ grows past MAX_LINES (from its `def` line to its last line,
decorators left out): a function that long does several things, and each should have a name and
a docstring of its own.  The allowlist is explicit and short, each entry with its reason."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "rdbscan"
MAX_LINES = 80

# (path under rdbscan/, qualified name) -> why it may be longer.  A path ending in "/" covers
# every function under that folder.
ALLOWED = {
    (
        "rdb/parser.py",
        "_Parser.records",
    ): "the pure-Python record walker: one loop, kept flat for speed",
}
# Entries that stay: they must still name a function (a renamed one leaves a dead entry).
PERMANENT = [
    ("rdb/parser.py", "_Parser.records"),
]


def _functions(path: Path) -> list[tuple[str, int, int]]:
    """(qualified name, line of its `def`, lines) of every function and method in the file."""
    out: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                end = child.end_lineno or child.lineno
                out.append((name, child.lineno, end - child.lineno + 1))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return out


def _allowed(rel: str, name: str) -> bool:
    return (rel, name) in ALLOWED or any(
        folder.endswith("/") and rel.startswith(folder) for folder, _ in ALLOWED
    )


def test_no_function_over_max_lines():
    over = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        for name, line, lines in _functions(path):
            if lines > MAX_LINES and not _allowed(rel, name):
                over.append(f"rdbscan/{rel}:{line} {name}: {lines} lines")
    assert over == [], (
        f"functions over {MAX_LINES} lines (split each into functions that do one named thing):\n"
        + "\n".join(over)
    )


def test_permanent_entries_name_functions():
    for rel, name in PERMANENT:
        names = {n for n, _, _ in _functions(PKG / rel)}
        assert name in names, f"rdbscan/{rel} has no function {name}: update ALLOWED"


def test_functions_are_measured_from_def_to_end(tmp_path, monkeypatch):
    src = tmp_path / "m.py"
    src.write_text(
        "import functools\n"
        "\n"
        "class A:\n"
        "    @functools.cache\n"
        "    def f(self):\n"
        "        def g():\n"
        "            return 1\n"
        "\n"
        "        return g()\n"
        "\n"
        "async def h():\n"
        "    pass\n"
    )
    assert _functions(src) == [("A.f", 5, 5), ("A.f.g", 6, 2), ("h", 11, 2)]
    assert _allowed("rdb/parser.py", "_Parser.records")
    assert not _allowed("rdb/parser.py", "records")
    assert not _allowed("db/load.py", "load_one")
    assert not _allowed("migrate/run.py", "_report")
    monkeypatch.setitem(ALLOWED, ("migrate/", "*"), "a folder")
    assert _allowed("migrate/run.py", "_report")
