#!/usr/bin/env python3
"""The hostile-input benchmark (docs/hostile-inputs.md): `python bench/hostile.py --help`. The
harness is tests/hostile.py, beside the tests that import it (tests/test_hostile.py runs its
fast cases)."""

import importlib.util
import sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parent.parent / "tests" / "hostile.py"
sys.path.insert(0, str(HARNESS.parent))

if __name__ == "__main__":
    from hostile import main

    sys.exit(main())
else:  # imported as `hostile` with bench/ on sys.path, as tests did: be the harness itself
    spec = importlib.util.spec_from_file_location(__name__, HARNESS)
    sys.modules[__name__] = module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
