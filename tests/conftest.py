"""The suite's tiers and its shared setup.

Tiers (markers registered in pyproject.toml):
- `slow`: left out of the default run (`python -m pytest`, a few minutes); `--runslow` runs
  them too (what .ci/run runs), and a slow test named by its node id runs anyway. A test is
  slow when it takes more than ~1.5 s on the shared 2-core machine (a fifth of the tests, two
  thirds of the time of a full run: campaigns of generated inputs, every-byte cuts, loads of
  every fixture, full reports through the command line, processes signalled or killed).
- `backend`: its result depends on the parser backend (the compiled core or the pure-Python
  path). Every test outside PARSER_INDEPENDENT gets it here, so that a new test module runs
  on both paths until it is listed there (or, for one test of such a module, marked
  `parser_independent`); .ci/run's pure-Python pass runs `-m backend` only.
- With `-n auto` (pytest-xdist, `--dist loadgroup` in pyproject.toml) each worker makes the
  session fixtures below once, but `fixtures_db`, which one worker loads for the run and the
  others copy; the tests that read `pure_fixtures_db` share one worker, and so do the tests of
  a module in SHARED_MODULES (its module-scoped fixtures made once, not in each worker) and the
  corpus projections of one source dump (test_migrate.py: its projections made once). The
  groups need pytest below 9.2 (pytest_configure below).
- After collection the objects pytest made are frozen (gc.freeze): a full collection, which
  `common.run_cli` runs after each failed command, then walks only what the tests made since
  (about 0.15 CPU s less a collection; a fifth of the CPU of the command-line tests).
- `subprocess`: starts `rdbscan` (or Python) in a child process; `browser`: drives a headless
  Chromium; `network`: talks to a server on a local port (moto's S3, a Dask cluster). These
  select (`-m subprocess`) or leave out (`-m "not browser"`) what a machine lacks.

Shared setup (session-wide, each made once): `cli` (the one in-process runner of the command
line, tests/common.py), `loaded` (a fixture dump -> a database holding it), `sample_db`,
`fixtures_db` and `pure_fixtures_db` (every fixture dump loaded by this process's backend,
and by the pure-Python path). They are read, never changed: a test that writes copies one
(common.copy_db)."""

import fcntl
import gc
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from common import FIXTURE_DUMPS, FIXTURES, ROOT, copy_db, run_cli  # noqa: E402

# Test modules whose results do not depend on the parser backend (reports, diff, HTML, object
# storage, Parquet datasets and parallel loads set against a database loaded by the same
# backend, the command line's faults, docs, static checks): they read databases or files that
# the twin tests (test_speedups.py, test_blob_stream.py, ...) hold equal on both paths. A test
# in one of them that does depend on it (a signal while a dump is parsed) is marked `backend`.
PARSER_INDEPENDENT = {
    "test_api.py",
    "test_cli_faults.py",
    "test_cli_outputs.py",
    "test_columns.py",
    "test_dask.py",
    "test_diff.py",
    "test_diff_html.py",
    "test_docs.py",
    "test_escaping.py",
    "test_export.py",
    "test_facts_once.py",
    "test_fleet_report.py",
    "test_function_size.py",
    "test_hot_keys.py",
    "test_html_report.py",
    "test_layers.py",
    "test_memory_limit.py",
    "test_multi_dump.py",
    "test_openmetrics.py",
    "test_parallel_load.py",
    "test_parquet.py",
    "test_rdbtools_crosscheck.py",
    "test_redact.py",
    "test_report.py",
    "test_report_cli.py",
    "test_report_fastpaths.py",
    "test_report_findings.py",
    "test_report_gap.py",
    "test_report_width.py",
    "test_s3.py",
    "test_schema.py",
    "test_schema_split.py",
    "test_sections.py",
    "test_trust_load.py",
    "test_values.py",
    "test_written_once.py",
}


# Modules whose module-scoped fixtures cost seconds (several loads, reports over many dumps):
# their tests run in one worker, so that the fixtures are made once a run, not once a worker.
SHARED_MODULES = {
    "test_dask.py",
    "test_diff.py",
    "test_diff_html.py",
    "test_docs.py",
    "test_fleet_report.py",
    "test_multi_dump.py",
    "test_s3.py",
}


def pytest_addoption(parser):
    parser.addoption(
        "--runslow", action="store_true", help="run the tests marked slow too (as .ci/run does)"
    )


def pytest_configure(config):
    """pytest 9.2 gives tests ids that pytest-xdist 3.8's `--dist loadgroup` cannot add a group
    to: it would spread each xdist_group over the workers without a word (pytest-xdist#1386;
    pyproject.toml keeps pytest below 9.2 for it)."""
    if config.getoption("dist", "no") != "loadgroup" or not config.getoption("numprocesses", 0):
        return  # (one process: nothing to group)
    from importlib.metadata import version

    def release(name: str) -> tuple[int, ...]:
        return tuple(int(p) for p in version(name).split(".")[:2] if p.isdigit())

    if release("pytest") >= (9, 2) and release("pytest-xdist") <= (3, 8):
        raise pytest.UsageError(
            f"pytest {version('pytest')} with pytest-xdist {version('pytest-xdist')} does not "
            "keep the tests of an xdist_group in one worker (pytest-xdist#1386): "
            "pip install -e '.[test]' installs a pytest that does"
        )


