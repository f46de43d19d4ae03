"""Builds the optional compiled hot loops (rdbscan/rdb/_speedups.pyx) with Cython.

Everything else is in pyproject.toml.  Without a C compiler the build carries on and rdbscan
runs its pure-Python path (identical rows, slower); `rdbscan --version` says which is in use.
"""

import hashlib
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


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


def extensions():
    try:
        from Cython.Build import cythonize
    except ImportError:
        return []
    # The module carries the SHA-256 of the .pyx it was compiled from (SOURCE_SHA256), so that
    # rdbscan/rdb/backend.py can tell a stale build (an editable install after `git pull`).
    pyx = Path(__file__).parent / "rdbscan" / "rdb" / "_speedups.pyx"
    return cythonize(
        [
            Extension(
                "rdbscan.rdb._speedups", ["rdbscan/rdb/_speedups.pyx"], extra_compile_args=["-O2"]
            )
        ],
        compiler_directives={"language_level": 3},
        compile_time_env={"RDBSCAN_PYX_SHA256": hashlib.sha256(pyx.read_bytes()).hexdigest()},
    )


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
