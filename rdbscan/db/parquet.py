"""Parquet datasets: `rdbscan load DUMP... --parquet DIR` (docs/fleet.md).

A dataset is a directory (or an object-store prefix, `s3://bucket/prefix`) with one folder per
table, each hive-partitioned by dump:

    DIR/_rdbscan_dataset.json                    what wrote it, the last dump id given
    DIR/keys/instance=I/snapshot=S/dump_id=N/part-00000.parquet
    DIR/dumps/instance=I/snapshot=S/dump_id=N/part-00000.parquet
    DIR/{db_sizes,slot_info,streams,stream_groups}/instance=I/snapshot=S/dump_id=N/...

The `keys` files hold the columns of the database's `keys` view, the others the columns of the
tables of the same names (docs/tables.md), zstd-compressed; the partition columns are in the
path only (as Spark, Trino and pyarrow write and expect them).  `instance` is URL-quoted, and
`__HIVE_DEFAULT_PARTITION__` for a dump loaded without --instance (read back as NULL).

ParquetStore is the Store that load_one writes to: rows arrive as the same Arrow batches as
for DuckDB, pass through an in-memory DuckDB that computes the `keys` view's columns from them
(the view's own SQL, so both outputs hold the same values), and are appended to the Parquet
file batch by batch on a second thread (memory: the queue's two batches and one row group).
A dump's files are written under DIR/_staging/ and moved into their partitions when the dump
commits, its `dumps` row last: a dump is in the dataset exactly when its `dumps` partition is.
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from typing import Any
from urllib.parse import quote, unquote

import pyarrow as pa
import pyarrow.parquet as pq

from ..rdb import remote
from .connections import connect
from .macros import MACROS
from .store import DDL, KEYS_SCHEMA, SCHEMA_VERSION, QueuedWriter, Store, StoreError, arrow_batch

DATASET_FILE = "_rdbscan_dataset.json"
STAGING = "_staging"
TABLES = ("keys", "streams", "stream_groups", "db_sizes", "slot_info", "dumps")
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"  # Hive's, pyarrow's and DuckDB's name for NULL
ROWS_PER_FILE = 8_000_000  # a new part file after this many key rows (files of ~100-300 MB)
COMPRESSION = "zstd"
# Columns with few distinct values, dictionary-encoded; the others (key names, offsets, expiry
# times: nearly all distinct) are not: a dictionary that overflows is built, then thrown away
# (on 1 M keys: half the write time, and files 10-40% larger).
DICTIONARY = [
    "db",
    "family",
    "type",
    "encoding",
    "module_type",
    "rdb_type",
    "plain_key",
    "length",
    "max_elem_bytes",
    "serialized_bytes",
    "memory_bytes",
    "memory_total_bytes",
    "key_length",
    "lfu_freq",
]

_VIEW_HEAD = "CREATE OR REPLACE VIEW keys AS"
_VIEW_TAIL = "FROM key_rows;"
# The `keys` view's SELECT list (rdbscan/db/store.py), applied to each batch of key rows.
KEYS_VIEW_SELECT = DDL[DDL.index(_VIEW_HEAD) + len(_VIEW_HEAD) : DDL.index(_VIEW_TAIL)]
# A batch of key_rows as BulkWriter inserts it (family and plain_key computed where the loader
# left a null), then the view's columns but dump_id, which is in the partition's path.
KEYS_FROM_BATCH = (
    "WITH key_rows AS (SELECT * REPLACE (coalesce(family, key_pattern(key)) AS family, "
    "coalesce(plain_key, is_plain_key(key)) AS plain_key) FROM _rdbscan_keys) "
    f"SELECT * EXCLUDE (dump_id) FROM ({KEYS_VIEW_SELECT} FROM key_rows)"
)


def partition_path(instance: str | None, snapshot_id: int, dump_id: int) -> str:
    inst = NULL_PARTITION if instance is None else quote(instance, safe="")
    return f"instance={inst}/snapshot={snapshot_id}/dump_id={dump_id}"


def parse_partition(path: str) -> dict[str, Any]:
    """instance, snapshot and dump_id from a path holding `instance=.../snapshot=.../dump_id=N`."""
    out: dict[str, Any] = {}
    for part in path.split("/"):
        name, sep, value = part.partition("=")
        if sep and name in ("instance", "snapshot", "dump_id"):
            if name == "instance":
                out[name] = None if value == NULL_PARTITION else unquote(value)
            else:
                out[name] = int(value)
    return out


def is_dataset(path: str) -> bool:
    """Whether `path` is a dataset rdbscan wrote (its DATASET_FILE is there)."""
    try:
        fs = remote.filesystem(path)
        return fs.isfile(_join(_fs_path(fs, path), DATASET_FILE))
    except (remote.UnsupportedURL, OSError, ValueError):
        return False


def _fs_path(fs, path: str) -> str:
    if remote.is_url(path):
        return fs._strip_protocol(path).rstrip("/")
    return os.path.abspath(remote.local_path(path))


def _join(*parts: str) -> str:
    return "/".join(p.rstrip("/") for p in parts)


class Dataset:
    """A dataset's place: its file system, root (in the file system's terms) and marker."""

    def __init__(self, path: str, create: bool = False):
        self.path = path
        self.fs = remote.filesystem(path)
        self.root = _fs_path(self.fs, path)
        self.remote = remote.is_url(path)
        self._dumps: list[dict] | None = None
        try:
            if create:
                self._claim()
            else:
                self.meta()
        except (StoreError, OSError):
            raise
        except Exception as e:  # the object store's own errors: no credentials, no bucket
            raise StoreError(f"{path}: {type(e).__name__}: {e}") from None

    def url(self, rel: str = "") -> str:
        """What DuckDB and pyarrow are given: a local path, or the URL with its scheme."""
        where = _join(self.root, rel) if rel else self.root
        if not self.remote:
            return where
        return f"{remote.scheme(self.path)}://{where}"

    def _claim(self) -> None:
        """Make `root` a dataset, or check it is one: an existing file, or a folder holding
        anything but a dataset, is left untouched and refused."""
        fs, marker = self.fs, _join(self.root, DATASET_FILE)
        if fs.isfile(marker):
            self.meta()
            return
        if fs.isfile(self.root):
            raise StoreError(f"{self.path}: is a file, not a directory for a Parquet dataset")
        if fs.isdir(self.root) and fs.ls(self.root, detail=False):
            raise StoreError(
                f"{self.path}: a directory that is not an rdbscan dataset (no {DATASET_FILE}) "
                f"and not empty; it is left untouched: give a new or empty directory"
            )
        fs.makedirs(self.root, exist_ok=True)
        self._write_meta({"format": "rdbscan-parquet", "schema_version": SCHEMA_VERSION})

    def meta(self) -> dict:
        marker = _join(self.root, DATASET_FILE)
        try:
            with self.fs.open(marker, "rb") as fh:
                meta = json.loads(fh.read().decode("utf-8"))
        except FileNotFoundError:
            raise StoreError(f"{self.path}: not an rdbscan dataset (no {DATASET_FILE})") from None
        except (ValueError, UnicodeDecodeError):
            raise StoreError(f"{self.path}: {DATASET_FILE} is damaged") from None
        if meta.get("schema_version") != SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: written by an rdbscan with database schema "
                f"{meta.get('schema_version')}, this one uses schema {SCHEMA_VERSION}: "
                f"load the dumps into a new dataset"
            )
        return meta

    def _write_meta(self, meta: dict) -> None:
        with self.fs.open(_join(self.root, DATASET_FILE), "wb") as fh:
            fh.write(json.dumps(meta, indent=1, sort_keys=True).encode("utf-8") + b"\n")

    def files(self, table: str) -> list[str]:
        """The Parquet files of one table (committed dumps only), in the file system's terms."""
        try:
            found = self.fs.glob(
                _join(self.root, table, "instance=*/snapshot=*/dump_id=*/*.parquet")
            )
        except FileNotFoundError:
            return []
        return sorted(found)

    def partitions(self, dump_id: int) -> list[str]:
        """Every table's folder of one dump."""
        return sorted(
            p
            for p in self.fs.glob(_join(self.root, f"*/instance=*/snapshot=*/dump_id={dump_id}"))
            if not p[len(self.root) + 1 :].startswith(STAGING)
        )

    def dumps(self) -> list[dict]:
        """The `dumps` rows of the committed dumps, with their partition columns (read once,
        then kept up to date by publish and remove_dump: one writer at a time)."""
        if self._dumps is None:
            self._dumps = [row for f in self.files("dumps") for row in self._read_dumps(f)]
        return sorted(self._dumps, key=lambda r: r["dump_id"])

    def _read_dumps(self, path: str) -> list[dict]:
        table = pq.read_table(path, filesystem=self.fs if self.remote else None)
        part = parse_partition(path[len(self.root) :])
        return [
            {**row, "dump_id": part["dump_id"], "instance": part["instance"]}
            for row in table.to_pylist()
        ]

    def allocate_dump_ids(self, n: int) -> int:
        """The first of `n` dump ids never given before in this dataset (one writer at a time:
        the last id given is kept in DATASET_FILE)."""
        meta = self.meta()
        last = int(meta.get("last_dump_id", 0))
        for p in self.fs.glob(_join(self.root, "*/instance=*/snapshot=*/dump_id=*")):
            last = max(last, parse_partition(p).get("dump_id", 0))
        meta["last_dump_id"] = last + n
        self._write_meta(meta)
        return last + 1

    def remove_dump(self, dump_id: int) -> None:
        """Remove every partition of a dump, its `dumps` row first (it leaves the dataset then)."""
        if self._dumps is not None:
            self._dumps = [d for d in self._dumps if d["dump_id"] != dump_id]
        parts = self.partitions(dump_id)
        parts.sort(key=lambda p: not p[len(self.root) + 1 :].startswith("dumps/"))
        for p in parts:
            self.fs.rm(p, recursive=True)

    def publish(self, staging: str, partition: str, replaces: list[int]) -> None:
        """Move a staged dump's folders into their partitions, `dumps` last; remove the dumps
        it replaces; remove the staging folder."""
        tables = sorted(
            (p.rstrip("/").rsplit("/", 1)[1] for p in self.fs.ls(staging, detail=False)),
            key=lambda t: t == "dumps",
        )
        for table in tables:
            dest = _join(self.root, table, partition)
            if self.fs.exists(dest) and self.fs.ls(dest, detail=False):
                raise StoreError(
                    f"{self.url(table + '/' + partition)}: exists; it is left untouched"
                )
            self._move(_join(staging, table), dest)
            if table == "dumps" and self._dumps is not None:
                self._dumps += [r for f in self.fs.find(dest) for r in self._read_dumps(f)]
        for old in replaces:
            self.remove_dump(old)
        if self.fs.exists(staging):
            self.fs.rm(staging, recursive=True)

    def _move(self, src: str, dest: str) -> None:
        """A folder of files moved: a rename on a local disk; in an object store, where folders
        are only names' prefixes, each object copied (inside the store) then deleted."""
        if not self.remote:
            self.fs.makedirs(dest.rsplit("/", 1)[0], exist_ok=True)
            self.fs.mv(src, dest, recursive=True)
            return
        files = self.fs.find(src)
        self.fs.copy(files, [dest + f[len(src) :] for f in files])
        self.fs.rm(files)

    def remove_staged(self, dump_ids) -> None:
        """Remove what is still staged for these dump ids (tasks that failed or ran twice)."""
        wanted = {str(d) for d in dump_ids}
        if not wanted:
            return
        try:
            names = self.fs.ls(_join(self.root, STAGING), detail=False)
        except FileNotFoundError:
            return
        for p in names:
            if p.rstrip("/").rsplit("/", 1)[1].split("~")[0] in wanted:
                self.fs.rm(p, recursive=True)

    def recover(self) -> None:
        """Remove staging folders of loads on this machine whose process is gone (killed)."""
        host = socket.gethostname()
        try:
            names = self.fs.ls(_join(self.root, STAGING), detail=False)
        except FileNotFoundError:
            return
        for p in names:
            token = p.rstrip("/").rsplit("/", 1)[1].split("~")
            if len(token) == 4 and token[1] == host and token[2].isdigit():
                if not _alive(int(token[2])):
                    self.fs.rm(p, recursive=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


class ParquetStore(Store):
    """The Store load_one writes a dump to when the output is a dataset (module docstring).

    publish=False (a worker of `--jobs` or `--dask`): a committed dump stays staged (`staged`
    says where), and find_dump finds nothing: the process that gave out the dump ids settles
    identity and publishes, in the order of the paths (rdbscan/fleet/)."""

    def __init__(self, path: str, *, publish: bool = True):
        self.dataset = Dataset(path, create=publish)
        self.path = path
        self.publishing = publish
        self.staged: dict[int, tuple[str, str]] = {}  # dump_id -> (staging folder, partition)
        self._staging: dict[int, str] = {}
        self._stats: dict[int, tuple[int, int, int]] = {}
        self._current: int | None = None
        self.con = connect(
            ":memory:", config={"memory_limit": "64MB", "preserve_insertion_order": True}
        )
        self.run(DDL)
        for macro in MACROS:
            self.run(macro)
        if publish:
            self.dataset.recover()

    def allocate_dump_ids(self, n: int = 1) -> int:
        return self.dataset.allocate_dump_ids(n)

    def begin_load(self, dump_id: int) -> None:
        token = "~".join(
            [str(dump_id), socket.gethostname(), str(os.getpid()), uuid.uuid4().hex[:8]]
        )
        self._staging[dump_id] = _join(self.dataset.root, STAGING, token)
        self.dataset.fs.makedirs(self._staging[dump_id], exist_ok=True)
        self._current = dump_id

    def recover(self) -> None:
        self.dataset.recover()

    def discard(self, dump_id: int) -> None:
        staging = self._staging.pop(dump_id, None)
        self._stats.pop(dump_id, None)
        if staging and self.dataset.fs.exists(staging):
            self.dataset.fs.rm(staging, recursive=True)

    def find_dump(self, fingerprint: str) -> dict | None:
        if not self.publishing:
            return None
        for row in self.dataset.dumps():
            if row.get("fingerprint") == fingerprint:
                return row
        return None

    def bulk(self) -> ParquetBulkWriter:  # type: ignore[override]
        assert self._current is not None, "begin_load first"
        return ParquetBulkWriter(self, self._current, self._staging[self._current])

    def dump_stats(self, dump_id: int) -> tuple[int, int, int]:
        return self._stats.get(dump_id, (0, 0, 0))

    def commit_dump(self, row: dict, side: dict[str, list[tuple]], replaces: list[int]) -> None:
        """Write the `dumps` row and side tables into the staging folder, then (publishing)
        move the dump into the dataset."""
        dump_id = row["dump_id"]
        staging = self._staging[dump_id]
        self.write_dump(row)
        for table, rows in side.items():
            self.write_rows(table, rows)
        for table in ("dumps", *side):
            drop = "dump_id, instance" if table == "dumps" else "dump_id"
            data = self.con.sql(
                f"SELECT * EXCLUDE ({drop}) FROM {table} WHERE dump_id = $id",
                params={"id": dump_id},
            )
            data = _arrow_table(data)
            self.run(f"DELETE FROM {table} WHERE dump_id = ?", [dump_id])
            if data.num_rows:
                _write_file(self.dataset, _join(staging, table, "part-00000.parquet"), data)
        partition = partition_path(row.get("instance"), row.get("snapshot_id") or dump_id, dump_id)
        self._stats.pop(dump_id, None)
        if self.publishing:
            self.dataset.publish(staging, partition, replaces)
            self._staging.pop(dump_id, None)
        else:
            self.staged[dump_id] = (staging, partition)
            self._staging.pop(dump_id, None)  # the publisher's now: discard leaves it

    def close(self) -> None:
        self.con.close()


def _arrow_table(relation) -> pa.Table:
    """A relation's rows as an Arrow table (DuckDB 1.4 renamed arrow() to_arrow_table())."""
    fetch = getattr(relation, "to_arrow_table", None) or relation.arrow
    return fetch()


def _write_file(dataset: Dataset, path: str, table: pa.Table) -> None:
    fs = dataset.fs
    fs.makedirs(path.rsplit("/", 1)[0], exist_ok=True)
    pq.write_table(table, path, compression=COMPRESSION, filesystem=fs if dataset.remote else None)


class _PartFiles:
    """One table's Parquet files in a staging folder: part-00000.parquet, a new one every
    ROWS_PER_FILE rows; row groups as the batches come."""

    def __init__(self, dataset: Dataset, folder: str, schema: pa.Schema):
        self.dataset, self.folder, self.schema = dataset, folder, schema
        self.writer: pq.ParquetWriter | None = None
        self.files = 0
        self.rows = 0

    def write(self, table: pa.Table) -> None:
        if self.writer is not None and self.rows >= ROWS_PER_FILE:
            self.writer.close()
            self.writer = None
        if self.writer is None:
            self._open()
        assert self.writer is not None
        if not table.schema.equals(self.schema):
            table = table.cast(self.schema)
        self.writer.write_table(table)
        self.rows += table.num_rows

    def _open(self) -> None:
        path = _join(self.folder, f"part-{self.files:05d}.parquet")
        self.dataset.fs.makedirs(self.folder, exist_ok=True)
        self.writer = pq.ParquetWriter(
            path,
            self.schema,
            compression=COMPRESSION,
            use_dictionary=[c for c in DICTIONARY if c in self.schema.names],
            filesystem=self.dataset.fs if self.dataset.remote else None,
        )
        self.files += 1
        self.rows = 0

    def close(self, always: bool = False) -> None:
        """Finish the last file; always: write an empty file when no row came (a dump
        without keys still has its `keys` partition)."""
        if self.writer is None and always and not self.files:
            self._open()
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def keys_file_schema(con) -> pa.Schema:
    """The `keys` files' columns: the view's but dump_id, with their Arrow types."""
    empty = pa.Table.from_batches([], schema=KEYS_SCHEMA)
    con.register("_rdbscan_keys", empty)
    try:
        return _arrow_table(con.sql(KEYS_FROM_BATCH + " LIMIT 0")).schema
    finally:
        con.unregister("_rdbscan_keys")


class ParquetBulkWriter(QueuedWriter):
    """BulkWriter's twin for a dataset: `add` puts key batches on a small queue; a second
    thread turns each into the `keys` view's columns (DuckDB, in memory) and appends it to the
    dump's Parquet file.  The side tables (streams, stream_groups) are written on the caller's
    thread.  The dump's sums for its `dumps` row (ParquetStore.dump_stats) are counted here."""

    def __init__(self, store: ParquetStore, dump_id: int, staging: str):
        self.store, self.dump_id, self.staging = store, dump_id, staging
        self.cursor = store.con.cursor()
        self.schema = keys_file_schema(self.cursor)
        self.side: dict[str, _PartFiles] = {}
        self.stats = [0, 0, 0]
        self.closed = False
        self._start(self._write_keys, "Parquet writer")

    def _write_keys(self) -> None:
        import pyarrow.compute as pc

        files = _PartFiles(self.store.dataset, _join(self.staging, "keys"), self.schema)
        try:
            while True:
                batch = self.batches.get()
                if batch is None:
                    break
                self.cursor.register("_rdbscan_keys", batch)
                try:
                    table = _arrow_table(self.cursor.sql(KEYS_FROM_BATCH))
                finally:
                    self.cursor.unregister("_rdbscan_keys")
                exp = table.column("expire_at_ms")
                self.stats[0] += len(exp) - exp.null_count
                self.stats[1] += pc.sum(table.column("memory_bytes")).as_py() or 0
                self.stats[2] += pc.sum(table.column("memory_total_bytes")).as_py() or 0
                files.write(table)
            files.close(always=True)
            self.store._stats[self.dump_id] = (self.stats[0], self.stats[1], self.stats[2])
        except BaseException as e:  # reported to the parsing thread by _put / close
            self.error = e
            try:
                files.close()
            except BaseException:  # noqa: BLE001 - keep the first error
                pass
        finally:
            self.cursor.close()

    def add(self, table: str, schema: pa.Schema, columns: list) -> None:
        if not columns or not len(columns[0]):
            return
        batch = arrow_batch(schema, columns)
        if table == "keys":
            self._put(pa.Table.from_batches([batch]))
            return
        if table not in self.side:
            file_schema = pa.schema([f for f in schema if f.name != "dump_id"])
            self.side[table] = _PartFiles(
                self.store.dataset, _join(self.staging, table), file_schema
            )
        self.side[table].write(pa.Table.from_batches([batch]).drop_columns(["dump_id"]))

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._end_stream()
        for files in self.side.values():
            files.close()
        if self.error is not None:
            raise self.error
