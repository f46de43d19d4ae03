"""The loader and the `load` / `sql` commands: rows in DuckDB, the dumps table, exit codes,
one-line errors."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import duckdb
import pytest
from common import FIXTURE_DUMPS, FIXTURES, run_cli

from rdbscan.db.load import load
from rdbscan.db.rows import KEY_KEEP
from rdbscan.db.store import SCHEMA_VERSION
from rdbscan.model.slots import key_slot

SAMPLE = Path(__file__).parent.parent / "sample_dumps" / "redis-7.4.1.rdb"
V70 = FIXTURES / "redis-7.0.15" / "variants"


def _manifest(d: Path) -> dict:
    return json.loads((d / "manifest.json").read_text())


def test_keys_table_matches_manifest(tmp_path):
    d = FIXTURES / "redis-7.4.1" / "small"
    m = _manifest(d)
    db = tmp_path / "t.duckdb"
    [res] = load([str(d / "dump.rdb")], str(db))
    assert res.complete and res.error is None and res.keys == m["key_count"]
    con = duckdb.connect(str(db), read_only=True)
    rows = {
        (r[0], bytes(r[1])): r[2:]
        for r in con.execute(
            "SELECT db, key_bytes, key, type, encoding, length, expire_at_ms, slot, key_length "
            "FROM keys"
        ).fetchall()
    }
    assert len(rows) == m["key_count"]
    for e in m["keys"]:
        kb = base64.b64decode(e["key_b64"]) if "key_b64" in e else e["key"].encode()
        key, typ, enc, length, expire, slot, key_length = rows[(e["db"], kb)]
        assert key == kb.decode("utf-8", "backslashreplace")
        assert (typ, length, expire) == (e["type"], e["length"], e.get("expire_at_ms"))
        assert slot == key_slot(kb) and key_length == len(kb)
    # Invalid UTF-8 keys are shown with \xNN escapes and kept exactly in key_bytes.
    assert (
        con.execute(
            "SELECT count(*) FROM keys WHERE key LIKE '%\\x%' ESCAPE '!' "
            "AND key_bytes <> encode(key)"
        ).fetchone()[0]
        >= 1
    )
    # Records tile the file: each key's record ends where the next one starts.
    offs = con.execute(
        "SELECT file_offset, serialized_bytes FROM keys ORDER BY file_offset"
    ).fetchall()
    assert all(a + n <= b for (a, n), (b, _) in zip(offs, offs[1:]))
    dump = con.execute(
        "SELECT path, rdb_version, magic, server, server_version, bits, complete, checksum, keys,"
        " expires, map_extract(aux, 'ctime')[1], used_mem, functions FROM dumps"
    ).fetchone()
    assert dump[:10] == (
        str(d / "dump.rdb"),
        12,
        "REDIS0012",
        "redis",
        "7.4.1",
        64,
        True,
        "ok",
        m["key_count"],
        sum(1 for e in m["keys"] if e.get("expire_at_ms")),
    )
    assert int(dump[10]) == m["save_time_ms"] // 1000
    assert dump[11] > 0 and dump[12] == ["rdbscan_lib"]
    streams = con.execute("SELECT count(*), sum(groups) FROM streams").fetchone()
    want = [e for e in m["keys"] if e["type"] == "stream"]
    assert streams == (len(want), sum(e["stream"]["groups"] for e in want))
    assert con.execute("SELECT count(*) FROM keys WHERE fields_with_ttl > 0").fetchone()[0] == sum(
        1 for e in m["keys"] if e.get("fields_with_ttl")
    )


def test_several_dumps_share_one_database(tmp_path):
    db = str(tmp_path / "c.duckdb")
    paths = [
        str(FIXTURES / v / "variants" / "cluster" / "dump.rdb")
        for v in ("redis-7.4.1", "valkey-8.0.1")
    ]
    results = load(paths, db)
    assert [r.dump_id for r in results] == [1, 2]
    con = duckdb.connect(db, read_only=True)
    counts = dict(con.execute("SELECT dump_id, count(*) FROM keys GROUP BY 1").fetchall())
    assert counts == {
        1: _manifest(Path(paths[0]).parent)["key_count"],
        2: _manifest(Path(paths[1]).parent)["key_count"],
    }
    announced = con.execute("SELECT sum(keys) FROM slot_info WHERE dump_id = 1").fetchone()[0]
    assert announced == counts[1]


def test_load_command_exit_codes(tmp_path):
    db = str(tmp_path / "x.duckdb")
    ok = run_cli("load", "-q", str(V70 / "nochecksum" / "dump.rdb"), "-o", db)
    assert ok.exit_code == 0
    bad = run_cli("load", "-q", str(V70 / "corrupt-value" / "dump.rdb"), "-o", db)
    assert bad.exit_code == 5
    assert "checksum mismatch" in bad.output
    con = duckdb.connect(db, read_only=True)
    assert con.execute(
        "SELECT checksum, complete, keys FROM dumps ORDER BY dump_id"
    ).fetchall() == [("disabled", True, 562), ("mismatch", True, 562)]
    con.close()
    cut = run_cli("load", "-q", str(V70 / "truncated" / "dump.rdb"), "-o", db)
    assert cut.exit_code == 4
    con = duckdb.connect(db, read_only=True)
    row = con.execute(
        "SELECT complete, error_offset, keys, (SELECT count(*) FROM keys k WHERE "
        "k.dump_id = d.dump_id) FROM dumps d WHERE dump_id = 3"
    ).fetchone()
    assert row == (False, 344925, 389, 389)


def test_aux_numbers_a_column_cannot_hold_read_as_null(tmp_path):
    """A damaged aux field must not stop the dumps row from being written, nor the report."""
    sys.path.insert(0, str(Path(__file__).parent))
    import rdbwriter as W

    dump = tmp_path / "aux.rdb"
    dump.write_bytes(
        W.rdb(
            W.key(0, "k", W.string("v")),
            aux={"ctime": str(1 << 62), "used-mem": str(1 << 70), "redis-bits": str(1 << 40)},
        )
    )
    db = str(tmp_path / "aux.duckdb")
    [result] = load([str(dump)], db)
    assert (result.error, result.keys) == (None, 1)
    con = duckdb.connect(db, read_only=True)
    assert con.execute("SELECT ctime, snapshot_time, used_mem, bits FROM dumps").fetchone() == (
        1 << 62,
        None,
        None,
        None,
    )
    con.close()
    res = run_cli("report", db, "-f", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["overview"]["snapshot_source"] == "file-mtime"


def test_sql_command_formats(tmp_path):
    db = str(tmp_path / "s.duckdb")
    load([str(FIXTURES / "redis-7.0.15" / "small" / "dump.rdb")], db)
    q = "SELECT type, count(*) AS n FROM keys WHERE db = 15 GROUP BY 1 ORDER BY 1"
    out = run_cli("sql", db, q, "--format", "json")
    assert out.exit_code == 0
    got = json.loads(out.output)
    m = _manifest(FIXTURES / "redis-7.0.15" / "small")
    want = {}
    for e in m["keys"]:
        if e["db"] == 15:
            want[e["type"]] = want.get(e["type"], 0) + 1
    assert got == [{"type": t, "n": n} for t, n in sorted(want.items())]
    out = run_cli("sql", db, q, "-f", "csv")
    assert out.output.splitlines()[:2] == ["type,n", "hash,1"]
    out = run_cli("sql", db, "SELEC nonsense")
    assert out.exit_code == 2 and "SQL error" in out.output


PUBLIC = sorted(p for p in (FIXTURES / "public").rglob("*") if p.suffix in (".rdb", ".aof"))
EXPECTED_FAILURES = {
    "module.rdb": ("unsupported", "type 6"),
    "corrupt_ziplist.rdb": ("corrupt", "ziplist"),
}


@pytest.mark.slow
def test_every_public_fixture_loads_or_fails_in_one_line(tmp_path):
    assert len(PUBLIC) >= 140
    db = str(tmp_path / "p.duckdb")
    results = load([str(p) for p in PUBLIC], db)
    failures = {}
    for p, r in zip(PUBLIC, results):
        if r.error:
            assert "\n" not in r.error and r.error.startswith(str(p))
            failures[p.name] = (r.error_kind, r.error)
        else:
            assert r.complete
    assert set(failures) == set(EXPECTED_FAILURES)
    for name, (kind, text) in EXPECTED_FAILURES.items():
        assert failures[name][0] == kind and text in failures[name][1]
    con = duckdb.connect(db, read_only=True)
    # librdb's future_v19.rdb: REDIS0099 written over a real header without its CRC64 again:
    # read on as a newer dump (its one key kept), and its checksum does not match.
    assert con.execute(
        "SELECT keys, newer_than FROM dumps WHERE path LIKE '%future_v19.rdb'"
    ).fetchone() == (1, 15)
    assert con.execute("SELECT count(*) FROM dumps WHERE checksum = 'mismatch'").fetchone() == (2,)
    assert con.execute("SELECT count(*) FROM keys WHERE rdb_type = 7").fetchone()[0] >= 2


@pytest.mark.parametrize(
    "data,message",
    [
        (b"not an rdb file at all", "not an RDB file"),
        (b"REDIS0000\xff", "RDB version 0: versions begin at 1"),
    ],
)
def test_cli_errors_are_one_line_without_traceback(tmp_path, data, message):
    f = tmp_path / "in.rdb"
    f.write_bytes(data)
    p = run_cli("load", f, "-o", tmp_path / "o.duckdb")
    assert p.returncode == 4
    assert p.stderr.count("\n") == 1 and message in p.stderr
    assert "Traceback" not in p.stderr


def _parsed_keys(path: Path) -> list:
    """(db, key bytes, type, encoding, rdb_type, key length, idle, freq, fields with TTL,
    earliest field expiry, int members) of every key the parser reads in `path`."""
    from rdbscan.rdb.errors import RDBError
    from rdbscan.rdb.parser import DumpInfo, parse
    from rdbscan.rdb.source import open_source

    out = []
    try:
        src = open_source(str(path))
    except RDBError:
        return out
    try:
        for rec in parse(src.stream, DumpInfo(), size=src.size, initial=src.initial):
            ttl = rec.field_ttls
            # the view's type of a module value is its type name (the parser's encoding), and
            # its encoding `raw`, as OBJECT ENCODING says
            module = rec.type == "module"
            typ = rec.encoding if module else rec.type
            # a key name longer than KEY_KEEP is stored as its first bytes (the fixtures' are
            # ASCII), with its full length
            out.append(
                (
                    rec.db,
                    rec.key[:KEY_KEEP],
                    typ,
                    "raw" if module else rec.encoding,
                    rec.rdb_type,
                    rec.key_length,
                    rec.idle,
                    rec.freq,
                    ttl and ttl.fields_with_ttl,
                    ttl and ttl.min_field_expire_ms,
                    rec.int_members,
                )
            )
    except RDBError:
        pass  # the rows before the error are what the loader keeps
    finally:
        src.close()
    return out


@pytest.mark.slow
def test_view_columns_read_as_the_parser_saw_them(fixtures_db):
    """The view `keys` computes key_bytes, key_length, type, encoding and the extras columns
    from what table key_rows stores (key_raw, rdb_type, encoding_id, module_type, extras):
    every fixture's keys read back as the parser's KeyRecords had them."""
    dumps = [Path(p) for p in FIXTURE_DUMPS]
    con = duckdb.connect(fixtures_db, read_only=True)
    got = {}
    for path, *row in con.execute(
        "SELECT d.path, k.db, k.key_bytes, k.type, k.encoding, k.rdb_type, k.key_length, "
        "k.idle_seconds, k.lfu_freq, k.fields_with_ttl, k.min_field_expire_ms, k.int_members, "
        "k.key_raw, k.key FROM keys k JOIN dumps d USING (dump_id)"
    ).fetchall():
        got.setdefault(path, []).append(tuple(row))
    invalid = 0
    for p in dumps:
        want = sorted(_parsed_keys(p), key=repr)
        rows = sorted(got.get(str(p), []), key=repr)
        assert [r[:11] for r in rows] == want, p
        for _, kb, *_, raw, text in rows:
            valid = kb.decode("utf-8", "replace").encode() == kb
            assert (raw is None) == valid and text == kb.decode("utf-8", "backslashreplace")
            invalid += raw is not None
    assert invalid >= 1  # keys that are not UTF-8 are in the fixtures
    # and key names longer than KEY_KEEP, marked
    truncated, wrong, unhashed = con.execute(
        "SELECT count(*) FILTER (WHERE key_truncated), "
        "count(*) FILTER (WHERE key_truncated <> (key_length > ?)), "
        "count(*) FILTER (WHERE key_truncated AND key_hash IS NULL) "
        "FROM keys",
        [KEY_KEEP],
    ).fetchone()
    assert truncated >= 1 and wrong == 0 and unhashed == 0
    # ... and so are module values and every extras column
    assert (
        0
        not in con.execute(
            "SELECT count(*) FILTER (WHERE rdb_type = 7), "
            "count(idle_seconds), count(lfu_freq), count(fields_with_ttl), "
            "count(min_field_expire_ms), count(int_members) FROM keys"
        ).fetchone()
    )


def test_database_of_another_schema_is_refused_in_one_line(tmp_path):
    db = str(tmp_path / "old.duckdb")
    con = duckdb.connect(db)
    con.execute(
        "CREATE TABLE rdbscan_meta (name VARCHAR PRIMARY KEY, value VARCHAR); "
        f"INSERT INTO rdbscan_meta VALUES ('schema_version', '{SCHEMA_VERSION - 1}'); "
        "CREATE TABLE keys (dump_id INTEGER, key VARCHAR, key_bytes BLOB); "
        "CREATE TABLE dumps (dump_id INTEGER)"
    )
    con.close()
    dump = str(FIXTURES / "redis-7.0.15" / "small" / "dump.rdb")
    want = (
        f"{db}: written by an rdbscan with database schema {SCHEMA_VERSION - 1}, this one uses "
        f"schema {SCHEMA_VERSION}: "
        f"load the dumps into a new database file"
    )
    p = run_cli("load", "-q", dump, "-o", db)
    assert (p.returncode, p.stderr) == (7, f"rdbscan: error: {want}\n")
    p = run_cli("report", db)
    assert (p.returncode, p.stderr) == (7, f"rdbscan: error: {want}\n")
    con = duckdb.connect(db, read_only=True)  # left as it was
    assert con.execute("SELECT count(*) FROM keys").fetchone() == (0,)


@pytest.mark.parametrize("output", ["duckdb", "parquet"])
def test_a_dump_loaded_leaves_nothing_for_the_garbage_collector(tmp_path, monkeypatch, output):
    """load_one lets go of its batch when it ends, without waiting for Python's cycle collector:
    the compiled batch once referred back to its RowBuilder, and while that cycle waited for a
    full collection (which a loading process seldom runs) its ~10 MB of C arrays stayed: a
    `--jobs` worker of `load --parquet` grew from 261 MB after 2 dumps to 417 MB after 50.  The
    batch now holds the memory model's costs only (rows.MemoryCosts)."""
    import gc
    import weakref

    from rdbscan.db import load as loader
    from rdbscan.db.parquet import ParquetStore
    from rdbscan.db.store import Store

    made: list = []

    class Watched(loader.RowBuilder):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(weakref.ref(self))

    monkeypatch.setattr(loader, "RowBuilder", Watched)
    gc.collect()
    gc.disable()
    try:
        if output == "duckdb":
            store = Store(str(tmp_path / "x.duckdb"))
        else:
            store = ParquetStore(str(tmp_path / "ds"))
            store.plan(1, None, 1)
        try:
            result = loader.load_one(store, str(V70 / "lfu" / "dump.rdb"), dump_id=1)
        finally:
            store.close()
        assert result.complete and result.keys == len(_manifest(V70 / "lfu")["keys"])
        assert len(made) == 1
        assert made[0]() is None  # freed when load_one returned, not by a collection
    finally:
        gc.enable()


