"""`rdbscan schema`: a thin click wrapper over rdbscan.reports.schema."""

from __future__ import annotations

import os
import sys

import click

from ..errors import EXIT_DAMAGED, EXIT_DATABASE, EXIT_USAGE, CommandError
from ..reports import schema as sch
from .filters import filter_options, key_filter_from, refuse_on_database
from .options import checked_target, delimiters_option, memory_limit_option
from .redact import redact_options, redacted_say

# A schema file's format, from its extension (as `report -o`: rdbscan/cli/targets.py).
SCHEMA_FORMATS = {".toml": "toml", ".md": "markdown", ".markdown": "markdown", ".json": "json"}


@click.command("schema")
@click.argument("sources", nargs=-1, required=True, metavar="DUMP... | FILE.duckdb")
@click.option(
    "-o",
    "--output",
    "out_path",
    metavar="FILE",
    help="Write the schema here (default: standard output), in the format its name says "
    "(.toml, .md, .json; another name: --format). An existing file is replaced "
    "only if rdbscan wrote it; descriptions and rules written into it are kept.",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(list(SCHEMA_FORMATS.values())),
    default=None,
    help="toml (the default): the file `report --schema` checks; markdown: the table "
    "for documentation; json: the same data for programs.  Default: from -o FILE's name, "
    "else toml.",
)
@click.option(
    "--min-keys",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help="Leave out families with fewer keys (one-off keys).",
)
@click.option(
    "--dump-id",
    type=int,
    default=0,
    help="Only this dump of a multi-dump database (default: all, but of an instance only its "
    "latest snapshot).",
)
@delimiters_option
@memory_limit_option
@click.option(
    "--target",
    metavar="VERSION",
    callback=checked_target,
    help="Memory model used when loading a dump (see `rdbscan load`).",
)
@click.option(
    "--relations",
    is_flag=True,
    help="Also find which families hold names of other keys (members -> book:{id}): reads "
    "again the first members of a few small collections per family from the dump files "
    "(the sample is stated in the output).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress display and no load summary.")
@filter_options
@redact_options
def schema_cmd(
    sources, out_path, fmt, min_keys, dump_id, delimiters, target, relations, quiet, redact, **flt
):
    """Infer the key schema of a dump: one entry per key family with its pattern, type, TTL
    policy, keys, memory, sizes and an example, plus an empty description to fill in.

    Given dumps, rdbscan loads them into a temporary database first; given a database written
    by `rdbscan load`, it reads that.  Commit the TOML file and check later dumps against it with
    `rdbscan report DUMP --schema keyschema.toml --fail-on schema` (docs/schema.md).

    Example: rdbscan schema dump.rdb -o keyschema.toml
    """
    from ..reports.engine.sources import is_database
    from .fleet import expand_dumps

    sources = expand_dumps(sources)
    fmt = _schema_format(out_path, fmt)
    key_filter = key_filter_from(flt)
    if is_database(sources):
        refuse_on_database(key_filter, sources[0])
    if out_path:  # checked before the dumps are read, not after
        _check_output(out_path)
    options = sch.InferOptions(
        dump_id=dump_id, delimiters=delimiters, min_keys=min_keys, relations=relations
    )
    load_code, result = _infer(
        sources, options, redacted_say(redact, delimiters), quiet, target, key_filter
    )
    if out_path and fmt == "toml" and os.path.isfile(out_path):
        try:
            result = sch.merge_previous(result, sch.load_schema(out_path))
        except ValueError as e:
            raise CommandError(f"{e} (not replacing it)", EXIT_USAGE) from None
    if redact is not None:
        from ..export.redact import redact_data

        result = redact_data(result, redact, delimiters)
    text = sch.RENDERERS[fmt](result)
    if out_path:
        _write_schema(out_path, text, len(result["families"]), quiet)
    else:
        click.echo(text, nl=False)
    sys.exit(load_code)


def _schema_format(out_path: str | None, fmt: str | None) -> str:
    """The output format: --format, else the one -o FILE's name says, else toml.  A name and
    a --format that disagree are a usage error (exit 2)."""
    named = SCHEMA_FORMATS.get(os.path.splitext(out_path or "")[1].lower())
    if named and fmt and fmt != named:
        raise CommandError(
            f"-o {out_path}: the name says {named}, --format says {fmt} (give one of them)",
            EXIT_USAGE,
        )
    return fmt or named or "toml"


def _check_output(out_path: str) -> None:
    """Refuse -o FILE before any dump is read: a file rdbscan did not write is never replaced,
    and a missing or read-only directory is said now rather than after a long load."""
    if os.path.lexists(out_path) and not (
        os.path.isfile(out_path) and sch.written_by_rdbscan(out_path)
    ):
        raise sch.not_ours(out_path)
    where = os.path.dirname(os.path.abspath(out_path))
    if not os.path.isdir(where):
        raise CommandError(f"{out_path}: its directory does not exist", EXIT_DATABASE)
    if not os.access(where, os.W_OK):
        raise CommandError(
            f"{out_path}: cannot be written (its directory is read-only or not yours)",
            EXIT_DATABASE,
        )


def _infer(sources, options, say, quiet: bool, target, key_filter):
    """Open the sources (dumps loaded into a temporary database, or a database read as it is)
    and infer their schema.  Returns the load's exit code and the schema; exits with the load's
    code (else 4) when no dump could be read at all."""
    from ..reports.engine.sources import open_sources
    from .output import make_progress

    with open_sources(
        sources,
        dump_id=options.dump_id,
        say=say,
        quiet=quiet,
        progress=make_progress(quiet),
        target=target,
        key_filter=key_filter,
    ) as db:
        load_code = db.code
        if not db.has_dumps:
            sys.exit(load_code or EXIT_DAMAGED)  # nothing was read: the errors only
        try:
            label = ", ".join(os.path.basename(s) for s in sources)
            result = sch.infer(
                db.con,
                options,
                source=label,
                warn=lambda m: click.echo(f"rdbscan: {m}", err=True),
            )
        except ValueError as e:
            raise CommandError(str(e), EXIT_USAGE) from None
    return load_code, result


def _write_schema(out_path: str, text: str, families: int, quiet: bool) -> None:
    """Write the schema to -o FILE (checked by _check_output, so a file that appeared since is
    refused, exit 7, as is a full disk), and say so unless quiet."""
    try:
        sch.write_output(out_path, text)
    except sch.SchemaOutputError as e:  # a file put there since the check above
        raise CommandError(str(e), EXIT_DATABASE) from None
    except OSError as e:  # a full disk, a read-only file system: the machine, exit 7
        raise CommandError(f"{out_path}: {e.strerror or e}", EXIT_DATABASE) from None
    if not quiet:
        noun = "family" if families == 1 else "families"
        click.echo(f"rdbscan: schema of {families:,} {noun} written to {out_path}", err=True)
