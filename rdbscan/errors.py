"""Exit codes, the one table (docs/exit-codes.md), and the failures a command reports as one
line.  The errors a dump can end with are in rdbscan/rdb/errors.py."""

from __future__ import annotations

# Exit codes: the one table (docs/exit-codes.md is checked against it by a test).  With several
# dumps, or a load followed by a report, the code that comes first in EXIT_PRECEDENCE wins.
EXIT_OK = 0
EXIT_INTERNAL = 1  # a bug in rdbscan: the message says "internal error" and how to report it
EXIT_USAGE = 2  # the command line, a rules file, a config file or an SQL query is wrong
EXIT_FINDINGS = 3  # report --fail-on: findings exceed their thresholds
EXIT_DAMAGED = 4  # a dump could not be read to its end; the keys read before are kept
EXIT_CHECKSUM = 5  # read to the end, but the CRC64 does not match, --skip-bad left keys out or
# values a Redis server refuses to load were flagged (keys.invalid)
EXIT_INPUT = 6  # an input (dump or database) does not exist or cannot be read
EXIT_DATABASE = 7  # the database cannot be created, opened or written
EXIT_MEMORY = 8  # a query ran out of DuckDB's memory limit (--memory-limit) and could not spill
EXIT_PARTIAL = 9  # rdbscan is older than a dump (or cannot read one of its types): read up to
# the first record it does not know, the keys before it kept; the file is not damaged
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT): 128 + SIGINT, as shells report it
EXIT_TERMINATED = 143  # SIGTERM (kill, timeout, systemd): 128 + SIGTERM

EXIT_CODES = {
    EXIT_OK: "success (for `report`: no `--fail-on` check failed)",
    EXIT_INTERNAL: "internal error: a bug in rdbscan (please report it with the `--debug` output)",
    EXIT_USAGE: "usage error: an unknown option, a missing argument, a value out of range (`--top 0`, "
    "`--set x=abc`), a rules or config file that is wrong (bad TOML, an invalid regex), "
    "an SQL error in a query you gave; `load`: a dump the database already holds, "
    "refused without `--replace` ([loading.md](loading.md)); `report`, `diff`, `trend`, "
    "`migrate`: outputs that are ambiguous or contradict each other (`-o out.html -f json`, "
    "`-o notes` with neither a known extension nor `--format`), or a database under a report's "
    "name (`--database report.json`, `load -o report.json`), refused before any dump is read "
    "([report.md](report.md#outputs))",
    EXIT_FINDINGS: "`report --fail-on`: findings exceed their thresholds (the report is still written)",
    EXIT_DAMAGED: "a dump could not be read to its end because it is damaged (truncated, corrupt, "
    "not an RDB file, damaged compressed data): the keys read before the damage are kept and "
    "`dumps.complete` is false",
    EXIT_CHECKSUM: "every dump was read to its end, but one is damaged: its CRC64 does not match, "
    "`--skip-bad` left keys out, or values a Redis server refuses to load were kept and flagged "
    "(`keys.invalid`, [hostile-inputs.md](hostile-inputs.md))",
    EXIT_INPUT: "an input does not exist or cannot be read (a mistyped path, no permission): "
    "the same in `load`, `report`, `sql` and `query`; nothing is loaded from it",
    EXIT_DATABASE: "the DuckDB database cannot be created, opened or written: its directory does not "
    "exist or is read-only, the disk is full, another process holds it, or the file is "
    "not a database rdbscan wrote (`--database notes`, or a DuckDB database with tables "
    "of its own, left untouched); `report`, `diff`, `trend`, `migrate` `-o FILE` or `--html "
    "FILE`: FILE cannot be written, or is a file rdbscan did not write (left untouched; both "
    "checked before any dump is read); `schema -o FILE`: the same; `export -o FILE`: FILE "
    "cannot be written (its directory is missing or read-only, the disk is full), or exists "
    "and `--force` was not given (left untouched, [export.md](export.md))",
    EXIT_MEMORY: "a query (`report`, `query`, `schema`, `diff`, `trend`, `sql`) needed more than "
    "DuckDB's memory limit (48 MB for `report`, `query` and `schema` over a database, dumps or "
    "a Parquet dataset, a query that cannot fit it running again at 80, 96, then 128 MB; "
    "128 MB for `diff` and `trend`; DuckDB's own for `sql`; unless `--memory-limit` or "
    "`RDBSCAN_MEMORY_LIMIT` sets another, which stands) and could not spill the rest to disk: "
    "nothing is "
    "written; run it again with a higher `--memory-limit`",
    EXIT_PARTIAL: "partial: rdbscan is older than a dump, or meets a record it cannot read (a type "
    "or opcode newer than it knows, a module value of Redis 4.0 release candidates, a VKCS "
    "envelope of a newer version): the keys before that record are kept, `dumps.complete` is "
    "false and `dumps.error_kind` is `unsupported`. The file is not damaged: upgrade rdbscan "
    "([inputs.md](inputs.md#newer-dumps))",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C): dumps loaded completely before are kept; a running "
    "query (`sql`, `query`, `report`) is stopped",
    EXIT_TERMINATED: "terminated (SIGTERM, as `kill` or `timeout` send it): the same clean-up as "
    "Ctrl-C",
}

