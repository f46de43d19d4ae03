"""The `rdbscan` command line: click commands over the library (the group is
rdbscan.cli.main.main; `run` is the console script's entry point)."""

import os
import signal
import sys

from ..errors import EXIT_INTERRUPTED, EXIT_TERMINATED
from .starting import received, starting_handler


def run():
    """The console script: a signal while the modules load exits as a signal during the work
    does (one line, 130 or 143), not with a traceback."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, starting_handler)
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, starting_handler)
    # Arrow's memory pool: the system allocator, unless ARROW_DEFAULT_MEMORY_POOL says otherwise
    # (read when pyarrow is first imported, below).  The loader's Arrow buffers are few and
    # short-lived; pyarrow's default on Linux, mimalloc, kept 2-6 MiB more at the peak of a
    # report over millions of keys, for no change in time (docs/benchmarks.md, "Peak memory:
    # what a report loaded and did not need").
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    try:
        from .main import run as main_run
    except KeyboardInterrupt:
        terminated = received[-1:] == [signal.SIGTERM]
        sys.stderr.write("rdbscan: terminated\n" if terminated else "rdbscan: interrupted\n")
        sys.exit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED)
    main_run()


__all__ = ["run"]
