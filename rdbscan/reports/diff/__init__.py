"""`rdbscan diff` and `rdbscan trend` (docs/diff.md): their JSON documents as types (`data`,
`trend_data`), the snapshots compared (`snapshots`), the workspace that attaches their databases
(`workspace`), the diff (`build`) and the trend (`trend`) run by the SQL of diff/queries/,
`--fail-on` (`fail_on`), and their drawing as text, markdown (`render`, `trend_render`) and HTML
(`html`)."""

from .build import DiffOptions, build_diff, check_options
from .fail_on import FAIL_RULES, parse_fail_on
from .snapshots import DiffError, Snapshot
from .workspace import Workspace, history_pair, is_database_spec, resolve_side, snapshot_of_dumps

__all__ = [
    "FAIL_RULES",
    "DiffError",
    "DiffOptions",
    "Snapshot",
    "Workspace",
    "build_diff",
    "check_options",
    "history_pair",
    "is_database_spec",
    "parse_fail_on",
    "resolve_side",
    "snapshot_of_dumps",
]
