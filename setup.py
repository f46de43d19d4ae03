"""Builds the optional compiled core with Cython: the rdb layer's walkers
(rdbscan/rdb/_speedups.pyx) and the db layer's batch of key rows (rdbscan/db/_batch.pyx), which
implements the walkers' interface (rdbscan/rdb/_speedups.pxd).

Everything else is in pyproject.toml.  Without a C compiler the build carries on and rdbscan
runs its pure-Python path (identical rows, slower); `rdbscan --version` says which is in use.
"""

import hashlib
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).parent
# Each module and the sources it is compiled from: its .pyx, then the interface .pxd.  The
# module carries their SHA-256 (SOURCE_SHA256) so that rdbscan/rdb/backend.py can tell a stale
# build (an editable install after `git pull`); backend.SOURCES and db/rows.SOURCES list the
# same files (tests/test_speedups.py holds them equal).
MODULES = {
    "rdbscan.rdb._speedups": ("rdbscan/rdb/_speedups.pyx", "rdbscan/rdb/_speedups.pxd"),
    "rdbscan.db._batch": ("rdbscan/db/_batch.pyx", "rdbscan/rdb/_speedups.pxd"),
}
SHA_NAMES = {
    "rdbscan.rdb._speedups": "RDBSCAN_SPEEDUPS_SHA256",
    "rdbscan.db._batch": "RDBSCAN_BATCH_SHA256",
}


class OptionalBuildExt(build_ext):
    """A failed compile leaves the pure-Python fallback instead of failing the install."""

    def run(self):
        try:
            super().run()
        except Exception as e:  # noqa: BLE001 - any compiler problem
            print(f"rdbscan: compiled speedups not built ({e}); using the pure-Python path")

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as e:  # noqa: BLE001
            print(f"rdbscan: compiled speedups not built ({e}); using the pure-Python path")


def sources_sha256(paths) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update((HERE / path).read_bytes())
    return digest.hexdigest()


def extensions():
    try:
        from Cython.Build import cythonize
    except ImportError:
        return []
    return cythonize(
        [
            Extension(name, [sources[0]], extra_compile_args=["-O2"])
            for name, sources in MODULES.items()
        ],
        compiler_directives={"language_level": 3},
        compile_time_env={SHA_NAMES[n]: sources_sha256(s) for n, s in MODULES.items()},
    )


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
