#!/usr/bin/env python3
"""The long fuzzing run (docs/inputs.md, "Fuzzing"): `python bench/fuzz.py --help`.
The harness is tests/fuzz.py, beside the tests that import it (tests/test_fuzz.py runs a short one)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from fuzz import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
