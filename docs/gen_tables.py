"""Write the `keys` table of docs/tables.md, the columns `key_rows` stores and the schema version
from the column spec (rdbscan/db/columns.py) and rdbscan/db/store.py; the rest of the page is
written by hand.  tests/test_columns.py fails when the page is not regenerated.

    python docs/gen_tables.py           # rewrite those parts of docs/tables.md
    python docs/gen_tables.py --check   # exit 1 if docs/tables.md is not current
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parent / "tables.md"
# The generated table: its header line up to the blank line after it.
TABLE = re.compile(r"^\| column \| type \| meaning \|\n(?:\|.*\n)+", re.M)
STORED = re.compile(r"(\*\*Table `key_rows`\*\* stores )`[^`]+`")
VERSION = re.compile(r"(`rdbscan_meta\.schema_version`, now )\d+")


def render(page: str) -> str:
    """`page` (the text of docs/tables.md) with its generated parts current."""
    from rdbscan.db.columns import KEYS_COLUMNS, markdown_table
    from rdbscan.db.store import SCHEMA_VERSION

    table = markdown_table()
    stored = ", ".join(KEYS_COLUMNS)
    for pattern, new in (
        (TABLE, lambda m: table),
        (STORED, lambda m: f"{m.group(1)}`{stored}`"),
        (VERSION, lambda m: f"{m.group(1)}{SCHEMA_VERSION}"),
    ):
        page, n = pattern.subn(new, page)
        if n != 1:
            raise SystemExit(f"{PAGE}: expected one match of {pattern.pattern!r}, found {n}")
    return page


def main(argv: list[str]) -> int:
    current = PAGE.read_text(encoding="utf-8")
    text = render(current)
    if "--check" in argv:
        if current != text:
            print(f"{PAGE} is out of date: run `python docs/gen_tables.py`", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
