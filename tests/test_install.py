"""How rdbscan is installed and which implementation of the hot loops it runs: the compiled
walkers are bound when the module is built (also in a process started as the CLI is), a stale
build falls back to pure Python with a warning, and the runtime dependencies need no compiler."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rdbscan.rdb import backend as speedups

ROOT = Path(__file__).resolve().parent.parent
needs_compiled = pytest.mark.skipif(
    speedups.compiled is None,
    reason="rdbscan.rdb._speedups is not built (pip install -e . needs Cython and a C compiler)",
)

# What the value readers bind, printed by a process that imports rdbscan as the `rdbscan` script
# does (rdbscan.cli.main first).
PROBE = (
    "import rdbscan.cli.main; from rdbscan.rdb import backend, collection_values as values; "
    "print(type(values.listpack_scan).__name__, type(values.ziplist_scan).__name__, "
    "backend.describe())"
)


def _probe(env_extra: dict | None = None, pythonpath: str | None = None):
    env = {k: v for k, v in os.environ.items() if k != "RDBSCAN_PURE_PYTHON"}
    env.update(env_extra or {})
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        env=env,
        cwd=pythonpath or ROOT,
        timeout=120,
    )


@pytest.mark.subprocess
@needs_compiled
def test_cli_process_binds_the_compiled_walkers():
    out = _probe()
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [
        "cython_function_or_method",
        "cython_function_or_method",
        "compiled",
    ]
    assert out.stderr == ""


@pytest.mark.subprocess
def test_pure_python_switch_binds_the_reference_walkers():
    out = _probe({"RDBSCAN_PURE_PYTHON": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["function", "function", "pure", "Python"]


@pytest.mark.slow
@pytest.mark.subprocess
@needs_compiled
def test_stale_compiled_module_falls_back_with_one_warning(tmp_path):
    """A copy of the package whose .pyx changed after the build (`git pull` on an editable
    install) runs pure Python and says how to rebuild; the unchanged copy runs compiled."""
    pkg = tmp_path / "rdbscan"
    shutil.copytree(
        Path(speedups.__file__).parent.parent,
        pkg,
        ignore=shutil.ignore_patterns("__pycache__", "*.c"),
    )
    fresh = _probe(pythonpath=str(tmp_path))
    assert fresh.returncode == 0, fresh.stderr
    assert fresh.stdout.split()[-1] == "compiled" and fresh.stderr == ""
    with open(pkg / "rdb" / "_speedups.pyx", "a") as fh:
        fh.write("\n# a change pulled after the build\n")
    stale = _probe(pythonpath=str(tmp_path))
    assert stale.returncode == 0, stale.stderr
    assert stale.stdout.split()[:2] == ["function", "function"]
    lines = stale.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("rdbscan: warning: the compiled speedups are stale")
    assert "rebuild with: pip install -e ." in lines[0]


def test_runtime_dependencies_have_no_sdist_only_package():
    """python-lzf ships only a source package (a C compiler at install time); its fork
    python-neo-lzf ships wheels for Linux, macOS and Windows.  .ci/run installs with
    CC=/bin/false and --only-binary=:all: to prove the whole set."""
    text = (ROOT / "pyproject.toml").read_text()
    deps = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    assert '"python-lzf' not in deps and '"python-neo-lzf' in deps
    ci = (ROOT / ".ci" / "run").read_text()
    assert "CC=/bin/false" in ci and "--only-binary=:all:" in ci
    assert "pip install -q -e '.[test]' && python -m pytest -q" in ci