def test_a_quoted_pattern_is_expanded_in_name_order(tmp_path):
    """`rdbscan load 'dumps/*.rdb'` (quoted, or from a program without a shell): rdbscan
    expands it, sorted by name; a pattern that matches nothing is an input error (exit 6)."""
    import shutil

    (tmp_path / "in").mkdir()
    shutil.copy(V70 / "lfu" / "dump.rdb", tmp_path / "in" / "b.rdb")
    shutil.copy(V70 / "lru" / "dump.rdb", tmp_path / "in" / "a.rdb")
    db = str(tmp_path / "x.duckdb")
    ok = run_cli("load", "-q", "-j", "1", str(tmp_path / "in" / "*.rdb"), "-o", db)
    assert ok.exit_code == 0, ok.output
    con = duckdb.connect(db, read_only=True)
    paths = [p for (p,) in con.execute("SELECT path FROM dumps ORDER BY dump_id").fetchall()]
    con.close()
    assert paths == [str(tmp_path / "in" / "a.rdb"), str(tmp_path / "in" / "b.rdb")]
    pattern = str(tmp_path / "in" / "*.rdb.gz")
    none = run_cli("load", "-q", pattern, "-o", db)
    assert (none.exit_code, none.output) == (6, f"rdbscan: error: {pattern}: no file matches\n")


