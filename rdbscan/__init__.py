"""rdbscan: an offline analyzer for Redis and Valkey RDB dump files.

    source bytes -> streaming parser -> key rows -> Arrow batches -> DuckDB -> bundled SQL -> renderers

The library API, which the `rdbscan` command line wraps:

    import rdbscan
    results = rdbscan.load(["dump.rdb"], "dump.duckdb")   # one DumpResult per dump
    report = rdbscan.report("dump.duckdb")                # the report (docs/json.md), a dict
    report = rdbscan.report(["dump.rdb"])                 # load (temporary database), report

Each step of the pipeline is a package: rdb/ (bytes to records), model/ (what a key is and
costs), db/ (DuckDB), reports/ (bundled SQL, the report, renderers), cli/ (the command line);
docs/architecture.md.
"""

from ._version import __version__

__all__ = ["__version__", "load", "load_dataset", "report"]


def __getattr__(name: str):
    """`rdbscan.load`, `rdbscan.load_dataset` and `rdbscan.report`, imported on first use:
    `import rdbscan` (which the console script does before anything else) stays light, so that a
    Ctrl-C at start-up finds the command line's handler in place (rdbscan/cli/__init__.py)."""
    if name in ("load", "load_dataset", "report"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'rdbscan' has no attribute {name!r}")
