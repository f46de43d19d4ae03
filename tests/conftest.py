import signal
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def _default_sigint():
    """Each test starts with Python's own Ctrl-C handling and SIGINT unblocked: the CLI's
    handler (rdbscan.cli.main) ignores a second Ctrl-C, and the parallel loader blocks SIGINT
    while it starts a worker. If either leaked into the test process, the subprocesses later
    tests start (and send SIGINT to) would inherit an ignored or blocked signal and never stop."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    yield
