"""The pure-Python twin of the rdb layer's row sink (_speedups.pxd RowSink): what the parser
offers the records to before reading them itself (parse(..., sink=)).

The compiled RowSink's `scan` walks the strings and single-blob values lying wholly in the
reader's buffer and hands each to the batch in C (add_record); on the pure path the parser's
Python loop reads every record, so this `scan` reads none.  The db layer's batches subclass one
or the other (db/rows.py PyKeyColumns, db/_batch.pyx KeyColumns).
"""

from __future__ import annotations


class RowSink:
    """A batch of key rows as the parser sees it."""

    __slots__ = ()

    def scan(
        self,
        buf: bytes,
        pos: int,
        base: int,
        db: int,
        embstr_limit: int,
        max_item: int,
        listpack_lists: bool,
        embed: bytes | None = None,
    ) -> tuple[int, int]:
        """Reads nothing: (pos, 0 records taken); the arguments are the compiled scan's."""
        return pos, 0
