"""The `rdbscan` command line: click commands over the library."""

from .main import main, run

__all__ = ["main", "run"]
