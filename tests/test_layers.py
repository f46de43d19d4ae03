"""The package's layers (docs/architecture.md): each imports only the layers below it, no
module imports itself back through others, and one module loads the compiled core.  The
compiled core's Cython sources (.pyx, and the .pxd that declares a module's C interface) are
held to the same rules: their `import`, `from ... import` and `cimport` lines are read as the
Python modules' imports are."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

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
PYX = {_name(p): p for p in sorted(PKG.rglob("*.pyx"))}  # Cython sources (the compiled core)
PXD = {_name(p): p for p in sorted(PKG.rglob("*.pxd"))}  # their C interfaces (one module each)
ALL = set(MODULES) | set(PYX)


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return "api" if parts[-1] != "__main__" else "cli"
    return parts[1] if parts[1] in LAYERS else "api"


def _imports(module: str, typing_too: bool = False) -> set[str]:
    """rdbscan modules `module` imports anywhere in its file (also inside functions), but for
    type checkers only (unless `typing_too`)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):  # imports for type checkers only never run: leave them out
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            if not typing_too:
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
                out.add(sub if sub in ALL else target)
    return out & ALL


# A Cython import line: `from X import a, b` / `from X cimport (a, b)` / `import X` /
# `cimport X` (Cython's grammar is not Python's: ast cannot read a .pyx).
_PYX_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+c?import[ \t]+(\([^)]*\)|[^\n#]+)"
    r"|c?import[ \t]+([^\n#]+))",
    re.M,
)


def _pyx_imports(text: str, module: str) -> set[str]:
    """rdbscan modules that the Cython source `text` of `module` imports or cimports."""
    package = module.rpartition(".")[0]
    out = set()
    for m in _PYX_IMPORT.finditer(text):
        if m.group(3) is not None:
            names = [n.split(" as ")[0].strip() for n in m.group(3).split(",")]
            out.update(n for n in names if n.split(".")[0] == "rdbscan")
            continue
        target = m.group(1)
        level = len(target) - len(target.lstrip("."))
        if level:
            rest = target[level:]
            base = package.split(".")[: len(package.split(".")) - level + 1]
            target = ".".join(base + ([rest] if rest else []))
        if target.split(".")[0] != "rdbscan":
            continue
        for a in m.group(2).strip("()").split(","):
            name = a.split(" as ")[0].strip()
            if name:
                sub = f"{target}.{name}"
                out.add(sub if sub in ALL else target)
    return out & ALL


def _cython_text(module: str) -> str:
    """A compiled module's Cython source: its .pyx and its .pxd, if any."""
    paths = [PYX[module]] + ([PXD[module]] if module in PXD else [])
    return "\n".join(p.read_text(encoding="utf-8") for p in paths)


GRAPH = {m: _imports(m) for m in MODULES} | {m: _pyx_imports(_cython_text(m), m) for m in PYX}


def test_the_compiled_core_is_read_like_the_python_modules():
    """The .pyx and .pxd imports are in the graph the layer tests check: the compiled core
    follows the layers (the walkers in rdb, the batch of key rows in db, which cimports the
    walkers' interface: never the other way); an import of the database layer from the rdb
    layer's Cython is found (and fails the layer test)."""
    assert PYX == {
        "rdbscan.rdb._speedups": PKG / "rdb" / "_speedups.pyx",
        "rdbscan.db._batch": PKG / "db" / "_batch.pyx",
    }
    assert PXD == {"rdbscan.rdb._speedups": PKG / "rdb" / "_speedups.pxd"}
    assert set(PXD) <= set(PYX)  # every interface has its module
    assert GRAPH["rdbscan.rdb._speedups"] == {
        "rdbscan.rdb.constants",
        "rdbscan.rdb.errors",
        "rdbscan.rdb.reader",
    }
    assert GRAPH["rdbscan.db._batch"] == {"rdbscan.rdb._speedups", "rdbscan.rdb.constants"}
    text = (
        "from libc.stdint cimport uint8_t\n"
        "from ..db.rows import (\n    RowBuilder,\n    KEY_KEEP as K,\n)\n"
        "cimport rdbscan.db.store\n"
        "from .blobs cimport _lp_entry\n"
        "from rdbscan.db._batch cimport KeyColumns\n"
        "    from . import elements  # inside a function\n"
    )
    assert _pyx_imports(text, "rdbscan.rdb._speedups") == {
        "rdbscan.db.rows",
        "rdbscan.db.store",
        "rdbscan.db._batch",
        "rdbscan.rdb.blobs",
        "rdbscan.rdb.elements",
    }


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
            text = (MODULES.get(module) or PYX[module]).read_text(encoding="utf-8")
            assert "import duckdb" not in text and "import pyarrow" not in text, module


