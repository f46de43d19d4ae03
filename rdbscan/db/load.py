"""`rdbscan load`: source bytes -> parser -> key rows -> Arrow batches -> DuckDB.

The library entry point is `load(paths, db_path)`; the CLI is a thin wrapper around it.
A dump that ends in an error keeps the rows read before the error, and its `dumps` row
says `complete = false` with the error and its byte offset.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import sys
import time
import traceback
from dataclasses import dataclass, field

from ..model.memory import describe, select_profile, target_quantum, template_registry_cost
from ..rdb.errors import RDBError
from ..rdb.parser import TRAILING_HEAD, DumpInfo, parse
from ..rdb.source import EOF_MARK, MAX_RATIO, Source, SourceError, describe_truncation, open_source
from .columns import KEYS_KINDS
from .filters import KeyFilter
from .heap import release_free_memory
from .identity import dump_fingerprint
from .outcome import cut_warning, invalid_warning
from .rows import BATCH_ROWS, KEY_STREAM, RowBuilder
from .snapshot import snapshot_ms_of, snapshot_time
from .store import STREAM_GROUPS_KINDS, STREAMS_KINDS, BulkWriter, Store


@dataclass
class DumpResult:
    dump_id: int
    path: str
    complete: bool
    keys: int
    error: str | None = None  # one line: "FILE: byte N: what went wrong ..."
    error_kind: str | None = None  # truncated | corrupt | unsupported | not-rdb | io
    error_offset: int | None = None
    checksum_stored: str | None = None
    checksum_computed: str | None = None
    checksum: str | None = None
    parse_seconds: float = 0.0
    bytes_read: int = 0
    # Input handling: how the bytes arrived and what was left out.
    compression: str | None = None  # gzip | zstd | lz4 | bzip2 | xz | vkcs-lz4 | vkcs-zstd
    framing: str | None = None  # rdb | aof-preamble | aof-dir | tar |
    #                     replication-eof | replication-length | replication-stream
    tail_bytes: int | None = None  # bytes after the RDB's checksum (an AOF tail)
    skipped_keys: int = 0  # values left out by skip_bad
    memory_profile: str | None = None  # memory model profile
    memory_model: str | None = None  # the report's line on it (memory.describe)
    warnings: list = field(default_factory=list)
    fingerprint: str | None = None  # identity of the input (rdbscan/db/identity.py)
    # A dump already in the database (same fingerprint): `refused` is the one-line reason the
    # load did nothing (existing='refuse'); `reused` means the result describes that dump
    # (existing='reuse', what `report` does).
    refused: str | None = None
    reused: bool = False
    first_skipped: str | None = None  # the first key --skip-bad left out, described
    cut: dict = field(default_factory=dict)  # counted, not kept (parser.MAX_KEPT_*): {kind: n}
    invalid_keys: int = 0  # keys whose value a Redis server refuses to load (keys.invalid)
    first_invalid: str | None = None  # the first of them, described
    magic: str | None = None  # the header's magic and version ('REDIS0016')
    # A dump newer than rdbscan: the newest version of its magic rdbscan knows, else None.
    newer_than: int | None = None
    hash_template_bytes: int | None = None  # Redis 8.10: the template registry's memory
    key_filter: str | None = None  # the filter at parse time, described (dumps.filter)
    filtered_keys: int = 0  # keys read and left out by it
    # dump-level records counted but not kept in the database (rdbscan migrate's rules)
    key_meta_records: int = 0  # Redis 8.6+ opcode 243 KEY_META
    replication_commands: int = 0
    exception: BaseException | None = field(default=None, repr=False)  # for --debug
    traceback_text: str | None = field(default=None, repr=False)  # --debug, from a worker

    def for_another_process(self) -> DumpResult:
        """This result ready to be sent to another process (a parallel or Dask load): tracebacks
        do not cross processes, so the exception becomes its text."""
        if self.exception is not None:
            e = self.exception
            self.traceback_text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
            self.exception = None
        return self


class ProgressHook:
    """Called every batch with (bytes_read, keys); the CLI draws a progress line with it."""

    def start(self, name: str, size: int | None) -> None: ...

    def update(self, bytes_read: int, keys: int) -> None: ...

    def finish(self) -> None: ...


EXISTING = ("refuse", "replace", "reuse")


def load(
    paths: list[str],
    db_path: str,
    *,
    progress: ProgressHook | None = None,
    verify_crc: bool = True,
    batch_rows: int | None = None,
    target: str | None = None,
    skip_bad: bool = False,
    existing: str = "refuse",
    allow_ratio: bool = False,
    instance: str | None = None,
    snapshot_sizes: list[int] | None = None,
    projector=None,
    key_filter: KeyFilter | None = None,
) -> list[DumpResult]:
    """Load every dump in `paths` into the DuckDB database at `db_path` (created if needed).
    `target` picks the memory model's server profile (default: the dump's own server).
    One process; rdbscan.load(jobs=N) loads several dumps at once (rdbscan/db/parallel.py).
    A dump already in the database (docs/loading.md, "Identity of a dump") is not loaded
    again: existing='refuse' says so in DumpResult.refused, 'reuse' returns the loaded dump's
    result, 'replace' loads it again and removes the old one when the new one commits.
    allow_ratio lifts the decompression-ratio bound (source.MAX_RATIO).
    The dumps of one call are one snapshot (a cluster's shards) of `instance` (docs/diff.md);
    snapshot_sizes splits them into several: how many of `paths`, in order, make each.
    projector(dump_id), when given, makes the consumer each dump's records are also handed to
    (RowBuilder's projector: `rdbscan migrate`), whose rows go to table key_projections.
    key_filter (filters.KeyFilter): only the keys it keeps become rows (docs/export.md)."""
    if existing not in EXISTING:
        raise ValueError(f"existing must be one of {EXISTING}")
    store = Store(db_path)
    try:
        first = store.allocate_dump_ids(len(paths))
        ids = snapshot_ids(first, len(paths), snapshot_sizes)
        return [
            load_one(
                store,
                p,
                progress=progress,
                verify_crc=verify_crc,
                batch_rows=batch_rows,
                target=target,
                skip_bad=skip_bad,
                existing=existing,
                allow_ratio=allow_ratio,
                dump_id=first + i,
                instance=instance,
                snapshot_id=ids[i],
                projector=projector(first + i) if projector is not None else None,
                key_filter=key_filter,
            )
            for i, p in enumerate(paths)
        ]
    finally:
        store.close()


def snapshot_ids(first: int, count: int, sizes: list[int] | None) -> list[int]:
    """The snapshot_id of each of `count` dumps numbered from `first`: the first dump_id of its
    group of `sizes` (default: one group)."""
    sizes = sizes or [count]
    if sum(sizes) != count:
        raise ValueError(f"snapshot sizes {sizes} do not add up to {count} dumps")
    out: list[int] = []
    for n in sizes:
        out += [first + len(out)] * n
    return out


def load_one(
    store: Store,
    path: str,
    *,
    progress: ProgressHook | None = None,
    verify_crc: bool = True,
    batch_rows: int | None = None,
    target: str | None = None,
    skip_bad: bool = False,
    dump_id: int | None = None,
    existing: str = "refuse",
    allow_ratio: bool = False,
    instance: str | None = None,
    snapshot_id: int | None = None,
    projector=None,
    key_filter: KeyFilter | None = None,
) -> DumpResult:
    """Load one dump (see load).  Its key rows and its `dumps` row commit together or not at
    all: the rows are written under a loading mark that commit_dump clears in the transaction
    that writes the `dumps` row; a load that fails inside rdbscan or is interrupted (Ctrl-C) is
    removed (Store.discard), and one killed outright is removed by the next Store opened on the
    database (Store.recover).  An input that could not be opened, or is not an RDB stream at
    all, leaves no row.  snapshot_id: the snapshot the dump belongs to (default: its own id)."""
    if dump_id is None:
        dump_id = store.allocate_dump_ids(1)
    store.begin_load(dump_id)
    info = DumpInfo()
    started = time.perf_counter()
    result = DumpResult(dump_id=dump_id, path=path, complete=False, keys=0)
    source: Source | None = None
    if key_filter is not None and not key_filter.active:
        key_filter = None
    if batch_rows is None:  # the store's own size (a Parquet dataset's row groups), else ours
        batch_rows = store.batch_rows or BATCH_ROWS
    rows = _row_builder(dump_id, info, path, target, batch_rows, projector, key_filter)
    writer = store.bulk(KEY_STREAM)
    committed = False
    try:
        try:
            source = open_source(path, max_ratio=None if allow_ratio else MAX_RATIO)
            _read(source, result, info, rows, writer, progress, verify_crc, skip_bad, target)
        except (RDBError, SourceError, OSError) as e:
            _failed(result, e, info, source, path)
        finally:
            if progress:
                progress.update(info.bytes_read, info.keys)
                progress.finish()
        # Read to the end or to the damage: the rows read are kept.
        _flush(writer, rows)
        writer.close()
        _outcome(result, info, rows, key_filter, target, started)
        if source is None or not info.magic:
            return result  # nothing of an RDB was read: no `dumps` row (the finally discards)
        result.fingerprint = _fingerprint(info, path, result)
        same = store.find_dump(result.fingerprint) if result.fingerprint else None
        if same is not None and existing != "replace":  # its rows go (the finally discards)
            return already_loaded(store, same, path, result.fingerprint, existing)
        replaces = [same["dump_id"]] if same is not None else []
        _write_dump_row(
            store,
            result,
            info,
            source,
            replaces,
            instance=instance,
            snapshot_id=dump_id if snapshot_id is None else snapshot_id,
        )
        committed = True
        return result
    finally:
        if not committed:
            _discard(store, writer, dump_id)
        if source is not None:
            source.close()
        release_free_memory()  # a worker loads dump after dump: its heap must not grow


def _row_builder(
    dump_id: int,
    info: DumpInfo,
    path: str,
    target: str | None,
    batch_rows: int,
    projector,
    key_filter: KeyFilter | None,
) -> RowBuilder:
    """The consumer of the parser's records: key rows in batches of `batch_rows`.  The rows'
    snapshot time is asked for once the parser has read the aux fields (ctime, else the file's
    modification time), so it is a function of `info`, not a value."""
    return RowBuilder(
        dump_id,
        info,
        target,
        batch_rows,
        projector,
        key_filter=key_filter,
        snapshot_ms=lambda: snapshot_ms_of(_int_or_none(info.aux.get("ctime")), path)[0],
    )


def _discard(store: Store, writer: BulkWriter, dump_id: int) -> None:
    """Remove a load that did not commit: its rows go whatever the writer says, and the first
    error (the one being raised, if any) is the one the caller sees."""
    try:
        writer.close()  # a no-op when load_one closed it
    except BaseException:  # noqa: BLE001 - the rows go anyway; keep the first error
        pass
    store.discard(dump_id)


def _read(
    source: Source,
    result: DumpResult,
    info: DumpInfo,
    rows: RowBuilder,
    writer: BulkWriter,
    progress: ProgressHook | None,
    verify_crc: bool,
    skip_bad: bool,
    target: str | None,
) -> None:
    """Parse the opened input into `rows`, writing each full batch as it fills (a dump larger
    than memory streams through); raises what the parser or the input raises."""
    result.path = source.name
    if progress:
        progress.start(source.name, source.size)
    result.compression = source.compression
    result.framing = source.framing
    # A diskless replication payload read from a pipe ends with its 40-byte mark; what
    # may follow is the live replication stream (`redis-cli --replica`): stop there.
    live = source.framing == "replication-eof" and source.size is None
    peek = len(source.notes.get("eof_mark", b"")) if live else TRAILING_HEAD
    records = parse(
        source.stream,
        info,
        size=source.size,
        verify_crc=verify_crc,
        initial=source.initial,
        skip_bad=skip_bad,
        sink=rows.sink,
        quantum=target_quantum(target),
        drain_tail=not live,
        tail_peek=peek,
        tail_ready=source.input_ready,
    )
    for rec in records:
        if rec is not None:  # None: the parser filled rows.sink directly
            rows.add(rec)
        if rows.full:
            _flush(writer, rows)
            if progress:
                progress.update(info.position if rec is None else rec.end, info.keys)
    result.complete = info.complete
    _finish_input(result, info, source)


def _failed(
    result: DumpResult,
    e: RDBError | SourceError | OSError,
    info: DumpInfo,
    source: Source | None,
    path: str,
) -> None:
    """The one-line error of a load that stopped: for damage in the RDB, where (the byte
    offset, and in a VKCS file the compressed block) and how many keys were read before it."""
    result.exception = e
    if isinstance(e, RDBError):
        # In a VKCS file: the logical offset and the compressed block it comes from.
        block = source.input_offset(e.offset) if source is not None else None
        where = f"{source.name if source else path}: {e.describe(block)}"
        cut = describe_truncation(source) if source is not None else None
        if cut and e.kind == "truncated":
            where += f" ({cut})"
        result.error = f"{where}; {info.keys} keys read"
        if info.skipped_keys:
            result.error += f", {info.skipped_keys} damaged keys skipped"
        result.error_kind = e.kind
        result.error_offset = e.offset
    elif isinstance(e, SourceError):
        result.error = str(e)
        result.error_kind = "io"
    else:
        result.error = f"{path}: {e.strerror or e}"
        result.error_kind = "io"


def _outcome(
    result: DumpResult,
    info: DumpInfo,
    rows: RowBuilder,
    key_filter: KeyFilter | None,
    target: str | None,
    started: float,
) -> None:
    """What the parse found, read or not to the end, copied into the result: the counts of
    keys skipped, cut, invalid and filtered out (with their warnings), the checksum and the
    memory model used."""
    result.skipped_keys = info.skipped_keys
    result.first_skipped = info.skipped[0] if info.skipped else None
    result.cut = dict(info.cut)
    if info.cut:
        result.warnings.append(cut_warning(result.path, info.cut))
    result.invalid_keys = info.invalid_keys
    result.first_invalid = info.invalid[0] if info.invalid else None
    result.magic = info.magic
    result.newer_than = info.newer_than
    result.key_meta_records = getattr(info, "key_meta_records", 0)
    result.replication_commands = getattr(info, "replication_commands", 0)
    if info.invalid_keys:
        result.warnings.append(invalid_warning(result.path, info.invalid_keys, info.invalid[0]))
    result.parse_seconds = time.perf_counter() - started
    result.filtered_keys = rows.dropped
    result.key_filter = key_filter.describe() if key_filter is not None else None
    result.keys = info.keys - result.filtered_keys
    result.checksum = info.checksum if info.complete else None
    result.bytes_read = info.bytes_read
    if info.template_count:
        prof = rows.profile or select_profile(info, target)
        result.hash_template_bytes = int(template_registry_cost(info, prof))
    if rows.profile is not None:
        result.memory_profile = rows.profile.name
        result.memory_model = describe(rows.profile, info, target)
    if info.checksum_stored is not None:
        result.checksum_stored = f"{info.checksum_stored:016x}"
        if info.checksum_computed is not None:
            result.checksum_computed = f"{info.checksum_computed:016x}"


def _fingerprint(info: DumpInfo, path: str, result: DumpResult) -> str | None:
    """The dump's identity in the database (identity.py); a filtered load is another set of rows
    than the whole dump's, so the filter is part of it."""
    fingerprint = dump_fingerprint(info, path, result.error, result.error_offset)
    if fingerprint and result.key_filter:
        fingerprint += ":filter:" + hashlib.sha256(result.key_filter.encode()).hexdigest()[:16]
    return fingerprint


def already_loaded(
    store: Store, old: dict, path: str, fingerprint: str | None, existing: str
) -> DumpResult:
    """The result for a dump that is already in the database: refused, or (existing='reuse')
    the loaded dump's own result."""
    result = result_from_row(old)
    result.fingerprint = fingerprint
    if existing == "reuse":
        result.reused = True
    else:
        when = old["loaded_at"].strftime("%Y-%m-%d %H:%M:%S UTC") if old.get("loaded_at") else "?"
        result.refused = (
            f"{path}: already loaded in {store.path} as dump {old['dump_id']} "
            f"({old['path']}, {when}); nothing was added (--replace loads it "
            f"again in its place)"
        )
    return result


def result_from_row(row: dict) -> DumpResult:
    """A DumpResult for a dump already in a database (its `dumps` row as a dict)."""
    result = DumpResult(
        dump_id=row["dump_id"],
        path=row["path"],
        complete=bool(row["complete"]),
        keys=row["keys"] or 0,
        error=row.get("error"),
        error_offset=row.get("error_offset"),
        checksum=row.get("checksum"),
        checksum_stored=row.get("checksum_stored"),
        checksum_computed=row.get("checksum_computed"),
        parse_seconds=row.get("parse_seconds") or 0.0,
        bytes_read=row.get("bytes_read") or 0,
        compression=row.get("compression"),
        framing=row.get("framing"),
        tail_bytes=row.get("tail_bytes"),
        skipped_keys=row.get("skipped_keys") or 0,
        memory_profile=row.get("memory_profile"),
        fingerprint=row.get("fingerprint"),
        cut=dict(row.get("cut") or {}),
        invalid_keys=row.get("invalid_keys") or 0,
        error_kind=row.get("error_kind"),
        magic=row.get("magic"),
        newer_than=row.get("newer_than"),
        key_filter=row.get("filter"),
        filtered_keys=row.get("filtered_keys") or 0,
    )
    return result


def _finish_input(result: DumpResult, info: DumpInfo, source: Source) -> None:
    """After a complete parse: name what followed the RDB (AOF tail, replication EOF mark)."""
    tail = info.trailing_bytes
    head = info.trailing_head or b""
    if source.framing == "replication-eof":
        mark = source.notes.get("eof_mark", b"")
        if tail is None and head[: len(mark)] == mark:  # only when bytes follow the mark
            result.warnings.append(
                f"{source.name}: stopped after the replication payload's "
                f"$EOF mark; what followed it (a live replication stream) "
                f"was not read"
            )
        elif tail is not None and tail >= len(mark) and head[: len(mark)] == mark:
            tail -= len(mark)
        else:
            result.warnings.append(
                f"{source.name}: the replication payload does not end with its $EOF mark"
            )
    elif head.startswith(b"*") and source.framing in ("rdb", "aof-dir", "tar"):
        if source.framing != "aof-dir":
            result.framing = "aof-preamble"
    elif tail == len(head) and EOF_MARK.fullmatch(head):
        # `redis-cli --rdb -` from a diskless master: redis-cli drops the `$EOF:<mark>` header,
        # but writing to a pipe it cannot cut off the mark that ends the payload
        result.framing = "replication-eof"
        tail = 0
    elif tail:
        result.warnings.append(
            f"{source.name}: {tail} bytes follow the RDB's end marker and were not read"
        )
    result.tail_bytes = tail
    if info.skipped_keys:
        result.warnings.append(
            f"{source.name}: {info.skipped_keys} damaged keys skipped "
            f"(--skip-bad); first: {info.skipped[0]}"
        )


def _flush(writer: BulkWriter, rows: RowBuilder) -> None:
    if rows.count:
        writer.add("keys", KEYS_KINDS, rows.take_keys(writer.native))
        writer.add("streams", STREAMS_KINDS, rows.streams)
        writer.add("stream_groups", STREAM_GROUPS_KINDS, rows.groups)
        if rows.projector is not None:
            for table, arrow in rows.projector.take().items():
                writer.store._insert(table, arrow)
        rows.reset()


def _int_or_none(text: str | None, bits: int = 64) -> int | None:
    """An aux field's integer, None when it is not one or does not fit the column (BIGINT, or
    INTEGER with bits=32)."""
    try:
        value = int(text) if text is not None else None
    except ValueError:
        return None
    return value if value is None or -(1 << bits - 1) <= value < (1 << bits - 1) else None


def _write_dump_row(
    store: Store,
    result: DumpResult,
    info: DumpInfo,
    source: Source | None,
    replaces: list[int],
    instance: str | None = None,
    snapshot_id: int | None = None,
) -> None:
    """Commit the dump: its `dumps` row and its side tables (db_sizes, slot_info) in the
    transaction that clears its loading mark (Store.commit_dump)."""
    row = _dump_row(result, info, source, store.dump_stats(result.dump_id), instance, snapshot_id)
    store.commit_dump(
        row,
        {
            "db_sizes": [
                (result.dump_id, db, k, e) for db, (k, e) in sorted(info.resizedb.items())
            ],
            "slot_info": [
                (result.dump_id, s, k, e, info.slot_info_source, info.slot_volatile_items.get(s))
                for s, k, e in info.slot_info
            ],
        },
        replaces,
    )


def _dump_row(
    result: DumpResult,
    info: DumpInfo,
    source: Source | None,
    stats: tuple[int, int, int],
    instance: str | None,
    snapshot_id: int | None,
) -> dict:
    """The dump's `dumps` row (docs/tables.md): what its header and aux fields
    said, how the load went, and the totals of its key rows (`stats`, Store.dump_stats)."""
    ctime = _int_or_none(info.aux.get("ctime"))
    snapshot_ms, snapshot_source = snapshot_ms_of(ctime, result.path)
    return {
        "dump_id": result.dump_id,
        "path": result.path,
        # (a replication header may claim any length: NULL when it does not fit BIGINT)
        "file_size": _int_or_none(str(source.size)) if source and source.size is not None else None,
        "bytes_read": info.bytes_read,
        "magic": info.magic,
        "rdb_version": info.rdb_version,
        "server": info.server,
        "server_version": info.server_version,
        "bits": _int_or_none(info.aux.get("redis-bits"), 32),
        "ctime": ctime,
        "snapshot_time": snapshot_time(ctime),
        "used_mem": _int_or_none(info.aux.get("used-mem")),
        "aof_preamble": info.aux.get("aof-preamble") == "1" or info.aux.get("aof-base") == "1",
        "functions": info.functions,
        "module_aux": info.module_aux,
        "slot_info_records": info.slot_info_records,
        "slot_info_keys": info.slot_info_keys if info.slot_info_records else None,
        "checksum": info.checksum if info.complete else None,
        "checksum_stored": None if info.checksum_stored is None else f"{info.checksum_stored:016x}",
        "checksum_computed": None
        if info.checksum_computed is None
        else f"{info.checksum_computed:016x}",
        "complete": result.complete,
        "error": result.error,
        "error_kind": result.error_kind,
        "error_offset": result.error_offset,
        "newer_than": info.newer_than,
        "hash_templates": info.template_count if info.template_count else None,
        "hash_template_fields": info.template_fields if info.template_count else None,
        "hash_template_bytes": result.hash_template_bytes,
        "keys": result.keys,
        "filter": result.key_filter,
        "filtered_keys": result.filtered_keys if result.key_filter else None,
        "expires": stats[0],
        "memory_bytes": stats[1],
        "memory_total_bytes": stats[2],
        "memory_profile": result.memory_profile,
        "memory_model": result.memory_model,
        "parse_seconds": result.parse_seconds,
        "loaded_at": dt.datetime.now(dt.timezone.utc).replace(tzinfo=None),
        # Input handling.
        "compression": result.compression,
        "framing": result.framing,
        "tail_bytes": _int_or_none(None if result.tail_bytes is None else str(result.tail_bytes)),
        "skipped_keys": info.skipped_keys,
        "invalid_keys": info.invalid_keys,
        "fingerprint": result.fingerprint,
        # Snapshots (docs/diff.md).
        "instance": instance,
        "snapshot_id": snapshot_id,
        "snapshot_ms": snapshot_ms,
        "snapshot_source": snapshot_source,
        "aux": info.aux,
        "cut": info.cut,
    }


def summarize(result: DumpResult) -> str:
    """One line for the terminal about a loaded dump."""
    if result.error:
        return result.error
    rate = result.keys / result.parse_seconds if result.parse_seconds else 0
    return (
        f"{result.path}: {result.keys:,} keys{filtered_out(result)}, checksum {result.checksum}, "
        f"{result.parse_seconds:.2f} s ({rate:,.0f} keys/s)"
    )


def filtered_out(result: DumpResult) -> str:
    """' (N left out by FILTER)' after the count of keys of a load with a filter (a filter that
    keeps nothing shows as 0 keys, never as an empty dump); '' without one."""
    if not result.key_filter:
        return ""
    return f" ({result.filtered_keys:,} left out by the filter: {result.key_filter})"


if __name__ == "__main__":  # pragma: no cover
    for r in load(sys.argv[2:], sys.argv[1]):
        print(summarize(r))
