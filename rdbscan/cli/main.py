"""The `rdbscan` command line: thin click wrappers over library functions."""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
import threading
import traceback

import click
import duckdb

from .. import __version__
from ..db.connections import (
    chosen_memory_limit,
    connect,
    interrupt_all,
    is_out_of_memory,
    out_of_memory_message,
)
from ..db.store import StoreError
from ..errors import (
    EXIT_DATABASE,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_MEMORY,
    EXIT_OK,
    EXIT_TERMINATED,
    CommandError,
    database_fault,
    sql_error,
)
from ..rdb.backend import describe as describe_backend
from .filters import filter_options, key_filter_from
from .options import checked_target, memory_limit_option, table_format_option
from .output import make_progress, say, say_jobs
from .starting import starting_handler


class Failure(click.ClickException):
    """A CommandError on its way out of click: one line, `rdbscan: error: ...`, and its exit code
    (the same under `rdbscan` and click's CliRunner)."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.exit_code = code  # type: ignore[misc]

    def show(self, file=None) -> None:
        say(f"rdbscan: error: {self.message}")


def _failure(e: BaseException) -> Failure | None:
    """The one line and exit code for a user mistake or a fault of the machine; None for a bug."""
    if isinstance(e, CommandError):
        return Failure(e.message, e.code)
    if isinstance(e, StoreError):  # a database rdbscan cannot use (another schema, ...)
        return Failure(str(e), EXIT_DATABASE)
    if is_out_of_memory(e):  # a query at its memory limit (--memory-limit raises it)
        return Failure(out_of_memory_message(e), EXIT_MEMORY)
    fault = database_fault(e)  # a full disk, a read-only or locked database, ...
    return None if fault is None else Failure(fault.message, fault.code)


# The commands of the other cli modules, imported when one of them runs or is listed (`--help`):
# `rdbscan load` does not import the report's sections, diff and migrate (0.2 s of its start).
LAZY_COMMANDS = {
    "report": ("report", "report_cmd"),
    "queries": ("report", "queries_cmd"),
    "query": ("report", "query_cmd"),
    "schema": ("schema", "schema_cmd"),
    "diff": ("diff", "diff_cmd"),
    "trend": ("diff", "trend_cmd"),
    "migrate": ("migrate", "migrate_cmd"),
    "export": ("export", "export_cmd"),
}


class Group(click.Group):
    """The `rdbscan` group: what `_failure` knows leaves any command as its one line and code;
    the commands of LAZY_COMMANDS are imported when asked for."""

    def list_commands(self, ctx) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx, cmd_name):
        if cmd_name in LAZY_COMMANDS and cmd_name not in self.commands:
            module, attr = LAZY_COMMANDS[cmd_name]
            command = getattr(importlib.import_module(f"{__package__}.{module}"), attr)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def every_command(self) -> dict[str, click.Command]:
        """Every command by name, the lazy ones imported (docs/gen_commands.py, the tests)."""
        return {name: self.get_command(None, name) for name in self.list_commands(None)}

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (CommandError, StoreError, OSError, duckdb.Error) as e:
            if _interrupt["seen"]:
                raise KeyboardInterrupt from None
            failure = _failure(e)
            if failure is None:
                raise
            if (ctx.obj or {}).get("debug"):
                traceback.print_exc()
            raise failure from e


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    __version__,
    prog_name="rdbscan",
    message=f"%(prog)s %(version)s (parser hot loops: {describe_backend()})",
)
@click.option("--debug", is_flag=True, help="Show the Python traceback when something fails.")
@click.pass_context
def main(ctx, debug):
    """rdbscan reads Redis and Valkey RDB dumps offline, writes one row per key into DuckDB
    and reports where the memory goes.

    Example: rdbscan load dump.rdb -o dump.duckdb && rdbscan sql dump.duckdb
    "SELECT type, count(*) FROM keys GROUP BY type"
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


@main.command()
@click.argument("dumps", nargs=-1, required=True)
@click.option(
    "-o",
    "--output",
    "db_path",
    metavar="FILE.duckdb",
    help="DuckDB database to write (created if missing; several dumps may share one; a "
    "report's name such as x.json, or a file that is not a database, is refused first).",
)
@click.option(
    "--parquet",
    "parquet_dir",
    metavar="DIR",
    help="Write a Parquet dataset here instead of a database (a directory, or s3://bucket/prefix): "
    "per dump, hive-partitioned by instance, snapshot and dump_id; `rdbscan report DIR` reads it "
    "(docs/fleet.md).",
)
@click.option(
    "--dask",
    "scheduler",
    metavar="ADDRESS",
    help="With --parquet: parse on a Dask cluster, one task per dump (e.g. tcp://host:8786; "
    "needs rdbscan[dask]).",
)
@click.option(
    "--retries",
    metavar="N",
    type=click.IntRange(min=0),
    default=None,
    help="With --dask: run a dump's task again up to N times when it fails (its worker lost, "
    "an error) before the dump is reported as not loaded (default: 1).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress display and no summary lines.")