def _no_cycle(graph: dict[str, set[str]]) -> None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if d == m:
                continue
            if state.get(d) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(d) :] + [d]))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_no_import_cycle():
    _no_cycle(GRAPH)


def test_no_import_cycle_in_the_reports_even_for_type_checkers():
    reports = [m for m in MODULES if m.startswith("rdbscan.reports")]
    _no_cycle({m: {d for d in _imports(m, typing_too=True) if d in reports} for m in reports})


def test_one_module_loads_the_compiled_core_and_each_layer_picks_its_own():
    """backend.py alone reads the switch and imports compiled modules (load_compiled: the
    stale-build check); it loads the rdb layer's, db/rows.py asks it for the db layer's."""
    compiled = {_name(p).rpartition(".")[2] for p in PYX.values()}
    assert compiled == {"_speedups", "_batch"}
    pickers, loaders = [], set()
    for module, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        if "RDBSCAN_PURE_PYTHON" in text.replace('"""', "") and module != "rdbscan.rdb.backend":
            if "environ" in text:
                pickers.append(module)
        if "import_module(" in text and any(name in text for name in compiled):
            pickers.append(module)
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and any(a.name in compiled for a in node.names):
                pickers.append(module)
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith(tuple(compiled)):
                pickers.append(module)
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "load_compiled":
                loaders.add(module)
    assert set(pickers) <= {"rdbscan.rdb.backend"}, pickers
    assert loaders == {"rdbscan.db.rows"}  # backend calls its own by name


def test_no_caller_asks_which_backend_runs():
    """Each compiled piece and its pure-Python twin share one call shape, so nothing but the
    two places that choose (backend.py for the rdb layer, db/rows.py for the batch of key rows)
    reads `backend.compiled`."""
    readers = set()
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("backend"):
                if any(a.name == "compiled" for a in node.names):
                    readers.add(module)
            if isinstance(node, ast.Attribute) and node.attr == "compiled":
                if isinstance(node.value, ast.Name) and node.value.id in ("backend", "speedups"):
                    readers.add(module)
    assert readers == {"rdbscan.db.rows"}


# Inside rdbscan/reports, lowest first: what a value looks like, then the blocks and the SQL
# engine, then the HTML machinery, then the products; the report runs the key-schema check
# (--schema), so it sits above the schema product.  A module may import its own level and those
# below.
REPORT_LEVEL = {
    "format": 0,
    "document": 1,
    "engine": 1,
    "html": 2,
    "schema": 3,
    "diff": 3,
    "report": 4,
}