def test_a_load_that_commits_nothing_leaves_no_new_database(tmp_path):
    """A failed load into a new file used to leave an empty database of 0.8-43 MB (issue 27)."""
    db = tmp_path / "new.duckdb"
    [r] = load([str(tmp_path / "missing.rdb")], str(db))
    assert r.error_kind == "io" and not db.exists() and not (tmp_path / "new.duckdb.wal").exists()
    bad = tmp_path / "bad.rdb"
    bad.write_bytes(b"not a dump at all")
    [r] = load([str(bad)], str(db))
    assert r.error_kind == "not-rdb" and not db.exists()
    # A database that existed before keeps what it holds, even when this load adds nothing.
    load([str(SAMPLE)], str(db))
    load([str(bad)], str(db))
    assert duckdb.connect(str(db), read_only=True).execute(
        "SELECT count(*) FROM dumps"
    ).fetchone() == (1,)


def test_the_summary_line_groups_thousands():
    """`rdbscan load`'s line per dump writes counts as the report's line does: 1,000,210 keys."""
    from rdbscan.db.load import DumpResult, summarize

    r = DumpResult(1, "mixed.rdb", True, 1_000_210, checksum="ok", parse_seconds=1.9)
    assert summarize(r) == "mixed.rdb: 1,000,210 keys, checksum ok, 1.90 s (526,426 keys/s)"
