"""Report commands (report, queries, query); filled in by the report issue."""


def register(group) -> None:
    """Add the report commands to the `rdbscan` click group."""
