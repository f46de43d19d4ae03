"""The columns of `key_rows` and `keys` are written once, in rdbscan/db/columns.py: the database,
the Parquet files and docs/tables.md follow it, the compiled batch and the pure path write the
positions it gives, and no second hand-written copy of it appears in the package."""

from __future__ import annotations

import functools
import importlib.util
import re

import duckdb
import pyarrow as pa
import pytest
from common import ROOT

from rdbscan.db import columns as spec
from rdbscan.db import rows
from rdbscan.db.macros import MACROS
from rdbscan.db.parquet import KEYS_FROM_BATCH, _arrow_table
from rdbscan.db.store import DDL, BulkWriter, Store, arrow_batch

PYX = ROOT / "rdbscan" / "db" / "_batch.pyx"  # the compiled batch (KeyColumns)


def _described(con, relation: str) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in con.execute(f"DESCRIBE {relation}").fetchall()]


def test_the_database_has_the_spec_columns():
    con = duckdb.connect()
    con.execute(DDL)
    assert _described(con, "key_rows") == [(c.name, c.sql) for c in spec.KEY_ROWS]
    assert _described(con, "keys") == [(c.name, c.sql) for c in spec.KEYS_VIEW]
    assert len(spec.KEY_ROWS) == 18 and len(spec.KEYS_VIEW) == 30
    # the Arrow batch the loader hands DuckDB: one field per stored column, in that order
    assert spec.KEYS_SCHEMA.names == [c.name for c in spec.KEY_ROWS]
    assert spec.KEYS_SCHEMA.field("extras").type == pa.list_(pa.int64())


def test_the_parquet_files_have_the_view_columns_duckdb_computes():
    """The `keys` files' schema (written by ParquetBulkWriter) is what DuckDB gives for the
    view's SELECT over a batch: Arrow types declared in the spec, not guessed."""
    con = duckdb.connect()
    for macro in MACROS:
        con.execute(macro)
    con.register("_rdbscan_keys", pa.Table.from_batches([], schema=spec.KEYS_SCHEMA))
    got = _arrow_table(con.sql(KEYS_FROM_BATCH + " LIMIT 0")).schema
    assert got.equals(spec.KEYS_FILE_SCHEMA, check_metadata=True)
    assert "dump_id" not in spec.KEYS_FILE_SCHEMA.names  # in the partition's path
    assert set(spec.DICTIONARY) <= set(spec.KEYS_FILE_SCHEMA.names)
    assert len(spec.DICTIONARY) == 13


def test_columns_declared_not_null_hold_no_null(fixtures_db):
    con = duckdb.connect(fixtures_db, read_only=True)
    try:
        nulls = con.execute(
            "SELECT "
            + ", ".join(f"count(*) - count({c.name})" for c in spec.KEYS_VIEW if not c.nullable)
            + ", count(*) FROM keys"
        ).fetchone()
        stored = con.execute(
            "SELECT "
            + ", ".join(f"count(*) - count({c.name})" for c in spec.KEY_ROWS if not c.nullable)
            + " FROM key_rows"
        ).fetchone()
    finally:
        con.close()
    assert nulls[-1] > 5000  # every fixture's keys
    assert set(nulls[:-1]) == {0} and set(stored) == {0}


# A row as RowBuilder.add builds it (the tuple KeyColumns.append reads), with a distinct value
# in every place that ends up in extras.
ROW = (
    3,  # dump_id
    2,  # db
    "user:1",
    b"user:1",
    "hash",
    "hashtable",
    4,  # rdb_type: RDB_TYPE_HASH
    7,  # length
    11,  # longest element
    90,  # serialized bytes
    500,  # memory
    560,  # memory total
    1_700_000_000_123,  # expire_at_ms
    101,  # idle
    5,  # freq
    1234,  # slot
    77,  # file offset
    2,  # fields with TTL
    1_700_000_000_999,  # earliest field expiry
    6,  # int members
    4000,  # full length of a truncated name
    -42,  # its hash
    333,  # listpack bytes
)
VIEW_VALUES = {
    "idle_seconds": 101,
    "lfu_freq": 5,
    "fields_with_ttl": 2,
    "min_field_expire_ms": 1_700_000_000_999,
    "int_members": 6,
    "key_length": 4000,
    "key_hash": -42,
    "listpack_bytes": 333,
    "key_truncated": True,
    "expire_at_ms": 1_700_000_000_123,
    "slot": 1234,
    "file_offset": 77,
    "type": "hash",
    "encoding": "hashtable",
}