def _report_part(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["rdbscan", "reports"] or len(parts) < 3:
        return None
    return parts[2]


def test_the_reports_parts_import_only_the_parts_below_them():
    assert set(REPORT_LEVEL) == {
        p.stem for p in (PKG / "reports").iterdir() if p.suffix == ".py" or p.is_dir()
    } - {"__init__", "__pycache__"}
    wrong = []
    for module, deps in GRAPH.items():
        mine = _report_part(module)
        if mine is None:
            continue
        for dep in deps:
            theirs = _report_part(dep)
            if theirs is not None and REPORT_LEVEL[theirs] > REPORT_LEVEL[mine]:
                wrong.append(f"{module} imports {dep}")
            elif theirs is not None and REPORT_LEVEL[theirs] == REPORT_LEVEL[mine] != 0:
                if theirs != mine:  # products (and document/engine) do not import each other
                    wrong.append(f"{module} imports {dep}")
    assert not wrong, "\n".join(wrong)


SECTIONS_PKG = "rdbscan.reports.report.sections"


def _section(module: str) -> str | None:
    parts = module.split(".")
    return parts[4] if module.startswith(SECTIONS_PKG + ".") and len(parts) > 4 else None


def test_a_report_section_imports_no_other_section_nor_the_report_around_it():
    """A section owns its parts: it reads the engine, the formatters, the blocks, the HTML
    machinery and report/section.py, never another section, nor the list of sections (which
    imports it) nor the modules that read that list."""
    wrong = []
    for module, deps in GRAPH.items():
        mine = _section(module)
        if mine is None:
            continue
        for dep in deps:
            if dep.startswith(SECTIONS_PKG + "."):
                if _section(dep) != mine:
                    wrong.append(f"{module} imports {dep}")
            elif dep.startswith("rdbscan.reports.report") and dep not in (
                "rdbscan.reports.report.section",
                "rdbscan.reports.report.build",  # ReportOptions, for type checkers only
            ):
                wrong.append(f"{module} imports {dep}")
    assert not wrong, "\n".join(wrong)


def test_every_import_of_the_package_names_a_module_or_name_that_exists():
    """Also imports inside functions, which a move can leave pointing one level short (mypy
    does not see them: it ignores missing imports)."""
    import importlib

    wrong = []
    for module, path in MODULES.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "rdbscan" or target.endswith("_speedups"):
                continue
            if target not in MODULES:
                wrong.append(f"{module}: no module {target}")
                continue
            for a in node.names:
                if f"{target}.{a.name}" in MODULES:
                    continue
                if not hasattr(importlib.import_module(target), a.name):
                    wrong.append(f"{module}: {target} has no {a.name}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.subprocess
def test_the_command_line_imports_a_command_when_it_runs():
    """`rdbscan load` (and --version, --help of the group) import no report, diff, migrate or
    schema module: main.LAZY_COMMANDS are imported when asked for (0.2 s of every start)."""
    code = (
        "import sys; import rdbscan.cli.main as m; "
        "print(sorted(n for n in sys.modules if n.startswith(('rdbscan.reports', "
        "'rdbscan.migrate', 'rdbscan.export', 'rdbscan.cli.'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=PKG.parent
    ).stdout
    assert ast.literal_eval(out) == [
        "rdbscan.cli.filters",
        "rdbscan.cli.main",
        "rdbscan.cli.options",
        "rdbscan.cli.output",
        "rdbscan.cli.starting",
    ]
    from rdbscan.cli.main import LAZY_COMMANDS, main

    commands = main.every_command()
    assert {n for n, (module, _) in LAZY_COMMANDS.items()} < set(commands)
    assert all(commands[n].name == n for n in commands)


@pytest.mark.subprocess
@pytest.mark.skipif(
    int(duckdb.__version__.split(".")[0]) < 2, reason="DuckDB 1.x imports ssl and pyarrow itself"
)
@pytest.mark.parametrize("pool", [None, "mimalloc"])
def test_a_report_on_a_local_dump_imports_no_url_support_and_picks_arrows_pool(tmp_path, pool):
    """The console script (rdbscan.cli.run) over a local dump: no fsspec, nor the asyncio and ssl
    modules it brings (6 MiB at a report's peak, 25 ms of every start: parquet.is_dataset asks
    the disk directly), and Arrow's memory pool is the system allocator unless
    ARROW_DEFAULT_MEMORY_POOL chose one (docs/benchmarks.md, "Peak memory: what a report loaded
    and did not need")."""
    import os

    code = (
        "import sys\n"
        f"sys.argv = ['rdbscan', 'report', '-q', 'sample_dumps/redis-7.4.1.rdb', '-f', 'json',"
        f" '-o', {str(tmp_path / 'r.json')!r}]\n"
        "from rdbscan.cli import run\n"
        "try:\n    run()\nexcept SystemExit as e:\n    code = e.code\n"
        "import pyarrow\n"
        "print(code, pyarrow.default_memory_pool().backend_name,"
        " sorted(m for m in ('fsspec', 'asyncio', 'ssl') if m in sys.modules))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    if pool:
        env["ARROW_DEFAULT_MEMORY_POOL"] = pool
    out = (
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=PKG.parent,
            env=env,
        )
        .stdout.strip()
        .split(maxsplit=2)
    )
    assert out == ["0", pool or "system", "[]"]
    assert (tmp_path / "r.json").stat().st_size > 1000


@pytest.mark.subprocess
@pytest.mark.skipif(
    int(duckdb.__version__.split(".")[0]) < 2, reason="DuckDB 1.x imports ssl and pyarrow itself"
)
def test_a_report_over_a_dataset_imports_no_pyarrow(tmp_path):
    """`rdbscan report DIR` reads the dataset through DuckDB alone, its `dumps` files too
    (Dataset._read_dumps): pyarrow was 45 MB of the peak of a report over a dataset
    (docs/benchmarks.md, "Reports over a dataset within 200 MB")."""
    ds, out = str(tmp_path / "ds"), str(tmp_path / "r.json")
    load = [sys.executable, "-m", "rdbscan", "load", "-q", "--parquet", ds]
    subprocess.run(load + ["sample_dumps/redis-7.4.1.rdb"], check=True, cwd=PKG.parent)
    code = (
        "import sys\n"
        f"sys.argv = ['rdbscan', 'report', '-q', {ds!r}, '-f', 'json', '-o', {out!r}]\n"
        "from rdbscan.cli import run\n"
        "try:\n    run()\nexcept SystemExit as e:\n    code = e.code\n"
        "print(code, 'pyarrow' in sys.modules)\n"
    )
    got = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=PKG.parent
    )
    assert got.stdout.split() == ["0", "False"], got.stderr
    assert json.loads(Path(out).read_text())["overview"]["keys"] == 584
