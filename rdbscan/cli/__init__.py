"""The `rdbscan` command line: click commands over the library (the group is
rdbscan.cli.main.main; `run` is the console script's entry point)."""

from .main import run

__all__ = ["run"]
