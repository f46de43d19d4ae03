"""The package's layers (docs/architecture.md): each imports only the layers below it, no
module imports itself back through others, and one module picks the compiled core."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "rdbscan"

# Lowest first; a module may import its own layer and the layers before it.  rdb (bytes to
# records) and model (what a key costs) are one level: the parser asks the servers' rules in model
# (kv.py: which strings are embedded), the memory model asks rdb's module readers.  `rdbscan` is
# the package itself (__init__: the library API, load() and report()).
LEVEL = {
    "_version": 0,
    "rdb": 0,
    "model": 0,
    "errors": 1,
    "db": 2,
    "reports": 3,
    "migrate": 3,
    "api": 4,
    "export": 4,  # key rows and metrics out: reads the database and the report dict
    "cli": 5,
}
LAYERS = list(LEVEL)


def _name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return "api" if parts[-1] != "__main__" else "cli"
    return parts[1] if parts[1] in LAYERS else "api"


def _imports(module: str) -> set[str]:
    """rdbscan modules `module` imports anywhere in its file (also inside functions), but for
    type checkers only."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):  # imports for type checkers only never run: leave them out
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "rdbscan")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "rdbscan":
                continue
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.add(sub if sub in MODULES else target)
    return out & set(MODULES)


GRAPH = {m: _imports(m) for m in MODULES}


def test_the_layers_are_packages():
    for layer in ("rdb", "model", "db", "reports", "cli"):
        assert (PKG / layer / "__init__.py").exists(), layer
    assert not [
        p.name
        for p in PKG.glob("*.py")
        if p.stem not in ("__init__", "__main__", "_version", "api", "errors")
    ]


def test_each_layer_imports_only_the_layers_below_it():
    wrong = []
    for module, deps in GRAPH.items():
        mine = LEVEL[_layer(module)]
        for dep in deps:
            if LEVEL[_layer(dep)] > mine:
                wrong.append(f"{module} imports {dep}")
    assert not wrong, "\n".join(wrong)


def test_the_rdb_layer_knows_nothing_of_the_database_or_the_reports():
    for module, deps in GRAPH.items():
        if _layer(module) in ("rdb", "model"):
            assert all(_layer(d) in ("rdb", "model") for d in deps), (module, deps)
            text = MODULES[module].read_text(encoding="utf-8")
            assert "import duckdb" not in text and "import pyarrow" not in text, module


def test_no_import_cycle():
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(GRAPH[m]):
            if d == m:
                continue
            if state.get(d) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(d) :] + [d]))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            visit(m)


def test_one_module_picks_the_compiled_core():
    pickers = []
    for module, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        if "RDBSCAN_PURE_PYTHON" in text.replace('"""', "") and module != "rdbscan.rdb.backend":
            if "environ" in text:
                pickers.append(module)
        if "import_module(" in text and "_speedups" in text:
            pickers.append(module)
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and any(a.name == "_speedups" for a in node.names):
                pickers.append(module)
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("_speedups"):
                pickers.append(module)
    assert set(pickers) <= {"rdbscan.rdb.backend"}, pickers
