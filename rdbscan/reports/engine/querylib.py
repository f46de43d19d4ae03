"""The bundled SQL files: finding them, reading their header, running them.

Each lives in a `queries/` folder next to the code that runs it: the shared base relations in
`engine/queries/`, each section's in its package (`report/sections/*/queries/`), the key schema's
in `schema/queries/`; one namespace of names for `rdbscan queries` and `rdbscan query`.  (The
diff's, of the same names, are its own: `diff/queries/`.)

Each file starts with a comment block (docs/queries.md, "Adding a query"):

    -- name: patterns
    -- answers: Which key families hold the memory ...
    --          (continued on following comment lines)
    -- params:
    --   top (20)   families listed before the rest folds into (other)
    --   from _rlimits.sql: hash_max_listpack_entries, hash_max_listpack_value

Parameters are DuckDB named prepared-statement parameters (`$top`); the default in parentheses is a
Python literal (number, 'string', [list]).  A `from FILE.sql: NAME, ...` line (`*`: all) takes
parameters as another bundled file declares them, so that a default is written once (the
compact-encoding thresholds: `_rlimits.sql`).  Files whose name starts with `_` build base relations
(`_rkeys.sql` -> TEMP VIEW rkeys, `_rfamilies.sql` -> TEMP TABLE rfamilies, ...): `prepare()`
creates them before queries that mention them.  A view cannot hold prepared-statement parameters, so a base
relation that is a view gets its parameter values written into its SQL as literals.

A file whose header has a `-- by dump:` entry (what the query answers per dump) is two queries:
NAME as written, and NAME_by_dump, the same SQL with each `/*by dump: TEXT*/` comment replaced by
its TEXT (`GROUP BY /*by dump: dump_id,*/ family`): the figures of each dump's report alone, from
one grouped pass, for a report over many dumps.  The steps the two share are written once.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path

import duckdb

_PARAM_LINE = re.compile(r"^--\s+([a-z_][a-z0-9_]*)\s+\((.*?)\)\s*(.*)$")
_PARAM_FROM = re.compile(r"^--\s+from (\S+\.sql):\s*(.+)$")
_PARAM_USE = re.compile(r"\$([a-z_][a-z0-9_]*)")
# `/*by dump: dump_id,*/`: text the NAME_by_dump form of a query has, and NAME has as a comment
_BY_DUMP = re.compile(r"/\*by dump:\s?(.*?)\*/", re.S)


REPORTS = Path(__file__).resolve().parent.parent  # rdbscan/reports
# The folders of the bundled SQL, under REPORTS, installed with the package.
QUERY_DIRS = ("engine/queries", "report/sections/*/queries", "schema/queries")


def query_files() -> list[Path]:
    """Every bundled SQL file, by file name."""
    return sorted(
        (p for pattern in QUERY_DIRS for p in REPORTS.glob(pattern + "/*.sql")),
        key=lambda p: p.name,
    )


def bundled_file(name: str) -> Path:
    """The bundled file `name` (`_rlimits.sql`), wherever it is."""
    found = [p for p in query_files() if p.name == name]
    return found[0] if found else REPORTS / "engine" / "queries" / name


@dataclass
class Param:
    name: str
    default: object
    description: str


@dataclass
class Query:
    name: str
    path: Path
    sql: str
    answers: str
    params: dict[str, Param] = field(default_factory=dict)
    # the header's `by dump:` entry: what the query's NAME_by_dump form answers (see by_dump())
    by_dump: str = ""

    @property
    def used_params(self) -> set[str]:
        return set(_PARAM_USE.findall(strip_comments(self.sql)))

    @cached_property
    def statements(self) -> list[Query]:
        """The file's statements as queries of their own (same name and parameters), in
        order: DuckDB takes prepared-statement parameters for one statement at a time."""
        parts = [st.query for st in duckdb.extract_statements(self.sql)]
        if len(parts) <= 1:
            return [self]
        return [
            Query(name=self.name, path=self.path, sql=sql, answers=self.answers, params=self.params)
            for sql in parts
        ]

    @property
    def summary(self) -> str:
        """First sentence of `answers`, for `rdbscan queries`."""
        text = " ".join(self.answers.split())
        m = re.match(r"(.+?[.?!])(\s|$)", text)
        return m.group(1) if m else text


def strip_comments(sql: str) -> str:
    return "\n".join(
        line.split("--", 1)[0] if not line.lstrip().startswith("--") else ""
        for line in sql.splitlines()
    )


_PARSED: dict[tuple, Query] = {}


def parse_query(path: Path) -> Query:
    """The query in a .sql file (remembered while the file is unchanged: a report asks for
    the bundled queries dozens of times)."""
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)
    q = _PARSED.get(key)
    if q is None:
        q = _PARSED[key] = _parse_query(path)
    return q


def _parse_query(path: Path) -> Query:
    text = path.read_text(encoding="utf-8")
    name, answers, params = path.stem, [], {}
    per_dump: list[str] = []
    section = None
    for line in text.splitlines():
        if not line.startswith("--"):
            if line.strip():
                break
            continue
        body = line[2:].strip()
        if body.startswith("name:"):
            name, section = body[5:].strip(), None
        elif body.startswith("answers:"):
            answers.append(body[8:].strip())
            section = "answers"
        elif body.startswith("params:"):
            section = "params"
        elif body.startswith("by dump:"):
            per_dump.append(body[8:].strip())
            section = "by dump"
        elif re.match(r"^-- [a-z][^:(]*:", line):
            section = "other"  # any further header entry ends the previous one
        elif section in ("answers", "by dump") and line.startswith("--     "):
            (answers if section == "answers" else per_dump).append(body)
        elif section == "params":
            m = _PARAM_LINE.match(line)
            shared = _PARAM_FROM.match(line)
            if shared:
                params.update(_params_from(path, shared.group(1), shared.group(2)))
            elif m:
                try:
                    default = ast.literal_eval(m.group(2))
                except (ValueError, SyntaxError) as exc:
                    raise ValueError(
                        f"{path.name}: bad default for {m.group(1)}: {m.group(2)}"
                    ) from exc
                params[m.group(1)] = Param(m.group(1), default, m.group(3).strip())
        else:
            section = None
    return Query(
        name=name,
        path=path,
        sql=text,
        answers=" ".join(answers),
        params=params,
        by_dump=" ".join(per_dump),
    )


def by_dump(query: Query) -> Query:
    """The query's NAME_by_dump form: its SQL with each `/*by dump: TEXT*/` written as TEXT."""
    if not query.by_dump or not _BY_DUMP.search(query.sql):
        raise ValueError(f"{query.path.name}: no `by dump:` entry and /*by dump: ...*/ text")
    return Query(
        name=query.name + "_by_dump",
        path=query.path,
        sql=_BY_DUMP.sub(lambda m: m.group(1), query.sql),
        answers=query.by_dump,
        params=query.params,
    )


