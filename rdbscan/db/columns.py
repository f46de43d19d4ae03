"""The columns of table `key_rows` and of the view `keys` over it, written once: the Arrow schema
the loader writes (KEYS_SCHEMA), the table's DDL, the view's SELECT (which the Parquet writer
also runs), the Parquet `keys` files' schema and dictionary columns, and the table of
docs/tables.md (docs/gen_tables.py) all come from KEY_ROWS and KEYS_VIEW below.  The compiled
batch (rdb/_speedups.pyx KeyColumns.take and _extras) and the pure path's columns (rows.py) are
held to them by tests/test_columns.py.

`key_rows` stores what the loader knows per key; the view computes the rest when a query asks
for it (key_bytes, key_length, type, encoding, and the values of `extras`).  A view, not
generated columns: DuckDB evaluates a table's generated columns on every INSERT.  DuckDB's work
per key grows with the columns stored, null or not, so values few keys have share one list,
`extras`, read by position (EXTRAS).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

from ..rdb import constants as C
from ..rdb import long_names
from ..rdb.modules import ESTIMATED as ESTIMATED_MODULES

_KEEP = f"{long_names.KEY_KEEP:,}"  # rows.KEY_KEEP: a longer key name is cut to its first bytes


@dataclass(frozen=True)
class Column:
    """A column of table key_rows: its Arrow type (the loader's batches), its SQL type, whether
    it may hold NULL once a row is inserted, and what it holds (docs/tables.md)."""

    name: str
    kind: str  # an ARROW_KINDS name: the Arrow type of the loader's batches
    sql: str
    nullable: bool
    meaning: str
    storage: str = ""  # DDL after the type (USING COMPRESSION ...)
    # SQL that fills a null the batch leaves (the INSERT runs it: KEY_ROWS_FROM_BATCH)
    fill: str | None = None

    @property
    def arrow(self) -> pa.DataType:
        return arrow_type(self.kind)


@dataclass(frozen=True)
class ViewColumn:
    """A column of the view `keys`: a column of key_rows shown as it is (`expr` None), or
    computed from them (`expr`, SQL over key_rows).  `dictionary`: dictionary-encoded in the
    Parquet files (few distinct values)."""

    name: str
    kind: str  # an ARROW_KINDS name
    sql: str
    nullable: bool
    meaning: str
    expr: str | None = None
    dictionary: bool = False

    @property
    def arrow(self) -> pa.DataType:
        return arrow_type(self.kind)


# Values few keys have, in key_rows.extras by position (1-based in SQL), null when a key has
# none: the first EXTRAS_FIXED on every row that has any (the compiled batch writes those), the
# others only up to the last one present.  rows._extras and _speedups.KeyColumns._extras write
# them in this order; positions are part of the database format.
EXTRAS = (
    "idle_seconds",
    "lfu_freq",
    "fields_with_ttl",
    "min_field_expire_ms",
    "int_members",
    "key_length",  # of a key name longer than rows.KEY_KEEP (then with key_hash)
    "key_hash",
    "listpack_bytes",
    "invalid",  # the position in constants.INVALID_KINDS plus one
    "array_last_index",
)
EXTRAS_FIXED = 8


def extra(name: str) -> str:
    """The SQL of one value of extras (key_rows.extras[i])."""
    return f"extras[{EXTRAS.index(name) + 1}]"


# The Arrow types of the columns, by name, with their format strings in the Arrow C data
# interface (https://arrow.apache.org/docs/format/CDataInterface.html).
ARROW_KINDS = {
    "int16": "s",
    "int32": "i",
    "int64": "l",
    "uint8": "C",
    "bool": "b",
    "string": "u",
    "binary": "z",
    "list<int64>": "+l",
}
_I32, _I64, _STR, _BIN, _BOOL = "int32", "int64", "string", "binary", "bool"

# One row per key, in the order the loader writes them.
KEY_ROWS = (
    Column("dump_id", _I32, "INTEGER", False, "which dump (table `dumps`)"),
    Column("db", _I32, "INTEGER", False, "database number"),
    Column(
        "key",
        _STR,
        "VARCHAR",
        False,
        "the key as UTF-8; bytes that are not valid UTF-8 shown as `\\xNN`",
        # compressing 5 M key names took DuckDB 0.4 s, for 40 MB of disk
        storage="USING COMPRESSION uncompressed",
    ),
    Column(
        "key_raw",
        _BIN,
        "BLOB",
        True,
        "the key bytes when they are not valid UTF-8 (then `key` escapes them); NULL otherwise",
    ),
    Column(
        "family",
        _STR,  # the batch leaves a null where the INSERT computes it (fill)
        "VARCHAR",
        False,
        "the key's family, `key_pattern(key)` with the `:` delimiter: `user:{id}:profile` for "
        "`user:1000:profile` (`#` ends a segment too: `uid#{id}#{id}` for `uid#7#0`) (see "
        "[queries.md, Macros](queries.md#macros)). The loader works it out for every key of printable "
        "ASCII (compiled in `db/_batch.pyx`; tests compare it with the `key_pattern` macro); "
        "for other keys, and for every key on the pure-Python path, the INSERT runs the macro. `report --delimiters` other than `:` computes families afresh",
        fill="key_pattern(key)",
    ),
    Column(
        "plain_key",
        _BOOL,  # as family: null in the batch where the INSERT computes it
        "BOOLEAN",
        False,
        "the key is lowercase words (`a-z`, `0-9`, `_`) joined by `:`, starting with a letter, "
        "with at least one `:` (`user:1000:profile`; regex `[a-z][a-z0-9_]*(:[a-z0-9_]*)+`). "
        "Such a key breaks none of the naming rules' character rules, and the naming check "
        "skips it unless it is too long or its first segment breaks a rule. Set by the compiled "
        "loop as it copies the key (tests compare it with the `key_pattern` macro), by the "
        "INSERT on the pure-Python path",
        fill="is_plain_key(key)",
    ),
    Column(
        "rdb_type",
        "uint8",
        "UTINYINT",
        False,
        "the raw type byte (see `rdbscan/rdb/constants.py`)",
    ),
    Column(
        "encoding_id",
        "uint8",
        "UTINYINT",
        False,
        "the encoding's position in `ENCODING_NAMES` (`rdbscan/rdb/constants.py`); `module` for "
        "module values",
    ),
    Column(
        "module_type",
        _STR,
        "VARCHAR",
        True,
        "a module value's type name (9 characters, e.g. `ReJSON-RL`); NULL for other keys",
    ),
    Column(
        "length",
        _I64,
        "BIGINT",
        False,
        "STRLEN for strings, element count for collections (fields for hashes, members for sets "
        "and sorted sets), XLEN for streams, the element count for vector sets (`VCARD`), 1 for "
        "other module values",
    ),
    Column(
        "max_elem_bytes",
        _I64,
        "BIGINT",
        False,
        "longest element in bytes (list items, set members, zset members, the longer of hash "
        "fields and values, stream fields and values of live entries); integers count their "
        "decimal text",
    ),
    Column(
        "serialized_bytes",
        _I64,
        "BIGINT",
        False,
        "bytes the key's record takes in the file (expiry/LRU/LFU opcodes, type, key and value)",
    ),
    Column(
        "memory_bytes",
        _I64,
        "BIGINT",
        False,
        "estimated `MEMORY USAGE key SAMPLES 0` on the server that wrote the dump (see "
        "[memory-model.md](memory-model.md))",
    ),
    Column(
        "memory_total_bytes",
        _I64,
        "BIGINT",
        False,
        "`memory_bytes` plus what MEMORY USAGE leaves out: the key's share of the main dict's "
        "bucket array and, for keys with a TTL, the expires entry and its bucket share",
    ),
    Column(
        "expire_at_ms",
        _I64,
        "BIGINT",
        True,
        "absolute expiry in Unix ms; NULL when the key has none",
    ),
    Column(
        "slot",
        "int16",
        "SMALLINT",
        False,
        "Redis Cluster hash slot (CRC16 of the `{hashtag}` or of the key, mod 16384)",
    ),
    Column(
        "file_offset",
        _I64,
        "BIGINT",
        False,
        "where the key's record starts in the (decompressed) RDB stream; rows are not stored in "
        "file order, `ORDER BY dump_id, file_offset` gives it",
    ),
    Column(
        "extras",
        "list<int64>",
        "BIGINT[]",
        True,
        "the values few keys have (`EXTRAS` in `rdbscan/db/columns.py`, by position), NULL "
        "when a key has none of them",
    ),
)
STORED = {c.name: c for c in KEY_ROWS}


def _stored(name: str, dictionary: bool = False) -> ViewColumn:
    c = STORED[name]
    return ViewColumn(c.name, c.kind, c.sql, c.nullable, c.meaning, None, dictionary)


def _sql_list(names) -> str:
    return "[" + ", ".join("NULL" if n is None else f"'{n}'" for n in names) + "]"


# The view's type by rdb_type (NULL for ids that are no type), encoding by encoding_id, invalid
# by extras' code.
_TYPES = _sql_list([C.TYPE_NAMES.get(t) for t in range(max(C.TYPE_NAMES) + 1)])
ENCODINGS_SQL = _sql_list(C.ENCODING_NAMES)
_INVALID = _sql_list(C.INVALID_KINDS)
_ESTIMATED = "(" + ", ".join(f"'{n}'" for n in ESTIMATED_MODULES) + ")"
_MODULE = "rdb_type IN (6, 7)"  # module values (RDB_TYPE_MODULE, RDB_TYPE_MODULE_2)


def _when_extras(name: str, cast: str = "") -> str:
    # the CASE: cheaper than extras[i] alone on the rows without extras, most of them
    return f"CASE WHEN extras IS NOT NULL THEN {extra(name)}{cast} END"


def _when_extra_at(name: str, value: str) -> str:
    """A value after the first EXTRAS_FIXED: only rows whose list reaches it have it."""
    return (
        f"CASE WHEN extras IS NOT NULL AND len(extras) >= {EXTRAS.index(name) + 1} THEN {value} END"
    )


_TRUNCATED = f"extras IS NOT NULL AND {extra('key_length')} IS NOT NULL"

# The view `keys`, in its column order (what `SELECT *` and the Parquet files show).
KEYS_VIEW = (
    _stored("dump_id"),
    _stored("db", dictionary=True),
    _stored("key"),
    ViewColumn(
        "key_bytes",
        _BIN,
        "BLOB",
        False,
        f"the exact key bytes (of a key name longer than {long_names.KEY_KEEP // 1024} KiB: its "
        f"first {_KEEP} bytes, see "
        "`key_truncated`)",
        "coalesce(key_raw, encode(key))",
    ),
    ViewColumn(
        "key_length",
        _I32,
        "INTEGER",
        False,
        "key length in bytes (the whole name's, also when it is truncated)",
        f"CASE WHEN {_TRUNCATED} THEN {extra('key_length')} "
        "ELSE coalesce(octet_length(key_raw), strlen(key)) END::INTEGER",
        dictionary=True,
    ),
    _stored("family", dictionary=True),
    _stored("plain_key", dictionary=True),
    ViewColumn(
        "type",
        _STR,
        "VARCHAR",
        False,
        "`string`, `list`, `set`, `zset`, `hash`, `stream`, or for a module value the module's "
        "type name as `TYPE` reports it (`vectorset`, `graphdata`, `ReJSON-RL`, ...; "
        "[modules.md](modules.md))",
        f"CASE WHEN {_MODULE} THEN module_type ELSE {_TYPES}[rdb_type + 1] END",
        dictionary=True,
    ),
    ViewColumn(
        "encoding",
        _STR,
        "VARCHAR",
        False,
        "what `OBJECT ENCODING` reported on the server that wrote the dump, as far as the file "
        "tells: `int`, `embstr`, `raw`, `linkedlist`, `ziplist`, `quicklist`, `listpack`, "
        "`listpackex`, `intset`, `hashtable`, `skiplist`, `zipmap`, `stream` (`unknown` for "
        "Redis 5.0 streams, as 5.0 said), `array` (Redis 8.8 sparse arrays), "
        "`template-listpack`, `template-array` (Redis 8.10 hashes that use a template), `btree` "
        "(Valkey 9.2 sorted sets), `pathhash` (Valkey 9.2 path hashes), and `raw` for every "
        "module value (what the server says of them; `type` names the module type). A string "
        "grown in place by APPEND/SETRANGE may read `embstr` where the server said `raw`: the "
        "file cannot tell",
        # module values: what OBJECT ENCODING says of them (`raw`); type names the module type
        f"CASE WHEN {_MODULE} THEN 'raw' ELSE {ENCODINGS_SQL}[encoding_id + 1] END",
        dictionary=True,
    ),
    _stored("rdb_type", dictionary=True),
    _stored("length", dictionary=True),
    _stored("max_elem_bytes", dictionary=True),
    _stored("serialized_bytes", dictionary=True),
    _stored("memory_bytes", dictionary=True),
    _stored("memory_total_bytes", dictionary=True),
    _stored("expire_at_ms"),
    ViewColumn(
        "idle_seconds",
        _I64,
        "BIGINT",
        True,
        "LRU idle time from the IDLE opcode (dumps written under an LRU `maxmemory-policy`), "
        "else NULL",
        _when_extras("idle_seconds"),
    ),
    ViewColumn(
        "lfu_freq",
        "int16",
        "SMALLINT",
        True,
        "LFU counter from the FREQ opcode (LFU policies), else NULL",
        _when_extras("lfu_freq", "::SMALLINT"),
        dictionary=True,
    ),
    _stored("slot"),
    _stored("file_offset"),
    ViewColumn(
        "fields_with_ttl",
        _I64,
        "BIGINT",
        True,
        "hashes with field TTLs (Redis 7.4+ / Valkey 9): fields that carry a TTL; NULL for other "
        "keys",
        _when_extras("fields_with_ttl"),
    ),
    ViewColumn(
        "min_field_expire_ms",
        _I64,
        "BIGINT",
        True,
        "earliest field expiry of such a hash (Unix ms)",
        _when_extras("min_field_expire_ms"),
    ),
    ViewColumn(
        "int_members",
        _I64,
        "BIGINT",
        True,
        "hashtable sets: members the dump stores as integers (canonical integers in the int32 "
        "range); equal to `length` means the set could be an intset. NULL for other keys",
        _when_extras("int_members"),
    ),
    ViewColumn(
        "listpack_bytes",
        _I64,
        "BIGINT",
        True,
        "lists in a quicklist of two or more nodes (RDB quicklist 2): bytes of its entries as "
        "one listpack, uncompressed (the compact-encoding check, docs/findings.md). NULL for "
        "other keys",
        _when_extras("listpack_bytes"),
    ),
    _stored("key_raw"),
    ViewColumn(
        "memory_is_lower_bound",
        _BOOL,
        "BOOLEAN",
        False,
        "true for module values rdbscan does not read (every module type but `vectorset`): "
        "their `memory_bytes` is the serialized size plus the object header, a lower bound",
        # module values whose memory is their serialized size (docs/modules.md)
        f"coalesce({_MODULE} AND module_type NOT IN {_ESTIMATED}, false)",
    ),
    ViewColumn(
        "key_truncated",
        _BOOL,
        "BOOLEAN",
        False,
        f"the key name is longer than {_KEEP} bytes (`rows.KEY_KEEP`): `key`, `key_bytes` and "
        f"`key_raw` hold its first {_KEEP} bytes (cut back to a whole UTF-8 character), "
        "`key_length` its length. Redis allows names of 512 MB; DuckDB cannot hold many long "
        "strings in the loader's memory (see [hostile-inputs.md](hostile-inputs.md))",
        f"coalesce({_TRUNCATED}, false)",
    ),
    ViewColumn(
        "key_hash",
        _I64,
        "BIGINT",
        True,
        "of a truncated key name: the first 8 bytes of the BLAKE2b digest of the whole name "
        "(little-endian, signed), which tells apart names with the same prefix; NULL otherwise",
        _when_extras("key_hash"),
    ),
    ViewColumn(
        "invalid",
        _STR,
        "VARCHAR",
        True,
        "why a Redis server refuses to load this value although it reads (its integrity "
        "checks, those `redis-check-rdb` runs): "
        + ", ".join(
            f"`{k}`" + (" (a collection of no elements)" if k == "empty" else "")
            for k in C.INVALID_KINDS
        )
        + "; the key is kept with the figures read. NULL for a value that passes (see "
        "[hostile-inputs.md](hostile-inputs.md))",
        _when_extra_at("invalid", f"{_INVALID}[{extra('invalid')}]"),
    ),
    ViewColumn(
        "array_last_index",
        _I64,
        "BIGINT",
        True,
        "Redis 8.8 arrays: the highest index that holds an element (`ARLEN` is one more; "
        "`length` counts the elements). NULL for other keys",
        _when_extra_at("array_last_index", extra("array_last_index")),
    ),
)

KEYS_COLUMNS = [c.name for c in KEY_ROWS]
# The loader's batches as (column, ARROW_KINDS name), and in the Arrow C data interface's
# format strings (the compiled batch builds them without pyarrow: _batch.KeyStream).
KEYS_KINDS = [(c.name, c.kind) for c in KEY_ROWS]
KEYS_FORMATS = [(name, ARROW_KINDS[kind]) for name, kind in KEYS_KINDS]


def __getattr__(name: str):
    """KEYS_SCHEMA (the loader's batches) and KEYS_FILE_SCHEMA (the Parquet `keys` files: the
    view's columns but dump_id, which is in the partition's path) as pyarrow schemas, built at
    first use: a load or report of a local dump never imports pyarrow (issue 28: 25 MiB of
    its peak RSS)."""
    if name == "KEYS_SCHEMA":
        return arrow_schema(KEYS_KINDS)
    if name == "KEYS_FILE_SCHEMA":
        return arrow_schema([(c.name, c.kind) for c in KEYS_VIEW if c.name != "dump_id"])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def arrow_type(kind: str) -> pa.DataType:
    """The pyarrow type of an ARROW_KINDS name."""
    import pyarrow as pa

    if kind == "list<int64>":
        return pa.list_(pa.int64())
    return pa.bool_() if kind == "bool" else getattr(pa, kind)()


def arrow_schema(columns: list[tuple[str, str]]) -> pa.Schema:
    """The pyarrow schema of (name, ARROW_KINDS name) pairs, built once per list."""
    return _arrow_schema(tuple(columns))


@functools.cache
def _arrow_schema(columns: tuple) -> pa.Schema:
    import pyarrow as pa

    return pa.schema([(name, arrow_type(kind)) for name, kind in columns])


# Dictionary-encoded in the Parquet files; the others (key names, offsets, expiry times: nearly
# all distinct) are not: a dictionary that overflows is built, then thrown away (on 1 M keys:
# half the write time, and files 10-40% larger).
DICTIONARY = [c.name for c in KEYS_VIEW if c.dictionary]

# A batch of key rows (the Arrow table `_rdbscan_keys`) as key_rows stores it: the loader's
# family and plain_key (the compiled batch) or, where it left a null (the pure-Python path),
# DuckDB's macros.  store.BulkWriter inserts it, the Parquet writer reads the view over it.
KEY_ROWS_FROM_BATCH = (
    "SELECT * REPLACE ("
    + ", ".join(f"coalesce({c.name}, {c.fill}) AS {c.name}" for c in KEY_ROWS if c.fill)
    + ") FROM _rdbscan_keys"
)

KEY_ROWS_DDL = (
    "CREATE TABLE IF NOT EXISTS key_rows (\n"
    + ",\n".join(f"    {c.name} {c.sql}{' ' + c.storage if c.storage else ''}" for c in KEY_ROWS)
    + "\n);\n"
)
# The view's SELECT list: the DDL below, and the Parquet writer over each batch of key rows.
KEYS_VIEW_SELECT = "SELECT " + ",\n       ".join(
    c.name if c.expr is None else f"{c.expr} AS {c.name}" for c in KEYS_VIEW
)
KEYS_VIEW_DDL = f"CREATE OR REPLACE VIEW keys AS\n{KEYS_VIEW_SELECT}\nFROM key_rows;\n"


def markdown_table() -> str:
    """The `keys` table of docs/tables.md (docs/gen_tables.py writes it there)."""
    lines = ["| column | type | meaning |", "|---|---|---|"]
    lines += [f"| `{c.name}` | {c.sql} | {c.meaning} |" for c in KEYS_VIEW]
    return "\n".join(lines) + "\n"