def _through_the_view(tmp_path, columns: list) -> dict:
    store = Store(str(tmp_path / "v.duckdb"))
    try:
        writer = BulkWriter(store)
        writer.add("keys", spec.KEYS_SCHEMA, columns)
        writer.close()
        cur = store.con.execute(f"SELECT {', '.join(VIEW_VALUES)} FROM keys")
        return dict(zip(VIEW_VALUES, cur.fetchone()))
    finally:
        store.con.close()


def test_the_pure_path_writes_the_spec_positions(tmp_path):
    row = (*ROW, rows.C.INVALID_IDS["intset order"], 9)
    columns = rows._pure_columns([row])
    assert len(columns) == len(spec.KEYS_COLUMNS)
    batch = arrow_batch(spec.KEYS_SCHEMA, columns)  # types as the spec says
    extras = batch.column("extras").to_pylist()[0]
    assert extras == [101, 5, 2, 1_700_000_000_999, 6, 4000, -42, 333, 8, 9]
    assert _through_the_view(tmp_path, columns) == VIEW_VALUES


@pytest.mark.skipif(rows.compiled is None, reason="the compiled core is not built")
def test_the_compiled_batch_writes_the_spec_positions(tmp_path):
    from rdbscan.rdb import constants as C

    sink = rows.KeyColumns(16, None, C.TYPE_NAMES, C.TYPE_ENCODINGS)
    sink.append((*ROW, None, None))
    columns = sink.columns(3, None)
    assert arrow_batch(spec.KEYS_SCHEMA, columns).schema.equals(spec.KEYS_SCHEMA)
    assert _through_the_view(tmp_path, columns) == VIEW_VALUES


# --- the compiled core's text: the columns it hands over (KeyColumns.take) --------------------

# C type of a KeyColumns array -> its width in bytes
_C_WIDTH = {"int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "int64_t": 8}


def _pyx() -> str:
    return PYX.read_text(encoding="utf-8")


def _key_columns_fields(text: str) -> dict[str, int]:
    """KeyColumns' C arrays: name -> element width."""
    body = text[text.index("cdef class KeyColumns(RowSink):") :]
    return {
        m.group(2): _C_WIDTH[m.group(1)]
        for m in re.finditer(r"^    cdef (u?int\d+_t)\* (c_\w+)\b", body, re.M)
    }


def test_the_compiled_batch_hands_over_the_spec_columns_at_their_widths():
    text = _pyx()
    fields = _key_columns_fields(text)
    take = text[text.index("    def take(self):") :]
    take = take[: take.index("        for i in range(N_VALID):")]
    handed = {}
    for m in re.finditer(r'"(\w+)": \(?_owned\(self\.(c_\w+), n(?: \* (\d+))?\)', take):
        name, field, width = m.group(1), m.group(2), int(m.group(3) or 1)
        assert fields[field] == width, (name, field)
        handed[name] = width
    stored = {c.name: c for c in spec.KEY_ROWS}
    columns = {n: w for n, w in handed.items() if n in stored}
    # every fixed-width column but dump_id (rows.py fills it) comes from the compiled batch
    fixed = {c.name for c in spec.KEY_ROWS if pa.types.is_integer(c.arrow)} - {"dump_id"}
    assert set(columns) == fixed - {"encoding_id"}  # encoding_id: _encoding_ids(), one byte
    for name, width in columns.items():
        assert stored[name].arrow.bit_width == 8 * width, name
    assert set(handed) - set(stored) == {"type", "encoding", "blob_bytes"}


# KeyColumns' arrays of the values in extras -> the spec's names
_EXTRAS_FIELDS = {
    "c_idle": "idle_seconds",
    "c_freq": "lfu_freq",
    "c_fttl": "fields_with_ttl",
    "c_fmin": "min_field_expire_ms",
    "c_ints": "int_members",
    "c_klen": "key_length",
    "c_khash": "key_hash",
    "c_lpb": "listpack_bytes",
    "c_invalid": "invalid",
    "c_alast": "array_last_index",
}


def test_the_compiled_extras_are_in_the_spec_order():
    """_extras writes value k of a row's extras from src[k] (c_freq, an int16 array, by
    name) under the null flag cols[k]: both in the order of columns.EXTRAS."""
    text = _pyx()
    body = text[text.index("    cdef tuple _extras(self):") :]
    body = body[: body.index("    cdef inline Py_ssize_t _extras_width(")]
    written = re.findall(r"src\[(\d)\] = (?:self\.(c_\w+)|NULL)", body)
    assert re.search(r"val\[j \+ k\] = self\.c_freq\[i\] if k == 1 else src\[k\]\[i\]", body)
    written = [(k, f or "c_freq") for k, f in written]
    assert [int(k) for k, _ in written] == list(range(len(spec.EXTRAS)))
    assert [_EXTRAS_FIELDS[f] for _, f in written] == list(spec.EXTRAS)
    # their null flags, in the same order
    flags = re.findall(r"cols\[(\d)\] = (V_\w+)", body)
    assert [int(k) for k, _ in flags] == list(range(len(spec.EXTRAS)))
    assert [f"c_{v[2:].lower()}" for _, v in flags] == [f for _, f in written]
    assert re.search(rf"^DEF N_EXTRAS = {spec.EXTRAS_FIXED} ", text, re.M)
    assert len(spec.EXTRAS) == spec.EXTRAS_FIXED + 2  # _extras_width: 8, 9 or 10 values


# --- no second copy ---------------------------------------------------------------------------


def _sources():
    pkg = ROOT / "rdbscan"
    for path in sorted([*pkg.rglob("*.py"), *pkg.rglob("*.pyx"), *pkg.rglob("*.sql")]):
        if path != ROOT / "rdbscan" / "db" / "columns.py":
            yield path, path.read_text(encoding="utf-8")


@functools.cache
def _own_names() -> frozenset[str]:
    """Names of the keys spec that no other table of the database has (a database made once:
    _copies reads every source file)."""
    con = duckdb.connect()
    con.execute(DDL)
    others = {
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name NOT IN ('keys', 'key_rows')"
        ).fetchall()
    }
    return frozenset({c.name for c in (*spec.KEY_ROWS, *spec.KEYS_VIEW)} - others)