def _params_from(path: Path, source: str, names: str) -> dict[str, Param]:
    """The parameters `names` (comma-separated, or `*`) as the bundled `source` declares them."""
    declared = parse_query(bundled_file(source)).params
    wanted = list(declared) if names.strip() == "*" else [n.strip() for n in names.split(",")]
    missing = [n for n in wanted if n not in declared]
    if missing:
        raise ValueError(f"{path.name}: {source} declares no parameter {', '.join(missing)}")
    return {n: declared[n] for n in wanted}


def bundled_queries(include_base: bool = False) -> dict[str, Query]:
    """The bundled queries by name (`_*.sql`, the base relations, with include_base).  Read and
    parsed once per process (package data): a report over several dumps looks them up hundreds
    of times (each dump's report alone), and reading them each time was 14 % of its CPU."""
    return dict(_bundled_queries(include_base))


@cache
def _bundled_queries(include_base: bool) -> dict[str, Query]:
    out: dict[str, Query] = {}
    for path in query_files():
        if path.stem.startswith("_") and not include_base:
            continue
        q = parse_query(path)
        for one in (q, by_dump(q)) if q.by_dump else (q,):
            if one.name in out:
                raise ValueError(
                    f"two bundled queries named {one.name}: {out[one.name].path}, {path}"
                )
            out[one.name] = one
    return out


def get_query(name: str) -> Query:
    queries = bundled_queries(include_base=True)
    if name.endswith(".sql"):
        name = name[:-4]
    if name not in queries or name.startswith("_"):
        raise KeyError(name)
    return queries[name]


def coerce(value: str, default: object) -> object:
    """Turn a `--param k=v` string into the type of the parameter's default."""
    if isinstance(default, bool):
        return value.lower() in ("1", "true", "yes", "on")
    if isinstance(default, int):
        try:
            number = int(value)
        except ValueError:
            raise ValueError(f"{value!r} is not a whole number") from None
        if not 0 <= number < 2**63:
            raise ValueError(f"{value} is out of range (0 to {2**63 - 1})")
        return number
    if isinstance(default, float):
        try:
            number = float(value)  # type: ignore[assignment]
        except ValueError:
            raise ValueError(f"{value!r} is not a number") from None
        if not math.isfinite(number):
            raise ValueError(f"{value} is not a finite number")
        return number
    if isinstance(default, list):
        return [v.strip() for v in value.split(",") if v.strip()]
    return value


def bind(query: Query, values: dict | None = None) -> dict:
    """Parameters for one execution: defaults, overridden by values, restricted to those used."""
    values = values or {}
    out = {}
    for name in query.used_params:
        if name in values:
            out[name] = values[name]
        elif name in query.params:
            out[name] = query.params[name].default
        else:
            raise ValueError(f"{query.name}: parameter ${name} has no default and no value")
    return out


def sql_literal(value) -> str:
    """A parameter value as a DuckDB SQL literal (for views, which cannot take parameters)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return f"'{value}'::DOUBLE"
        return repr(value)
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]::VARCHAR[]"
        return "[" + ", ".join(sql_literal(v) for v in value) + "]"
    return "'" + str(value).replace("'", "''") + "'"


def inline_params(query: Query, values: dict | None = None) -> str:
    """The query's SQL with each `$name` replaced by its value as a literal (see bind())."""
    bound = bind(query, values)
    out = []
    for line in query.sql.splitlines():
        code, sep, comment = line.partition("--")  # as strip_comments: no `--` inside strings
        out.append(_PARAM_USE.sub(lambda m: sql_literal(bound[m.group(1)]), code) + sep + comment)
    return "\n".join(out)


CREATES_VIEW = re.compile(r"\bCREATE\s+(?:OR\s+REPLACE\s+)?TEMP(?:ORARY)?\s+VIEW\b", re.I)


def run(con: duckdb.DuckDBPyConnection, query: Query, values: dict | None = None):
    """Execute one query; returns (column names, rows as tuples)."""
    cur = con.execute(query.sql, bind(query, values))
    cols = [d[0] for d in cur.description] if cur.description else []
    return cols, cur.fetchall()


def run_dicts(con, query: Query, values: dict | None = None) -> list[dict]:
    cols, rows = run(con, query, values)
    return [dict(zip(cols, r)) for r in rows]
