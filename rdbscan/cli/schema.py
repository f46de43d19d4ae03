"""`rdbscan schema`: a thin click wrapper over rdbscan.reports.schema."""

from __future__ import annotations

import os
import sys

import click

from ..errors import EXIT_DAMAGED
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
    from ..errors import EXIT_DATABASE, EXIT_USAGE, CommandError
    from ..reports.engine.sources import is_database, open_sources
    from .fleet import expand_dumps
    from .output import make_progress

    sources = expand_dumps(sources)
    named = SCHEMA_FORMATS.get(os.path.splitext(out_path or "")[1].lower())
    if named and fmt and fmt != named:
        raise CommandError(
            f"-o {out_path}: the name says {named}, --format says {fmt} (give one of them)",
            EXIT_USAGE,
        )
    fmt = fmt or named or "toml"
    key_filter = key_filter_from(flt)
    if is_database(sources):
        refuse_on_database(key_filter, sources[0])
    if (
        out_path
        and os.path.lexists(out_path)
        and not (os.path.isfile(out_path) and sch.written_by_rdbscan(out_path))
    ):
        raise sch.not_ours(out_path)
    if out_path:  # checked before the dumps are read, not after
        where = os.path.dirname(os.path.abspath(out_path))
        if not os.path.isdir(where):
            raise CommandError(f"{out_path}: its directory does not exist", EXIT_DATABASE)
        if not os.access(where, os.W_OK):
            raise CommandError(
                f"{out_path}: cannot be written (its directory is read-only or not yours)",
                EXIT_DATABASE,
            )
    with open_sources(
        sources,
        dump_id=dump_id,
        say=redacted_say(redact, delimiters),
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
                sch.InferOptions(
                    dump_id=dump_id, delimiters=delimiters, min_keys=min_keys, relations=relations
                ),
                source=label,
                warn=lambda m: click.echo(f"rdbscan: {m}", err=True),
            )
        except ValueError as e:
            raise CommandError(str(e), EXIT_USAGE) from None
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
        try:
            sch.write_output(out_path, text)
        except sch.SchemaOutputError as e:  # a file put there since the check above
            raise CommandError(str(e), EXIT_DATABASE) from None
        except OSError as e:  # a full disk, a read-only file system: the machine, exit 7
            raise CommandError(f"{out_path}: {e.strerror or e}", EXIT_DATABASE) from None
        if not quiet:
            click.echo(
                f"rdbscan: schema of {len(result['families'])} families written to {out_path}",
                err=True,
            )
    else:
        click.echo(text, nl=False)
    sys.exit(load_code)


def register(group) -> None:
    group.add_command(schema_cmd)
