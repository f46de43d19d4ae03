"""The filter options that `load`, `report`, `export`, `schema` and `diff` share
(rdbscan/db/filters.py)."""

from __future__ import annotations

import click

from ..db.filters import TYPE_NAMES, KeyFilter, parse_size
from ..errors import EXIT_USAGE, CommandError

_OPTIONS = (
    click.option(
        "--match",
        "f_match",
        multiple=True,
        metavar="GLOB",
        help="Keep only keys matching this Redis glob (SCAN MATCH syntax: * ? [a-z] \\x); "
        "repeatable: any of them. A plain prefix (user:*) is checked in the compiled loop.",
    ),
    click.option(
        "--regex",
        "f_regex",
        multiple=True,
        metavar="REGEX",
        help="Keep only keys in which this Python regex is found (anchor with ^); repeatable: "
        "any of them.",
    ),
    click.option(
        "--type",
        "f_types",
        multiple=True,
        type=click.Choice(TYPE_NAMES),
        help="Keep only keys of this type (module: any module value); repeatable.",
    ),
    click.option(
        "--db",
        "f_dbs",
        multiple=True,
        type=click.IntRange(min=0),
        help="Keep only keys of this database number; repeatable.",
    ),
    click.option(
        "--min-memory",
        "f_min_memory",
        metavar="SIZE",
        help="Keep only keys whose estimated memory (memory_bytes) is at least SIZE (10240, "
        "10KB, 1.5MiB).",
    ),
    click.option(
        "--min-length",
        "f_min_length",
        type=click.IntRange(min=0),
        help="Keep only keys of at least this length (STRLEN, or elements of a collection).",
    ),
    click.option(
        "--skip-expired",
        "f_skip_expired",
        is_flag=True,
        help="Leave out keys already expired when the snapshot was taken (aux ctime, else the "
        "file's modification time), as a server loading the dump would.",
    ),
)


def filter_options(f):
    """The filter options, in this order, as keyword arguments f_*."""
    for option in reversed(_OPTIONS):
        f = option(f)
    return f


def key_filter_from(kwargs: dict) -> KeyFilter | None:
    """The KeyFilter of the f_* options (taken out of `kwargs`), None when none is given."""
    values = {k: kwargs.pop(k) for k in list(kwargs) if k.startswith("f_")}
    try:
        min_memory = (
            parse_size(values["f_min_memory"]) if values.get("f_min_memory") is not None else None
        )
        flt = KeyFilter(
            match=list(values.get("f_match") or ()),
            regex=list(values.get("f_regex") or ()),
            types=list(values.get("f_types") or ()),
            dbs=list(values.get("f_dbs") or ()),
            min_memory=min_memory,
            min_length=values.get("f_min_length"),
            skip_expired=bool(values.get("f_skip_expired")),
        )
    except ValueError as e:
        raise CommandError(str(e), EXIT_USAGE) from None
    return flt if flt.active else None


def refuse_on_database(key_filter: KeyFilter | None, source: str) -> None:
    """The filters select keys while dumps load: given a database or a dataset, a command that
    would load nothing refuses them (CommandError EXIT_USAGE) rather than ignore them."""
    if key_filter is not None:
        raise CommandError(
            f"{source}: a database; the filters select keys while dumps load "
            "(give the dumps, or filter with `rdbscan load`)",
            EXIT_USAGE,
        )