def _copies(text: str) -> list[str]:
    """A column of the spec next to a type (`("max_elem_bytes", pa.int64())`, `slot SMALLINT`),
    two or more of them, or a definition of the table or the view: a second copy."""
    own = "|".join(sorted(_own_names()))
    typed = re.compile(
        rf"""["']?\b({own})\b["']?\s*[,:]?\s*(pa\.\w+\(|(?:U?TINYINT|SMALLINT|INTEGER|BIGINT|"""
        r"""VARCHAR|BLOB|BOOLEAN)\b)"""
    )
    defines = re.compile(
        r"\bCREATE\s+(OR REPLACE\s+)?(TABLE|VIEW)\s+(IF NOT EXISTS\s+)?(key_rows|keys)\b", re.I
    )
    found = sorted({m.group(1) for m in typed.finditer(text)})
    return ([f"typed columns {found}"] if len(found) >= 2 else []) + [
        m.group(0) for m in defines.finditer(text)
    ]


def test_no_second_copy_of_the_columns():
    copies = [f"{p.relative_to(ROOT)}: {c}" for p, text in _sources() for c in _copies(text)]
    assert not copies, "\n".join(copies)


def test_the_copy_detector_finds_a_copy():
    own = _own_names()
    assert len(own) >= 20
    assert {"max_elem_bytes", "serialized_bytes", "key_length", "extras"} <= own
    assert not {"dump_id", "db", "key", "length", "memory_bytes"} & own  # other tables' too
    schema = '        ("max_elem_bytes", pa.int64()),\n        ("serialized_bytes", pa.int64()),'
    assert _copies(schema) == ["typed columns ['max_elem_bytes', 'serialized_bytes']"]
    ddl = "CREATE TABLE IF NOT EXISTS key_rows (\n    rdb_type UTINYINT,\n    plain_key BOOLEAN\n"
    assert len(_copies(ddl)) == 2
    assert _copies("create or replace view keys as select 1") != []
    # the streams table, a query, a comment: no copy
    assert _copies("dump_id INTEGER, db INTEGER, key VARCHAR, length BIGINT") == []
    assert _copies("SELECT max_elem_bytes, serialized_bytes FROM keys -- table key_rows") == []


def _gen_tables():
    loader = importlib.util.spec_from_file_location("gen_tables", ROOT / "docs" / "gen_tables.py")
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return module


def test_docs_tables_is_generated_from_the_spec():
    gen = _gen_tables()
    page = gen.PAGE.read_text(encoding="utf-8")
    assert gen.render(page) == page, "run `python docs/gen_tables.py`"
    for c in spec.KEYS_VIEW:
        assert f"| `{c.name}` | {c.sql} | {c.meaning} |" in page