@click.option(
    "--no-verify-crc",
    is_flag=True,
    help="Do not compute the CRC64 checksum (the dumps table says 'unverified').",
)
@click.option(
    "--target",
    metavar="VERSION",
    callback=checked_target,
    help="Estimate memory as this server would use it: a version of the dump's own server "
    "(8.1, 6.2), a server and version (redis-8.0, valkey-8.1; another server's profile is "
    "named in the report), an allocator alone (/16: a distribution package's 16-byte "
    "quantum, /16p), or both (8.6/16); default: the server that wrote the dump, 8-byte "
    "quantum (official builds).",
)
@click.option(
    "--skip-bad",
    is_flag=True,
    help="Leave out values that are damaged inside but whose extent is known (a blob "
    "that does not decode) and go on; dumps.skipped_keys counts them.",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Dumps loaded at once, each in its own process (default: the number of "
    "cores; one dump always loads in one process).",
)
@click.option(
    "--replace",
    is_flag=True,
    help="Load a dump the database already holds again, in place of the old one "
    "(without it such a dump is refused, exit 2; docs/loading.md).",
)
@click.option(
    "--allow-ratio",
    is_flag=True,
    help="Read compressed input that expands more than 200:1 (refused by default as "
    "a likely decompression bomb, exit 4; docs/hostile-inputs.md).",
)
@click.option(
    "--instance",
    metavar="NAME",
    help="Record the dumps as one snapshot of this instance (a server or a cluster), taken at "
    "the dump's aux ctime (else the file's modification time): a database of such snapshots "
    "is what `rdbscan trend` and `rdbscan diff` read (docs/diff.md).",
)
@filter_options
@click.pass_context
def load(
    ctx,
    dumps,
    db_path,
    parquet_dir,
    scheduler,
    retries,
    quiet,
    no_verify_crc,
    target,
    skip_bad,
    jobs,
    replace,
    allow_ratio,
    instance,
    **flt,
):
    """Load one or more RDB dumps into a DuckDB database, one row per key in `keys`.

    DUMPS are RDB files (or - for standard input), compressed or not (gzip, zstd, lz4, bzip2,
    xz, Valkey 9.2's VKCS), an AOF with an RDB preamble, Redis 7's appendonlydir/ or its .manifest, or a
    replication capture ($EOF:... or $<length>), or URLs (s3://, gs://, https://); a quoted
    pattern ('s3://bucket/shard-*.rdb.gz') is expanded by rdbscan.  Loading several dumps into one database
    (the shards of a cluster) gives each its own dump_id.  A damaged dump keeps the rows read
    before the damage; its `dumps` row says complete = false, and the command exits with 4
    (5 when only the checksum does not match).  A dump newer than rdbscan is read on up to the
    first record rdbscan does not know (exit 9: partial, the file is not damaged).  A dump the
    database already holds (same file contents, whatever the path) is refused with exit 2
    unless --replace.  The filter options (--match, --regex, --type, --db, --min-memory,
    --min-length, --skip-expired) keep only the keys they select: the others are read but never
    become rows (docs/export.md).

    Example: rdbscan load shard1.rdb shard2.rdb -o cluster.duckdb
    """
    from ..db.load import summarize
    from ..db.outcome import outcome
    from .fleet import expand_dumps, load_target

    dumps = expand_dumps(dumps)
    key_filter = key_filter_from(flt)
    jobs = jobs or os.cpu_count() or 1
    parallel = (jobs > 1 and len(dumps) > 1) or scheduler is not None
    if parallel and not quiet:
        say_jobs(len(dumps), jobs)
    results = load_target(db_path, parquet_dir, scheduler, dumps, quiet, retries)(
        list(dumps),
        progress=None if parallel else make_progress(quiet),
        verify_crc=not no_verify_crc,
        target=target,
        skip_bad=skip_bad,
        jobs=jobs,
        existing="replace" if replace else "refuse",
        allow_ratio=allow_ratio,
        instance=instance,
        key_filter=key_filter,
    )
    debug = (ctx.obj or {}).get("debug")
    for r in results:
        if debug and r.exception is not None:
            traceback.print_exception(type(r.exception), r.exception, r.exception.__traceback__)
        elif debug and r.traceback_text:
            click.echo(r.traceback_text, err=True, nl=False)
    done = outcome(results, summary=summarize)
    for line in done.lines(quiet):
        say(line)
    sys.exit(done.code)


@main.command()
@click.argument("database", metavar="FILE.duckdb")
@click.argument("query")
@table_format_option
@memory_limit_option
def sql(database, query, fmt):
    """Run an ad-hoc SQL query on a database written by rdbscan and print the result.

    Example: rdbscan sql dump.duckdb "SELECT key, memory_bytes FROM keys ORDER BY 2 DESC
    LIMIT 10"
    """
    import duckdb

    from ..db.parquet import is_database_path
    from .fleet import open_sql_target
    from .sqlout import print_result

    con = open_sql_target(database)
    if con is None and not os.path.exists(database):
        raise CommandError(f"{database}: No such file or directory", EXIT_INPUT)
    if con is None and not is_database_path(database):  # a dump given where a database goes
        raise CommandError(
            f"{database}: not a DuckDB database (load a dump with `rdbscan load` first)",
            EXIT_DATABASE,
        )
    if con is None:
        from ..reports.engine.database import show_families_again

        con = connect(database, read_only=True)
        show_families_again(con)
    limit = chosen_memory_limit()  # `sql` keeps DuckDB's default unless one is given
    con.execute(f"SET memory_limit = '{limit}'" if limit else "RESET memory_limit")
    try:
        cur = con.execute(query)
    except duckdb.Error as e:
        if is_out_of_memory(e):
            raise
        raise sql_error(e) from None
    if cur.description is None:
        return
    columns = [d[0] for d in cur.description]
    print_result(columns, cur.fetchall(), fmt)


_interrupt: dict = {"seen": False, "signal": signal.SIGINT}


def _on_signal(signum, frame):
    """Ctrl-C (SIGINT) or SIGTERM: stop the work (KeyboardInterrupt) and let the clean-up run to
    its end; a second signal while DuckDB closes the database would end the process in a C++
    terminate.  DuckDB turns a KeyboardInterrupt raised inside a query into RuntimeError('Query
    interrupted'), or goes on with the query: another thread asks every open connection to stop
    (a Python handler must not call into DuckDB while the query holds it).  `seen` says that
    whatever fails from now on failed because of the signal."""
    _interrupt["seen"] = True
    _interrupt["signal"] = signum
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    threading.Thread(target=interrupt_all, name="rdbscan-interrupt", daemon=True).start()
    raise KeyboardInterrupt


def run():
    """Entry point with the no-traceback guarantee: one line on stderr and an exit code from
    rdbscan.errors."""
    if signal.getsignal(signal.SIGINT) in (signal.default_int_handler, starting_handler):
        signal.signal(signal.SIGINT, _on_signal)
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, starting_handler):
        signal.signal(signal.SIGTERM, _on_signal)
    code = _run(debug="--debug" in sys.argv[1:])
    gc.collect()  # what a failure's traceback held (DuckDB connections) goes before the interpreter
    sys.exit(code)


