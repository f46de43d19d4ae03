"""The `--redact` options every command that writes key names takes (rdbscan/export/redact.py,
docs/redact.md): one decorator, one keyword argument `redact` (a Redactor, or None)."""

from __future__ import annotations

import functools
from collections.abc import Callable

import click

from ..export.redact import ENV_SECRET, Redactor

_OPTIONS = (
    click.option(
        "--redact",
        "redact_keys",
        is_flag=True,
        help="Show each key name as its family and a keyed hash (user:{id}:profile@3fa9c21b07), "
        "never the name, its ids or tokens; values and user-named strings neither "
        f"(docs/redact.md). Secret: --redact-secret, else ${ENV_SECRET}, else a random one.",
    ),
    click.option(
        "--redact-strict",
        is_flag=True,
        help="As --redact, and hash the family names too (family-5d0e77a1c4).",
    ),
    click.option(
        "--redact-secret",
        metavar="FILE",
        help="Read the redaction secret from this file (implies --redact): the same secret "
        "gives the same hashes in every run, so redacted outputs compare.",
    ),
)


def redact_options(f):
    """Add --redact, --redact-strict and --redact-secret to a click command, given to it as
    one argument: `redact`, the Redactor (None without them)."""

    @functools.wraps(f)
    def wrapper(*args, redact_keys=False, redact_strict=False, redact_secret=None, **kwargs):
        redactor = None
        if redact_keys or redact_strict or redact_secret is not None:
            level = "strict" if redact_strict else "keys"
            redactor = Redactor.from_options(level, redact_secret)
            if redactor.source == "random":
                click.echo(
                    f"rdbscan: --redact without a secret ({ENV_SECRET} or --redact-secret FILE): "
                    "a random one for this run, so its hashes match no other run's",
                    err=True,
                )
        return f(*args, redact=redactor, **kwargs)

    for option in reversed(_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


def shown(redact: Redactor | None, delimiters: str = ":") -> Callable[[str], str]:
    """A line for standard error as the command's --redact wants it (export/redact.redact_line:
    the keys an error or warning names as FAMILY@HASH, a filter's globs hidden); the line
    itself without --redact."""
    if redact is None:
        return lambda line: line
    from ..export.redact import redact_line

    return lambda line: redact_line(line, redact, delimiters)


def redacted_say(redact: Redactor | None, delimiters: str = ":") -> Callable[[str], None]:
    """output.say, each line through `shown` first."""
    from .output import say

    show = shown(redact, delimiters)
    return lambda line: say(show(line))
