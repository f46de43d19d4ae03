#!/usr/bin/env python3
"""The long fuzzing run (docs/inputs.md, "Fuzzing"): `python bench/fuzz.py --help`. The harness is
tests/fuzz.py, beside the tests that import it (tests/test_fuzz.py runs a short one)."""

import importlib.util
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent / "tests" / "fuzz.py"
sys.path.insert(0, str(HARNESS.parent))

if __name__ == "__main__":
    from fuzz import main

    sys.exit(main())
else:  # imported as `fuzz` with bench/ on sys.path, as tests did: be the harness itself
    spec = importlib.util.spec_from_file_location(__name__, HARNESS)
    sys.modules[__name__] = module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
