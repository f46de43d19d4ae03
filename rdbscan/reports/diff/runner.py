"""The diff's SQL (`diff/queries/`, a namespace of its own) and the runner of its queries: the
base relations first, then each query with the diff's parameter values."""

from __future__ import annotations

from pathlib import Path

from ..engine import querylib
from ..format import plain


def queries_dir() -> Path:
    return Path(__file__).resolve().parent / "queries"


def diff_queries(include_base: bool = False) -> dict[str, querylib.Query]:
    out = {}
    for path in sorted(queries_dir().glob("*.sql")):
        if path.stem.startswith("_") and not include_base:
            continue
        q = querylib.parse_query(path)
        out[q.name] = q
    return out


BASE = ("_dkeys", "_dstats", "_dfamilies", "_dchanges")


class DiffRunner:
    """Runs the diff queries on one workspace with the diff's parameter values; the base
    relations are created before the first query (views with their parameters inlined, as
    relations.prepare does for the report)."""

    def __init__(self, con, values: dict, base: tuple[str, ...] = BASE):
        self.con = con
        self.values = values
        self.base = base
        self.queries = diff_queries(include_base=True)
        self.prepared = False

    def prepare(self) -> None:
        if self.prepared:
            return
        for name in self.base:
            q = self.queries[name]
            for statement in q.statements:
                if querylib.CREATES_VIEW.search(querylib.strip_comments(statement.sql)):
                    self.con.execute(querylib.inline_params(statement, self.values))
                else:
                    self.con.execute(statement.sql, querylib.bind(statement, self.values))
        self.prepared = True

    def rows(self, name: str, **overrides) -> list[dict]:
        self.prepare()
        return [
            plain(r)
            for r in querylib.run_dicts(self.con, self.queries[name], {**self.values, **overrides})
        ]

    def one(self, name: str, **overrides) -> dict:
        rows = self.rows(name, **overrides)
        return rows[0] if rows else {}