def _run(debug: bool, args: list[str] | None = None, prog_name: str | None = None) -> int:
    """The command in `args` (default: sys.argv) and its exit code; tests/common.py runs the
    command line in-process through here."""
    try:
        main.main(args=args, prog_name=prog_name, standalone_mode=False)
    except SystemExit as e:  # a command's own exit code
        if e.code == 1 and _stdout_closed(e):  # how click and rich end on a closed pipe
            return _closed_pipe_exit()
        return e.code if isinstance(e.code, int) else EXIT_OK if e.code is None else EXIT_INTERNAL
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.ClickException as e:
        e.show()
        return e.exit_code
    except click.exceptions.Abort as e:  # click turns Ctrl-C into Abort
        if isinstance(e.__context__, KeyboardInterrupt):
            return _interrupted()
        click.echo("rdbscan: aborted", err=True)
        return EXIT_INTERNAL
    except BrokenPipeError:
        return _closed_pipe_exit()
    except KeyboardInterrupt:
        return _interrupted()
    except Exception as e:  # the promise: no traceback reaches a user without --debug
        if _interrupt["seen"]:  # DuckDB's "Query interrupted", or what a Ctrl-C cut short
            return _interrupted()
        if debug:
            traceback.print_exc()
        else:
            say(
                f"rdbscan: internal error: {type(e).__name__}: {e} (a bug in rdbscan: "
                f"please report it with the output of --debug)"
            )
        return EXIT_INTERNAL
    return EXIT_OK


def _stdout_closed(end: SystemExit) -> bool:
    """Whether the reader of standard output has closed it: click and rich catch that
    BrokenPipeError themselves and exit 1 (rich from inside its handler, after it put
    /dev/null in place of stdout; click after, stdout left as it was, which polls as an
    error: a pipe without a reader)."""
    if isinstance(end.__context__, BrokenPipeError):
        return True
    try:
        import select

        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poll.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll (Windows), no descriptor
        return False


def _closed_pipe_exit() -> int:
    """`rdbscan report ... | head`: the reader has what it wanted; nothing more to say, and
    nowhere to say it (what is still buffered goes to /dev/null): exit 0."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_OK


def _interrupted() -> int:
    if _interrupt["signal"] == signal.SIGTERM:
        click.echo("rdbscan: terminated", err=True)
        return EXIT_TERMINATED
    click.echo("rdbscan: interrupted", err=True)
    return EXIT_INTERRUPTED
