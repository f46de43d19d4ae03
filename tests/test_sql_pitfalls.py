"""DuckDB constructs the bundled queries must not use, each with what it cost."""

from __future__ import annotations

import re

from rdbscan.reports.engine import querylib

QUERIES = querylib.REPORTS  # every .sql: the report's, the key schema's, the diff's


def test_no_window_count_star_with_a_filter():
    """`count(*) FILTER (WHERE ...) OVER (...)` takes time in the square of the rows in DuckDB
    2.0 (every other window count and sum takes linear time): over a million families diff's
    `families` ran for more than ten minutes. `count(CASE WHEN ... THEN 1 END) OVER` counts
    the same rows, as a BIGINT too."""
    found = [
        f"{path.relative_to(QUERIES)}: {m.group(0)}"
        for path in sorted(QUERIES.rglob("*.sql"))
        for m in re.finditer(
            r"count\(\s*\*\s*\)\s*FILTER\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*OVER",
            querylib.strip_comments(path.read_text()),
            re.I,
        )
    ]
    assert found == []
    assert len(list(QUERIES.rglob("*.sql"))) > 70
