"""Inputs and outputs named by a URL (`s3://bucket/dump.rdb.gz`, `gs://...`, `https://...`),
opened through fsspec (docs/fleet.md).

fsspec is a base dependency (pure Python, no dependencies of its own); the file systems behind
the schemes are optional extras: s3fs (`rdbscan[s3]`), gcsfs (`rdbscan[gcs]`), aiohttp
(`rdbscan[http]`).  Without the one a URL needs, UnsupportedURL says which extra to install.
A local path never goes through here: the source layer opens it with open().
"""

from __future__ import annotations

import glob
import os
import re

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]+)://")

# The extra that brings each scheme's file system (pyproject.toml, [project.optional-dependencies]).
EXTRAS = {
    "s3": "s3",
    "s3a": "s3",
    "gs": "gcs",
    "gcs": "gcs",
    "http": "http",
    "https": "http",
}


class UnsupportedURL(Exception):
    """A URL rdbscan cannot open here: an unknown scheme, or its extra is not installed."""


def scheme(path: str) -> str | None:
    """The URL scheme of `path` (`s3`), None for a local path (`file://` is local too)."""
    m = _SCHEME.match(path)
    if m is None or m.group(1).lower() == "file":
        return None
    return m.group(1).lower()


def is_url(path: str) -> bool:
    return scheme(path) is not None


def local_path(path: str) -> str:
    """`file:///x` as `/x`; any other path unchanged."""
    return path[len("file://") :] if path.lower().startswith("file://") else path


def filesystem(url: str):
    """The fsspec file system for `url` (storage options from the environment, as the file
    system's own library reads them: AWS_* variables and ~/.aws for s3fs, and so on)."""
    name = scheme(url)
    try:
        import fsspec
    except ImportError:  # pragma: no cover - a base dependency
        raise UnsupportedURL(f"{url}: reading URLs needs fsspec: pip install fsspec") from None
    if name is None:
        return fsspec.filesystem("file")
    extra = EXTRAS.get(name)
    try:
        return fsspec.filesystem(name)
    except ImportError:
        hint = f"pip install 'rdbscan[{extra}]'" if extra else "its fsspec file system"
        raise UnsupportedURL(
            f"{url}: {name}:// needs an optional dependency that is not installed ({hint})"
        ) from None
    except ValueError:  # fsspec: "Protocol not known"
        raise UnsupportedURL(f"{url}: unknown URL scheme {name}://") from None


WILDCARDS = "*?["


class NoMatch(Exception):
    """A pattern that no file (or object) matches, or whose bucket cannot be listed."""


def expand(patterns) -> list[str]:
    """Quoted glob patterns (`'shard-*.rdb'`, `'s3://backups/2026-11-24/shard-*.rdb.gz'`) -> the
    files or objects they match, sorted by name, through the URL's file system (s3://, gs://);
    a name without wildcards, or one that exists as written, is kept as it is (`-`, `DB#2`,
    an https:// URL: a web server lists nothing).  NoMatch for a pattern that matches nothing
    or whose bucket cannot be listed; UnsupportedURL as filesystem()."""
    out: list[str] = []
    for p in patterns:
        name = scheme(p)
        if not any(c in p for c in WILDCARDS) or name in ("http", "https"):
            out.append(p)
            continue
        if name is None:
            if os.path.exists(local_path(p)):
                out.append(p)
                continue
            found = sorted(glob.glob(local_path(p)))
        else:
            fs = filesystem(p)
            try:
                found = sorted(fs.unstrip_protocol(f) for f in fs.glob(p))
            except Exception as e:  # the store's own errors: no credentials, no permission
                raise NoMatch(f"{p}: cannot list the objects: {type(e).__name__}: {e}") from None
        if not found:
            raise NoMatch(f"{p}: no file matches")
        out.extend(found)
    return out
