#!/usr/bin/env python3
"""The memory model's accuracy against real servers (docs/memory-model.md): `python
bench/memory_accuracy.py --help`. The harness is tests/memory_accuracy.py, beside the tests that
import it (tests/test_memory.py checks its figures on the fixtures)."""

import importlib.util
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent / "tests" / "memory_accuracy.py"
sys.path.insert(0, str(HARNESS.parent))

if __name__ == "__main__":
    from memory_accuracy import main

    sys.exit(main())
else:  # imported as `memory_accuracy` with bench/ on sys.path, as tests did: be the harness itself
    spec = importlib.util.spec_from_file_location(__name__, HARNESS)
    sys.modules[__name__] = module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
