"""`rdbscan migrate`: the targets' load rules on real dumps (blockers and the keys they stop),
the projection of every key onto other servers, the command line, and (opt-in, with
RDBSCAN_CORPUS) each corpus server's seed1 dump projected onto every other corpus server
against that server's own MEMORY USAGE and OBJECT ENCODING."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from common import run_cli

from rdbscan.cli.main import main
from rdbscan.migrate.projection import encoding_code, project
from rdbscan.migrate.run import migrate
from rdbscan.migrate.servers import parse_server
from rdbscan.rdb.parser import DumpInfo, parse

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_dumps"
FIXTURES = Path(__file__).parent / "fixtures"
HFE = str(SAMPLE / "redis-7.4.1.rdb")
VALKEY9 = str(FIXTURES / "valkey-9.1.2" / "small" / "dump.rdb")
GRAPH = str(FIXTURES / "live" / "redis-8.2-falkordb" / "dump.rdb")


def records(path: str) -> list:
    info = DumpInfo()
    with open(path, "rb") as f:
        return list(parse(f, info))


def keys_where(path: str, pred) -> set[str]:
    """The key names of a dump whose record satisfies pred, read by the parser alone."""
    return {r.key.decode("utf-8", "backslashreplace") for r in records(path) if pred(r)}


def target(report: dict, name: str, dump: int = 0) -> dict:
    return next(t for t in report["dumps"][dump]["targets"] if t["target"] == name)


def blockers(t: dict) -> dict[str, dict]:
    return {f["subject"]: f for f in t["findings"] if f["blocker"]}


# -- blockers on real dumps -------------------------------------------------------------------


def test_field_ttls_onto_valkey_8():
    m = migrate([HFE], ["valkey-8.0", "valkey-8.1"])
    every = records(HFE)
    hfe24 = keys_where(HFE, lambda r: r.rdb_type == 24)
    hfe25 = keys_where(HFE, lambda r: r.rdb_type == 25)
    assert hfe24 == {"hfe:biglong", "hfe:hashtable"}
    assert hfe25 == {"hfe:allfields", "hfe:listpack", "hfe:persisted", "hfe:withkeyttl"}
    for name in ("valkey-8.0", "valkey-8.1"):
        t = target(m.report, name)
        b = blockers(t)
        assert set(b) == {"REDIS0012", "type 24 hash-hashtable-md", "type 25 hash-listpack-md"}
        assert not t["loads"] and t["blockers"] == 3
        assert b["REDIS0012"]["keys"] == len(every) == 584
        assert b["REDIS0012"]["what"].startswith("Can't handle RDB format version 12")
        assert set(b["type 24 hash-hashtable-md"]["examples"]) == hfe24
        assert b["type 24 hash-hashtable-md"]["keys"] == 2
        assert set(b["type 25 hash-listpack-md"]["examples"]) == hfe25
        assert "HPERSIST" in b["type 25 hash-listpack-md"]["fix"]
    # Valkey 8.1 refuses REDIS-magic 12+ whatever rdb-version-check says (rdb.c)
    relaxed = migrate([HFE], ["valkey-8.1"], relaxed=True)
    assert set(blockers(target(relaxed.report, "valkey-8.1"))) == {
        "REDIS0012",
        "type 24 hash-hashtable-md",
        "type 25 hash-listpack-md",
    }


def test_field_ttls_onto_valkey_9_relaxed_leaves_the_foreign_types():
    strict = migrate([HFE], ["valkey-9.1"])
    assert (
        "rdb-version-check relaxed"
        in blockers(target(strict.report, "valkey-9.1"))["REDIS0012"]["fix"]
    )
    relaxed = migrate([HFE], ["valkey-9.1"], relaxed=True)
    b = blockers(target(relaxed.report, "valkey-9.1"))
    assert set(b) == {"type 24 hash-hashtable-md", "type 25 hash-listpack-md"}
    assert b["type 25 hash-listpack-md"]["what"] == (
        "Can't handle foreign type or opcode 25 in RDB with version 12"
    )
    assert relaxed.report["rdb_version_check"] == "relaxed"


def test_valkey_9_dump_onto_redis():
    m = migrate([VALKEY9], ["redis-8.6", "redis-7.2", "valkey-9.1"])
    hash2 = keys_where(VALKEY9, lambda r: r.rdb_type == 22)
    assert hash2 == {
        "hfe:allfields",
        "hfe:biglong",
        "hfe:hashtable",
        "hfe:listpack",
        "hfe:withkeyttl",
    }
    n = len(records(VALKEY9))
    for name in ("redis-8.6", "redis-7.2"):
        b = blockers(target(m.report, name))
        assert set(b) == {"VALKEY080", "type 22 hash-2 (hash with field TTLs)"}
        assert b["VALKEY080"]["what"].startswith("Wrong signature")
        assert b["VALKEY080"]["keys"] == n
        assert set(b["type 22 hash-2 (hash with field TTLs)"]["examples"]) == hash2
    t = target(m.report, "valkey-9.1")
    assert t["loads"] and t["blockers"] == 0


def test_module_keys_onto_a_server_without_the_module():
    graphs = keys_where(GRAPH, lambda r: r.type == "module" and r.encoding == "graphdata")
    assert graphs == {"graph:chain", "graph:small"}
    m = migrate([GRAPH], ["redis-8.6", "valkey-9.1"])
    b = blockers(target(m.report, "redis-8.6"))
    assert set(b) == {"module type graphdata", "opcode 247 module aux graphdata"}
    assert set(b["module type graphdata"]["examples"]) == graphs
    assert b["module type graphdata"]["keys"] == 2
    assert "no matching module type 'graphdata'" in b["module type graphdata"]["what"]
    vs = next(f for f in target(m.report, "redis-8.6")["findings"] if "vectorset" in f["subject"])
    assert vs["action"] == "loads"  # built into Redis 8
    b = blockers(target(m.report, "valkey-9.1"))
    assert b["module type vectorset"]["examples"] == ["vs:beside-graph"]
    assert "module type graphdata" in b
    loaded = migrate([GRAPH], ["redis-8.6"], modules=["graphdata"])
    assert target(loaded.report, "redis-8.6")["loads"]


def test_newer_rdb_version_onto_an_older_server():
    m = migrate([HFE], ["redis-7.2", "redis-7.4", "redis-6.2"])
    b = blockers(target(m.report, "redis-7.2"))
    assert b["REDIS0012"]["what"] == "Can't handle RDB format version 12 (reads 1 to 11)"
    assert b["REDIS0012"]["keys"] == 584
    assert "redis-7.4 or newer" in b["REDIS0012"]["fix"]
    assert "REDIS0012" in blockers(target(m.report, "redis-6.2"))
    assert target(m.report, "redis-7.4")["loads"]


# -- the projection ---------------------------------------------------------------------------


@pytest.mark.parametrize("dump", ["redis-6.2.16.rdb", "redis-7.4.1.rdb", "valkey-8.0.1.rdb"])
def test_projections_are_the_records_projected(tmp_path, dump):
    """Every key's row in key_projections (the loader: compiled batches by shape, the Python
    path record by record) is projection.project of its parsed record."""
    path = str(SAMPLE / dump)
    targets = ["valkey-9.1/16p", "redis-8.6", "redis-7.0/16", "valkey-8.1"]
    db = str(tmp_path / "m.duckdb")
    m = migrate([path], targets, db)
    con = duckdb.connect(db)
    got = {
        (t, off): (enc, mem)
        for t, off, enc, mem in con.execute(
            "SELECT target, file_offset, encoding, memory_bytes FROM key_projections"
        ).fetchall()
    }
    con.close()
    recs = records(path)
    servers = [parse_server(t) for t in targets]
    assert len(got) == len(recs) * len(servers)
    for s in servers:
        want = {(s.name, r.offset): project(r, s) for r in recs}
        assert {k: v for k, v in got.items() if k[0] == s.name} == want
        total = sum(v[1] for v in want.values())
        assert (
            next(x for x in m.report["summary"] if x["target"] == s.name)["memory_bytes"] == total
        )


def _every_server() -> list:
    """Every line `--to` knows, with the allocators of the distribution packages too."""
    from rdbscan.migrate.servers import REDIS_RDB, VALKEY_RDB

    specs = [f"redis-{a}.{b}" for a, b in REDIS_RDB if (a, b) != (3, 0)]
    specs += [f"valkey-{a}.{b}" for a, b in VALKEY_RDB]
    specs += ["redis-7.0/16", "redis-8.6/16p", "valkey-8.1/16", "valkey-9.1/16p"]
    return [parse_server(s) for s in specs]


def test_compiled_rows_are_projected_as_their_shapes():
    """Projector.add_compiled (a key part per key length and TTL plus a value part per value
    shape, for the collections of one blob) gives every row project() of its whole shape, on
    every server line: strings around the embedding limits, every blob encoding around the
    listpack node size, zipmaps and listpack sets (whose length and longest member matter
    before 7.2), keys long enough for an expiry slot."""
    from array import array

    from rdbscan.migrate.projection import Projector, Shape

    types = ["string", "list", "set", "zset", "hash"]
    encodings = ["raw", "embstr", "int", "listpack", "ziplist", "intset", "zipmap", "quicklist"]
    encodings.append("listpackex")
    values = {  # (type, encoding, RDB type): [(length, blob bytes, longest element)]
        ("string", "raw", 0): [(n, 0, 0) for n in (45, 100, 255, 300, 70000)],
        ("string", "embstr", 0): [(n, 0, 0) for n in (0, 1, 20, 39, 40, 44)],
        ("string", "int", 0): [(n, 0, 0) for n in (1, 5, 19)],
        ("list", "ziplist", 10): [(3, b, 5) for b in (0, 20, 8000, 8195, 8196, 9000)],
        ("list", "quicklist", 14): [(3, b, 5) for b in (20, 8195, 8196, 20000)],
        ("list", "quicklist", 18): [(3, b, 5) for b in (20, 8192, 8193, 20000)],
        ("list", "listpack", 18): [(3, b, 5) for b in (20, 8192, 8193)],
        ("set", "intset", 11): [(n, 8 + 2 * n, 3) for n in (1, 100, 512)],
        ("set", "listpack", 20): [(n, b, m) for n, b, m in ((1, 9, 1), (3, 40, 64), (3, 40, 65))]
        + [(200, 2000, 8), (60, 700, 10)],
        ("zset", "ziplist", 12): [(2, b, 7) for b in (30, 3000)],
        ("zset", "listpack", 17): [(2, b, 7) for b in (30, 3000, 16000)],
        ("hash", "zipmap", 9): [(n, b, 4) for n, b in ((1, 12), (10, 100), (10, 101))],
        ("hash", "ziplist", 13): [(4, b, 9) for b in (40, 400)],
        ("hash", "listpack", 16): [(4, b, 9) for b in (40, 400, 15000)],
        ("hash", "listpackex", 25): [(4, b, 9) for b in (60, 600)],
    }
    rows = []
    for (typ, enc, rdb_type), vals in values.items():
        for length, blob, longest in vals:
            for klen in (0, 1, 9, 31, 32, 60, 127, 128, 300):
                for ttl in (False, True):
                    rows.append((typ, enc, rdb_type, klen, length, blob, longest, ttl))
    rows.append(("hash", "listpack", 16, 5, 4, -1, 9, False))  # a row the Python path projects
    n = len(rows)
    ends = array("i", [0])
    for r in rows:
        ends.append(ends[-1] + r[3])
    bits = bytearray((n + 7) // 8)
    for i, r in enumerate(rows):
        if r[7]:
            bits[i // 8] |= 1 << (i % 8)
    cols = {
        "n": n,
        "type": array("H", [types.index(r[0]) for r in rows]).tobytes(),
        "encoding": array("H", [encodings.index(r[1]) for r in rows]).tobytes(),
        "rdb_type": bytes(r[2] for r in rows),
        "key_offsets": ends.tobytes(),
        "length": array("q", [r[4] for r in rows]).tobytes(),
        "blob_bytes": array("q", [r[5] for r in rows]).tobytes(),
        "max_elem_bytes": array("q", [r[6] for r in rows]).tobytes(),
        "expire_at_ms": (array("q", [1 if r[7] else 0 for r in rows]).tobytes(), bytes(bits)),
        "file_offset": array("q", range(1000, 1000 + n)).tobytes(),
        "db": array("i", [0] * n).tobytes(),
    }
    servers = _every_server()
    projector = Projector(7, servers)
    for _ in range(2):  # the second batch reads the shapes the first remembered
        projector.add_compiled(cols, types, encodings)
        got = projector.take()["key_projection_rows"].to_pylist()
        assert len(got) == (n - 1) * len(servers)
        got_by = {(g["target_id"], g["file_offset"]): g for g in got}
        for i, s in enumerate(servers):
            for at, (typ, enc, rdb_type, klen, length, blob, longest, ttl) in enumerate(rows[:-1]):
                shape = Shape(typ, enc, rdb_type, klen, length, blob, ttl, longest)
                want_enc, want_mem = project(shape, s)
                g = got_by[(i, 1000 + at)]
                assert (g["encoding_id"], g["memory_bytes"], g["dump_id"]) == (
                    encoding_code(want_enc),
                    want_mem,
                    7,
                ), (s.name, rows[at])


def test_encodings_on_load_from_redis_6_2():
    """Redis 7.2 turns the 6.2 dump's ziplists into listpacks, its one-node quicklists into
    listpack lists and its small sets of strings into listpacks (rdbLoadObject)."""
    m = migrate([str(SAMPLE / "redis-6.2.16.rdb")], ["redis-7.2", "redis-6.2"])
    changes = {
        (c["type"], c["from"], c["to"]): c["keys"]
        for c in target(m.report, "redis-7.2")["encoding_changes"]
    }
    recs = records(str(SAMPLE / "redis-6.2.16.rdb"))
    by = Counter((r.type, r.encoding) for r in recs)
    assert changes == {
        ("hash", "ziplist", "listpack"): by[("hash", "ziplist")] == 57 and 57,
        ("zset", "ziplist", "listpack"): by[("zset", "ziplist")] == 14 and 14,
        ("set", "hashtable", "listpack"): 28,
        ("list", "quicklist", "listpack"): 22,
    }
    assert target(m.report, "redis-6.2")["keys_changing_encoding"] == 0
    types = {f["subject"]: f for f in target(m.report, "redis-7.2")["findings"]}
    assert types["type 13 hash-ziplist"]["action"] == "converts"
    assert types["type 13 hash-ziplist"]["what"] == "re-encodes 57 from ziplist to listpack"
    assert types["type 0 string"]["action"] == "loads"


def test_ziplist_becomes_a_listpack_4_bytes_shorter():
    """A ziplist of short strings converts entry for entry (2 bytes each both ways): only the
    header differs (11 bytes against 7)."""
    rec = next(r for r in records(str(SAMPLE / "redis-6.2.16.rdb")) if r.encoding == "ziplist")
    from rdbscan.migrate.projection import on_load

    twin = on_load(rec, parse_server("redis-7.2"))
    assert (twin.encoding, twin.blob_bytes) == ("listpack", rec.blob_bytes - 4)


# -- the command line -------------------------------------------------------------------------


def run(*args):
    return CliRunner().invoke(main, ["migrate", *args])


@pytest.mark.parametrize("columns", [80, 100, 140])
def test_cli_text_fits_the_terminal(columns):
    """`migrate` as text at COLUMNS wide: no line past it; a blocker's sentence, its keys and
    its fix wrap under it (indented 4, 6 and 7), a table's last column within its room or on
    lines of its own; nothing is lost (the words are those of the unwrapped lines)."""
    args = ("migrate", "-q", HFE, "--to", "valkey-9.1", "--to", "redis-8.6")
    text = run_cli(*args, env={"COLUMNS": str(columns)}).stdout
    lines = text.splitlines()
    assert max(map(len, lines)) <= columns
    assert lines[0] == "Will it load, and what will it cost " + "─" * (columns - 36)
    wide = run_cli(*args, env={"COLUMNS": "1000"}).stdout
    assert max(map(len, wide.splitlines())) > 200  # unwrapped: the blocker's keys on one line

    def words(text: str) -> list[str]:
        return [w for w in text.split() if w.strip("─")]

    assert words(text) == words(wide)
    blocker = lines.index(next(x for x in lines if x.startswith("BLOCKER REDIS0012: ")))
    fix = next(i for i in range(blocker, len(lines)) if lines[i].startswith("    -> "))
    assert all(x.startswith("    ") for x in lines[blocker + 1 : fix + 2])
    assert lines[fix - 1].startswith("      ") and lines[fix + 1].startswith("       ")


def test_cli_json_shape_and_sql(tmp_path):
    db = str(tmp_path / "m.duckdb")
    r = run(HFE, "--to", "valkey-9.1/16p", "--to", "redis-8.6", "-f", "json", "-q", "-o", db)
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    assert rep["targets"] == ["valkey-9.1/16p", "redis-8.6"]
    assert [s["loads"] for s in rep["summary"]] == [False, True]
    d = rep["dumps"][0]
    assert (d["magic"], d["server"], d["keys"]) == ("REDIS0012", "redis", 584)
    con = duckdb.connect(db)
    sums = dict(
        con.execute("SELECT target, sum(memory_bytes) FROM key_projections GROUP BY 1").fetchall()
    )
    today = con.execute("SELECT sum(memory_bytes) FROM keys").fetchone()[0]
    con.close()
    for s in rep["summary"]:
        assert s["memory_bytes"] == sums[s["target"]]
        assert s["today_bytes"] == today == d["memory_bytes"]
        assert s["difference_bytes"] == s["memory_bytes"] - today
    t = d["targets"][1]
    assert {"findings", "by_type", "families", "encoding_changes"} <= set(t)
    assert sum(b["keys"] for b in t["by_type"]) == 584
    assert sum(b["memory_bytes"] for b in t["by_type"]) == t["memory_bytes"]
    r = CliRunner().invoke(
        main, ["sql", db, "SELECT count(*) AS n FROM key_projections", "--format", "csv"]
    )
    assert r.output.split() == ["n", str(2 * 584)]


def test_cli_text_markdown_fail_on_and_errors():
    r = run(HFE, "--to", "valkey-8.1", "-q")
    assert r.exit_code == 0
    assert "BLOCKER REDIS0012: Can't handle RDB format version 12" in r.stdout
    assert "hfe:biglong" in r.stdout
    r = run(HFE, "--to", "valkey-8.1", "-q", "--fail-on", "blockers")
    assert r.exit_code == 3
    assert "3 blockers" in r.stderr
    assert run(HFE, "--to", "redis-8.6", "-q", "--fail-on", "blockers").exit_code == 0
    r = run(HFE, "--to", "redis-8.6", "-q", "-f", "markdown")
    assert "| target | loads | blockers |" in r.stdout and "## " in r.stdout
    r = run(HFE, "--to", "valkey-10.1")
    assert r.exit_code == 2 and "unknown server 'valkey-10.1'" in r.output
    r = run("no/such.rdb", "--to", "redis-8.6", "-q")
    assert r.exit_code == 6
    assert r.stderr.strip() == "rdbscan: error: no/such.rdb: No such file or directory"


# -- a database as input, HTML, --jobs ---------------------------------------------------------

R62 = str(SAMPLE / "redis-6.2.16.rdb")
HFE_STRINGS = 309  # of the 584 keys of redis-7.4.1.rdb


def migrate_json(*args) -> dict:
    r = run_cli("migrate", *args, "-q", "-f", "json")
    assert r.exit_code == 0, r
    return json.loads(r.stdout)


def test_a_database_input_reads_the_projections_migrate_kept(tmp_path):
    db = tmp_path / "m.duckdb"
    dumped = migrate_json(HFE, "--to", "valkey-9.1/16p", "--to", "redis-8.6", "-o", db)
    again = migrate_json(db, "--to", "valkey-9.1/16p", "--to", "redis-8.6")
    assert (dumped["source"], again["source"]) == ("dumps", "database")
    assert again["summary"] == dumped["summary"]
    assert again["dumps"] == dumped["dumps"]  # blockers, findings, figures: all the same
    assert [t["not_projected_keys"] for t in again["dumps"][0]["targets"]] == [0, 0]


def test_a_database_input_projects_the_strings_from_the_rows(tmp_path):
    """A target the database holds no projections for: its strings are projected from their
    rows exactly as from the dump; the other keys are counted, not guessed."""
    db = tmp_path / "plain.duckdb"
    assert run_cli("load", "-q", HFE, "-o", db).exit_code == 0
    got = migrate_json(db, "--to", "redis-7.2", "--to", "valkey-9.1/16p")
    full = migrate_json(HFE, "--to", "redis-7.2", "--to", "valkey-9.1/16p")
    today = (
        duckdb.connect(str(db), read_only=True)
        .execute("SELECT sum(memory_bytes) FILTER (WHERE type <> 'string') FROM keys")
        .fetchone()[0]
    )
    for name in ("redis-7.2", "valkey-9.1/16p"):
        t, f = target(got, name), target(full, name)
        assert (t["keys"], t["not_projected_keys"]) == (HFE_STRINGS, 584 - HFE_STRINGS)
        assert t["not_projected_today_bytes"] == today
        assert t["by_type"] == [b for b in f["by_type"] if b["type"] == "string"]
        assert [f["subject"] for f in t["findings"] if f["blocker"]] == [
            f["subject"] for f in f["findings"] if f["blocker"]
        ]
    assert [s["not_projected_keys"] for s in got["summary"]] == [275, 275]
    r = run_cli("migrate", db, "--to", "redis-7.2", "-q")
    assert "Not projected: 275 keys (993.6 KiB today)" in r.stdout
    con = duckdb.connect(str(db), read_only=True)  # the input is read, never written
    assert con.execute("SELECT count(*) FROM key_projection_rows").fetchone()[0] == 0


def test_a_database_input_errors(tmp_path):
    db = tmp_path / "m.duckdb"
    assert run_cli("load", "-q", HFE, "-o", db).exit_code == 0
    r = run_cli("migrate", db, HFE, "--to", "redis-8.6", "-q")
    assert r.exit_code == 2
    assert (
        r.stderr == f"rdbscan: error: {db}: a database is migrated alone, not with other inputs\n"
    )
    r = run_cli("migrate", db, "--to", "redis-8.6", "-q", "--database", tmp_path / "x.duckdb")
    assert r.exit_code == 2
    assert r.stderr == (
        f"rdbscan: error: {db}: --database keeps the database of loaded dumps; a database input "
        "is read, not written\n"
    )
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).execute("CREATE TABLE t (a INTEGER)").close()
    r = run_cli("migrate", other, "--to", "redis-8.6", "-q")
    assert r.exit_code == 7
    assert (
        r.stderr == f"rdbscan: error: {other} is not an rdbscan database (no dumps, keys table)\n"
    )


def test_html_page(tmp_path):
    page = tmp_path / "m.html"
    r = run_cli("migrate", HFE, "--to", "valkey-8.1", "-q", "-f", "html", "-o", page)
    assert r.exit_code == 0 and r.stdout == ""
    text = page.read_text()
    assert (
        text.startswith("<!DOCTYPE html>") and '<meta name="generator" content="rdbscan">' in text
    )
    assert "<h1>rdbscan migrate</h1>" in text
    assert "REDIS0012: Can&#x27;t handle RDB format version 12" in text
    head, _, rest = text.partition('<script type="application/json" id="rdbscan-migrate">')
    embedded = json.loads(rest.partition("</script>")[0])
    assert embedded == migrate_json(HFE, "--to", "valkey-8.1")
    # --html beside another format; a file rdbscan did not write is left alone (exit 7)
    r = run_cli("migrate", HFE, "--to", "valkey-8.1", "-q", "--html", page)
    assert r.exit_code == 0 and "BLOCKER REDIS0012" in r.stdout
    mine = tmp_path / "notes.html"
    mine.write_text("my notes")
    r = run_cli("migrate", HFE, "--to", "valkey-8.1", "-q", "--html", mine)
    assert r.exit_code == 7
    assert r.stderr == (
        f"rdbscan: error: {mine}: exists and is not a report rdbscan wrote; not overwritten\n"
    )
    assert mine.read_text() == "my notes"


@pytest.mark.slow
def test_jobs_load_the_dumps_in_workers_with_the_same_report(tmp_path):
    db = tmp_path / "m.duckdb"
    two = migrate_json(HFE, R62, "--to", "valkey-9.1/16p", "--to", "redis-7.2", "-j", "2", "-o", db)
    one = migrate_json(HFE, R62, "--to", "valkey-9.1/16p", "--to", "redis-7.2", "-j", "1")
    assert two == one
    assert [d["keys"] for d in two["dumps"]] == [584, 561]
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute(
        "SELECT dump_id, target, count(*) FROM key_projections GROUP BY ALL ORDER BY ALL"
    ).fetchall() == [
        (1, "redis-7.2", 584),
        (1, "valkey-9.1/16p", 584),
        (2, "redis-7.2", 561),
        (2, "valkey-9.1/16p", 561),
    ]
    # the line `load -j` prints as the workers start (no progress display), not with -q
    r = run_cli("migrate", HFE, R62, "--to", "redis-8.6", "-j", "2", "-o", tmp_path / "m.json")
    assert r.exit_code == 0, r
    assert r.stderr.splitlines()[0] == "rdbscan: loading 2 dumps, 2 at a time"
    assert json.loads((tmp_path / "m.json").read_text())["summary"][0]["target"] == "redis-8.6"
    # a missing dump among them: its line and exit 6, the others reported (no part to merge)
    r = run_cli("migrate", HFE, tmp_path / "no.rdb", "--to", "redis-8.6", "-j", "2", "-q")
    assert r.exit_code == 6
    assert r.stderr == f"rdbscan: error: {tmp_path / 'no.rdb'}: No such file or directory\n"
    assert "redis-8.6  yes    0         1.1 MiB" in r.stdout


# -- the corpus (opt-in) ----------------------------------------------------------------------

CORPUS = os.environ.get("RDBSCAN_CORPUS")


def _pairs():
    if not CORPUS:
        return []
    import migrate_compare as mc

    dirs = mc.corpus_dirs(Path(CORPUS))
    out = []
    for s in dirs:
        for t, td in dirs.items():
            spec = mc.target_spec(json.loads((td / "manifest.json").read_text()))
            if s != t and spec is not None:
                out.append((s, t))
    return out


# (the projection of a parsed record: test_projections_are_the_records_projected holds the rows
# of both parser paths equal to it, so the pure-Python pass need not parse the corpus again)
@pytest.mark.parser_independent
@pytest.mark.skipif(not CORPUS, reason="RDBSCAN_CORPUS is not set")
@pytest.mark.parametrize("pair", _pairs(), ids=[f"{s}->{t}" for s, t in _pairs()])
def test_corpus_projection_matches_the_target_server(pair):
    import migrate_compare as mc

    dirs = mc.corpus_dirs(Path(CORPUS))
    specs = tuple(
        spec
        for d in dirs.values()
        if (spec := mc.target_spec(json.loads((d / "manifest.json").read_text())))
    )
    source, tgt = dirs[pair[0]], dirs[pair[1]]
    src_rdb = json.loads((source / "manifest.json").read_text())["rdb_version"]
    tgt_server = parse_server(mc.target_spec(json.loads((tgt / "manifest.json").read_text())))
    if not mc.loads(source, tgt, specs):
        # refused: the dump is newer than the target, Valkey's VALKEY format onto Redis, or
        # Redis's formats after the fork (12-79) onto Valkey under the default strict check
        assert (
            src_rdb > tgt_server.rdb_version
            or (src_rdb >= 80 and tgt_server.family == "redis")
            or (12 <= src_rdb <= 79 and tgt_server.family == "valkey")
        )
        return
    if not any(
        e.get("memory_usage") for e in json.loads((tgt / "manifest.json").read_text())["keys"]
    ):
        pytest.skip(f"{pair[1]} has no MEMORY USAGE")
    r = mc.compare(source, tgt, specs)
    assert r["keys"] >= 150
    assert r["median"] <= 0.01, r
    assert r["p95"] <= 0.05, r
    assert abs(r["total"]) <= 0.02, r
    assert r["encodings"] == []