# Which code a run reports when several apply (first listed wins).
EXIT_PRECEDENCE = (
    EXIT_TERMINATED,
    EXIT_INTERRUPTED,
    EXIT_INTERNAL,
    EXIT_DATABASE,
    EXIT_MEMORY,
    EXIT_USAGE,
    EXIT_INPUT,
    EXIT_DAMAGED,
    EXIT_PARTIAL,
    EXIT_CHECKSUM,
    EXIT_FINDINGS,
    EXIT_OK,
)


def worst_exit(*codes: int) -> int:
    """The exit code of a run where each of `codes` applies (EXIT_PRECEDENCE)."""
    present = set(codes) or {EXIT_OK}
    return next(c for c in EXIT_PRECEDENCE if c in present)


class CommandError(Exception):
    """A failure the command line reports as one line, `rdbscan: error: MESSAGE`, and exits with
    `code` (one of EXIT_CODES): a user mistake or a fault of the machine, never a bug."""

    def __init__(self, message: str, code: int = EXIT_USAGE):
        super().__init__(message)
        self.message = message
        self.code = code


def sql_error(exc: BaseException, what: str = "", hint: str = "") -> CommandError:
    """The one line, exit EXIT_USAGE, for an SQL error in a query the user gave (`sql`, `query`):
    DuckDB's message on one line (`Catalog Error: ... Did you mean "keys"? LINE 1: SELECT ...`),
    without the line of carets under the query."""
    lines = [" ".join(ln.split()) for ln in str(exc).splitlines()]
    text = " ".join(ln for ln in lines if ln and set(ln) != {"^"})
    return CommandError(f"{what}SQL error: {text}{hint}", EXIT_USAGE)


def not_overwritten(path: str, why: str = "", hint: str = "") -> CommandError:
    """The one line, exit EXIT_DATABASE, for an output that exists and that rdbscan leaves
    untouched (a report, schema or export it did not write, or was not told to replace):
    `PATH: exists[ and WHY]; not overwritten[ (HINT)]`."""
    line = f"{path}: exists{f' and {why}' if why else ''}; not overwritten"
    return CommandError(line + (f" ({hint})" if hint else ""), EXIT_DATABASE)


# What the operating system or DuckDB says about a database file it cannot use, and the line a
# user reads instead (matched on the message: DuckDB raises IOException for all of them).
_DATABASE_FAULTS = (
    ("no space left on device", "the disk is full (No space left on device)"),
    ("disk quota exceeded", "the disk quota is exceeded"),
    ("read-only file system", "the file system is read-only"),
    ("permission denied", "permission denied (the file or its directory is not writable)"),
    (
        "could not set lock",
        "another process has the database open{pid}: wait for it to finish, or use another file",
    ),
    (
        "not a valid duckdb database",
        "not a DuckDB database (for -o: give a new file name such as "
        "dump.duckdb, or a database rdbscan wrote)",
    ),
    (
        "trying to read a database file with version",
        "written by another DuckDB version than the one installed",
    ),
    ("no such file or directory", "its directory does not exist"),
    ("not a directory", "its directory does not exist"),
)


def database_fault(exc: BaseException, path: str | None = None) -> CommandError | None:
    """The one-line CommandError (EXIT_DATABASE) for a database fault, or None when `exc` is no
    fault of the machine or the user's file (then it is a bug)."""
    import errno
    import re

    if isinstance(exc, OSError) and exc.errno is not None:  # the OS's word, not DuckDB's
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM):
            return None
        text = exc.strerror or str(exc)
    else:
        text = str(exc)
    low = text.lower()
    for needle, reason in _DATABASE_FAULTS:
        if needle in low:
            pid = re.search(r"PID (\d+)", text)
            reason = reason.format(pid=f" (PID {pid.group(1)})" if pid else "")
            quoted = re.search(r'"([^"]+)"', text)
            where = path or getattr(exc, "filename", None) or (quoted.group(1) if quoted else None)
            return CommandError(f"{where}: {reason}" if where else reason, EXIT_DATABASE)
    return None


def exit_code_table() -> str:
    """EXIT_CODES as the Markdown table of docs/exit-codes.md."""
    rows = [
        f"| {code} | `{name}` | {EXIT_CODES[code]} |"
        for code, name in sorted(
            (v, k) for k, v in globals().items() if k.startswith("EXIT_") and isinstance(v, int)
        )
    ]
    order = ", ".join(str(c) for c in EXIT_PRECEDENCE)
    return (
        "| code | name | meaning |\n|---|---|---|\n" + "\n".join(rows) + "\n\n"
        f"When several codes apply (several dumps, or a load followed by a report) the first of "
        f"this order wins: {order}.\n"
    )
