"""Inputs and outputs named by a URL (`s3://bucket/dump.rdb.gz`, `gs://...`, `https://...`),
opened through fsspec (docs/fleet.md).

fsspec is a base dependency (pure Python, no dependencies of its own); the file systems behind
the schemes are optional extras: s3fs (`rdbscan[s3]`), gcsfs (`rdbscan[gcs]`), aiohttp
(`rdbscan[http]`).  Without the one a URL needs, UnsupportedURL says which extra to install.
A local path never goes through here: the source layer opens it with open().
"""

from __future__ import annotations

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


def open_url(url: str, mode: str = "rb"):
    """A file object for `url`, read (or written) in blocks: never the whole object in memory.
    Its `size` (bytes) is known for reading when the server says it."""
    fs = filesystem(url)
    return fs, fs.open(url, mode)
