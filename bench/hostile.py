#!/usr/bin/env python3
"""The hostile-input benchmark (docs/hostile-inputs.md): `python bench/hostile.py --help`.
The harness is tests/hostile.py, beside the tests that import it (tests/test_hostile.py runs its fast cases)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from hostile import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
