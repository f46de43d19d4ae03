"""`rdbscan load` to a Parquet dataset or on a Dask cluster (docs/fleet.md): which library call a
load's options ask for, and the one-line errors for options that do not go together or an
optional dependency that is not installed."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import rdbscan

from ..errors import EXIT_INPUT, EXIT_USAGE, CommandError
from ..rdb import remote
from .output import say


def load_target(
    db_path: str | None,
    parquet_dir: str | None,
    scheduler: str | None,
    dumps=(),
    quiet: bool = False,
    retries: int | None = None,
) -> Callable:
    """rdbscan.load bound to the database, or rdbscan.load_dataset bound to the dataset (and
    the scheduler); CommandError (exit 2) for options that do not go together, or a URL (output
    or dump) whose file system is not installed."""
    for dump in dumps:
        check_url(dump)
    if db_path and parquet_dir:
        raise CommandError("give -o FILE.duckdb or --parquet DIR, not both", EXIT_USAGE)
    if not db_path and not parquet_dir:
        raise CommandError(
            "missing the output: -o FILE.duckdb (a database) or --parquet DIR (a dataset)",
            EXIT_USAGE,
        )
    if scheduler is not None and not parquet_dir:
        raise CommandError("--dask writes a Parquet dataset: give --parquet DIR", EXIT_USAGE)
    if retries is not None and scheduler is None:
        raise CommandError("--retries goes with --dask SCHEDULER", EXIT_USAGE)
    if scheduler is not None:
        check_dask()
    if parquet_dir:
        check_url(parquet_dir)
        return partial(
            rdbscan.load_dataset,
            root=parquet_dir,
            scheduler=scheduler,
            on_task=None if quiet else say_task,
            **({} if retries is None else {"retries": retries}),
        )
    assert db_path is not None
    from . import targets

    targets.database_name(db_path, "-o")
    targets.check_database(db_path)  # before any dump is read
    return partial(rdbscan.load, db_path=db_path)


def say_task(path: str, done: int, total: int, outcome: tuple) -> None:
    """One line as each worker's dump ends (`--jobs`, `--dask`): progress and failures per dump."""
    if outcome[0] != "ok":
        say(f"rdbscan: [{done}/{total}] {path}: the task failed: {outcome[1]}")
    elif outcome[1].error:
        say(f"rdbscan: [{done}/{total}] {outcome[1].error}")
    else:
        r = outcome[1]
        say(f"rdbscan: [{done}/{total}] {r.path}: {r.keys:,} keys in {r.parse_seconds:.1f} s")


def expand_dumps(paths) -> list[str]:
    """The dumps named on the command line, quoted patterns expanded to the files or objects
    they match (`'s3://backups/2026-11-24/shard-*.rdb.gz'`, rdb.remote.expand); one line and
    exit 6 for a pattern that matches nothing, 2 for a URL whose file system is missing."""
    try:
        return remote.expand(paths)
    except remote.NoMatch as e:
        raise CommandError(str(e), EXIT_INPUT) from None
    except remote.UnsupportedURL as e:
        raise CommandError(str(e), EXIT_USAGE) from None


def check_url(path: str) -> None:
    """CommandError (exit 2) when `path` is a URL whose file system is not installed."""
    if remote.is_url(path):
        try:
            remote.filesystem(path)
        except remote.UnsupportedURL as e:
            raise CommandError(str(e), EXIT_USAGE) from None


def check_dask() -> None:
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        raise CommandError(
            "--dask needs Dask's distributed scheduler, which is not installed "
            "(pip install 'rdbscan[dask]')",
            EXIT_USAGE,
        ) from None


def open_sql_target(path: str):
    """A connection on the Parquet dataset at `path` for `rdbscan sql` (the database's table
    names, docs/fleet.md); None when `path` is no dataset."""
    from ..db.parquet import is_dataset

    if not is_dataset(path):
        return None
    from ..reports.engine.dataset import open_dataset

    return open_dataset(path)
