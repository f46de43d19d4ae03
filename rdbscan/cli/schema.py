"""`rdbscan schema`: a thin click wrapper over rdbscan.reports.schema."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import click

from ..reports import schema as sch


@click.command("schema")
@click.argument("sources", nargs=-1, required=True, metavar="DUMP... | FILE.duckdb")
@click.option(
    "-o",
    "--output",
    "out_path",
    metavar="FILE",
    help="Write the schema here (default: standard output). An existing file is replaced "
    "only if rdbscan wrote it; descriptions and rules written into it are kept.",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["toml", "markdown", "json"]),
    default="toml",
    show_default=True,
    help="toml: the file `report --schema` checks; markdown: the table "
    "for documentation; json: the same data for programs.",
)
@click.option(
    "--min-keys",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help="Leave out families with fewer keys (one-off keys).",
)
@click.option(
    "--dump-id", type=int, default=0, help="Only this dump of a multi-dump database (default: all)."
)
@click.option(
    "--delimiters",
    default=":",
    show_default=True,
    help="Characters that separate key segments (for families).",
)
@click.option(
    "--target",
    metavar="VERSION",
    help="Memory model used when loading a dump (see `rdbscan load`).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress display and no load summary.")
def schema_cmd(sources, out_path, fmt, min_keys, dump_id, delimiters, target, quiet):
    """Infer the key schema of a dump: one entry per key family with its pattern, type, TTL
    policy, keys, memory, sizes and an example, plus an empty description to fill in.

    Given dumps, rdbscan loads them into a temporary database first; given a database written
    by `rdbscan load`, it reads that.  Commit the TOML file and check later dumps against it with
    `rdbscan report DUMP --schema keyschema.toml --fail-on schema` (docs/schema.md).

    Example: rdbscan schema dump.rdb -o keyschema.toml
    """
    from ..errors import EXIT_DAMAGED, EXIT_INPUT, EXIT_USAGE, CommandError, worst_exit
    from .report import _has_dumps, _held_outcome, _is_duckdb, _load, _open

    if not delimiters:
        raise click.BadParameter("must not be empty", param_hint="--delimiters")
    is_db = len(sources) == 1 and _is_duckdb(sources[0])
    if not is_db:
        for s in sources:
            if s != "-" and not os.path.exists(s):
                raise CommandError(f"{s}: No such file or directory", EXIT_INPUT)
            if s != "-" and _is_duckdb(s):
                raise CommandError(f"{s}: give one database, or dumps, not both", EXIT_USAGE)
    if (
        out_path
        and os.path.lexists(out_path)
        and not (os.path.isfile(out_path) and sch.written_by_rdbscan(out_path))
    ):
        raise CommandError(
            f"{out_path}: exists and is not a schema rdbscan wrote; not "
            "overwriting it (choose another -o, or remove the file)",
            EXIT_USAGE,
        )
    tmpdir = None
    load_code = 0
    loaded: list = []
    try:
        if is_db:
            path = sources[0]
        else:
            tmpdir = tempfile.mkdtemp(prefix="rdbscan-")
            path = os.path.join(tmpdir, "schema.duckdb")
            load_code, loaded = _load(list(sources), path, target, quiet, False)
        con = _open(path)
        try:
            held = _held_outcome(con, dump_id, skip={r.dump_id for r in loaded})
            for line in held.lines(quiet=True):
                click.echo(line, err=True)
            load_code = worst_exit(load_code, held.code)
            if not _has_dumps(con, dump_id):
                sys.exit(load_code or EXIT_DAMAGED)  # nothing was read: the errors only
            label = ", ".join(os.path.basename(s) for s in sources)
            result = sch.infer(
                con,
                sch.InferOptions(dump_id=dump_id, delimiters=delimiters, min_keys=min_keys),
                source=label,
            )
        except ValueError as e:
            raise CommandError(str(e), EXIT_USAGE) from None
        finally:
            con.close()
    finally:
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)
    if out_path and fmt == "toml" and os.path.isfile(out_path):
        try:
            result = sch.merge_previous(result, sch.load_schema(out_path))
        except ValueError as e:
            raise CommandError(f"{e} (not replacing it)", EXIT_USAGE) from None
    text = sch.RENDERERS[fmt](result)
    if out_path:
        try:
            sch.write_output(out_path, text)
        except (sch.SchemaOutputError, OSError) as e:
            raise CommandError(str(e), EXIT_USAGE) from None
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
