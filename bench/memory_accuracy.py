#!/usr/bin/env python3
"""The memory model's accuracy against real servers (docs/memory-model.md): `python bench/memory_accuracy.py --help`.
The harness is tests/memory_accuracy.py, beside the tests that import it (tests/test_memory.py checks its figures on the fixtures)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from memory_accuracy import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