def _named(config) -> set[str]:
    """The node ids named on the command line (`tests/test_x.py::test_y`), as pytest writes
    them."""
    out = set()
    for arg in config.args:
        path, sep, rest = arg.partition("::")
        if sep:
            try:
                path = Path(path).resolve().relative_to(config.rootpath).as_posix()
            except ValueError:
                pass
            out.add(f"{path}::{rest}")
    return out


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's, which reads the xdist_group marks
def pytest_collection_modifyitems(config, items):
    runslow, named = config.getoption("runslow"), _named(config)
    keep, slow = [], []
    for item in items:
        independent = item.path.name in PARSER_INDEPENDENT
        if not (independent or item.get_closest_marker("parser_independent")):
            item.add_marker(pytest.mark.backend)
        if "pure_fixtures_db" in getattr(item, "fixturenames", ()):
            # one worker loads every fixture on the pure-Python path, not each (`-n auto`)
            item.add_marker(pytest.mark.xdist_group("pure_fixtures_db"))
        elif item.path.name in SHARED_MODULES:
            item.add_marker(pytest.mark.xdist_group(item.path.name))
        elif (
            getattr(item, "originalname", "") == "test_corpus_projection_matches_the_target_server"
        ):
            # migrate_compare.projections: each source dump projected once, in one worker
            item.add_marker(pytest.mark.xdist_group("migrate:" + item.callspec.id.split("->")[0]))
        chosen = any(item.nodeid == n or item.nodeid.startswith((n + "[", n + "::")) for n in named)
        if item.get_closest_marker("slow") and not (runslow or chosen):
            slow.append(item)
        else:
            keep.append(item)
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = keep


def pytest_collection_finish(session):
    """What collection made lives as long as the run: out of the garbage collector's walks."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _default_sigint():
    """Each test starts with Python's own Ctrl-C handling and SIGINT unblocked: the CLI's
    handler (rdbscan.cli.main) ignores a second Ctrl-C, and the parallel loader blocks SIGINT
    while it starts a worker. If either leaked into the test process, the subprocesses later
    tests start (and send SIGINT to) would inherit an ignored or blocked signal and never stop."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    yield


@pytest.fixture(scope="session")
def cli():
    """`cli("report", "-q", DUMP)`: the command line in this process, as a user sees it
    (tests/common.py run_cli: exit code, stdout, stderr)."""
    return run_cli


@pytest.fixture(scope="session")
def loaded(tmp_path_factory):
    """A fixture dump -> the path of a database that holds it, loaded once a session. The dump
    is a folder under tests/fixtures that holds dump.rdb ("redis-7.0.15/small") or a file."""
    from rdbscan.db.load import load

    cache: dict[str, str] = {}

    def get(dump) -> str:
        path = FIXTURES / dump / "dump.rdb" if (FIXTURES / dump).is_dir() else Path(dump)
        key = str(path.resolve())
        if key not in cache:
            db = tmp_path_factory.mktemp("loaded") / "d.duckdb"
            [res] = load([str(path)], str(db))
            assert res.complete, res.error
            cache[key] = str(db)
        return cache[key]

    return get


@pytest.fixture(scope="session")
def sample_db(loaded) -> str:
    """sample_dumps/redis-7.4.1.rdb (584 keys) loaded; read it, don't change it."""
    return loaded(ROOT / "sample_dumps" / "redis-7.4.1.rdb")


def _made_once(tmp_path_factory, name: str, make) -> Path:
    """`make(path)`, run by the first worker of the run that asks (the others wait for it and
    read what it made); without pytest-xdist, by this process."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's temporary directory, each worker's is in it
    path = root / name
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not path.exists():
            part = root / f"part-{name}"
            make(str(part))
            part.rename(path)
    return path


@pytest.fixture(scope="session")
def fixtures_db(tmp_path_factory) -> str:
    """Every fixture dump (common.FIXTURE_DUMPS) loaded into one database by this process's
    backend (loaded once a run, each worker reading its own copy); read it, don't change it."""
    from rdbscan.db.load import load
    from rdbscan.rdb import backend

    def make(db: str) -> None:
        load(FIXTURE_DUMPS, db)
        assert not os.path.exists(db + ".wal")  # (closed: one file to copy)

    which = "compiled" if backend.compiled is not None else "pure"
    made = _made_once(tmp_path_factory, f"fixtures-{which}.duckdb", make)
    return copy_db(str(made), tmp_path_factory.mktemp("fixtures") / "all.duckdb")


@pytest.fixture(scope="session")
def pure_fixtures_db(tmp_path_factory, request) -> str:
    """The same load on the pure-Python path (a child process with RDBSCAN_PURE_PYTHON=1);
    fixtures_db itself when this process runs that path."""
    from rdbscan.rdb import backend

    if backend.compiled is None:
        return request.getfixturevalue("fixtures_db")
    db = str(tmp_path_factory.mktemp("pure") / "pure.duckdb")
    code = (
        "import sys; from rdbscan.rdb import backend; assert backend.compiled is None; "
        "from rdbscan.db.load import load; load(sys.argv[2:], sys.argv[1])"
    )
    env = {**os.environ, "RDBSCAN_PURE_PYTHON": "1"}
    subprocess.run([sys.executable, "-c", code, db, *FIXTURE_DUMPS], check=True, env=env)
    return db
