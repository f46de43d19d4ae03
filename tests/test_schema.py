"""`rdbscan schema` (inference, output) and `report --schema` (checks), against the fixtures'
manifests and dumps built for the purpose."""

from __future__ import annotations

import collections
import json
import re

import pytest
import rdbwriter as W
import tomllib
from common import run_cli
from report_truth import manifest

from rdbscan.db.load import load
from rdbscan.errors import EXIT_DATABASE, EXIT_USAGE
from rdbscan.reports import report as rpt
from rdbscan.reports import schema as sch
from rdbscan.reports.engine.database import open_database

SMALL = [
    "redis-2.8.24",
    "redis-3.2.13",
    "redis-4.0.14",
    "redis-5.0.14",
    "redis-6.0.20",
    "redis-6.2.16",
    "redis-7.0.15",
    "redis-7.2.6",
    "redis-7.4.1",
    "redis-8.0-m01",
    "valkey-7.2.7",
    "valkey-8.0.1",
    "valkey-unstable-20241025",
]

# populate.py's seeded families (dumps/README.md "Prefix populations"), as `schema` types them
SEEDED = {
    "user:{id}:profile": r"user:\d+:profile",
    "user:{id}:friends": r"user:\d+:friends",
    "session:{hex}": r"session:[0-9a-f]+",
    "cache:page:{id}": r"cache:page:\d+",
    "queue:jobs:{id}": r"queue:jobs:\d+",
    "counter:{id}": r"counter:\d+",
    "tags:{id}": r"tags:\d+",
    "event:{id}": r"event:\d+",
}


def infer(db: str, **kw) -> dict:
    con = open_database(db)
    try:
        return sch.infer(con, sch.InferOptions(**kw))
    finally:
        con.close()


@pytest.mark.parametrize("version", SMALL)
def test_seeded_families_type_and_ttl_policy_match_manifest(loaded, version):
    rel = f"{version}/small"
    m = manifest(rel)
    fams = {f["pattern"]: f for f in infer(loaded(rel))["families"]}
    checked = 0
    for pattern, rx in SEEDED.items():
        members = [k for k in m.keys if k.valid_utf8 and re.fullmatch(rx, k.text)]
        if not members:  # streams (event:*) from 5.0 on
            assert pattern == "event:{id}" and version < "redis-5", pattern
            continue
        f = fams[pattern]
        obs = f["observed"]
        types = collections.Counter(k.type for k in members)
        main_type, n = types.most_common(1)[0]
        assert f["type"] == main_type, pattern
        assert obs["keys"] == len(members)
        assert obs["type_share"] == pytest.approx(n / len(members))
        with_ttl = sum(1 for k in members if k.expire_at_ms is not None)
        policy = "never" if with_ttl == 0 else "always" if with_ttl == len(members) else "mixed"
        assert obs["ttl_policy"] == policy, pattern
        assert f["ttl"] == {"never": "none", "always": "required", "mixed": "optional"}[policy]
        assert obs["ttl_share"] == pytest.approx(with_ttl / len(members))
        assert obs["length"][2] == max(k.length for k in members), pattern
        assert obs["example"] == min(k.text for k in members)
        assert {k.encoding for k in members} == set(obs["encodings"]), pattern
        checked += 1
    assert checked >= 7
    # sessions always expire, profiles never (populate.py)
    assert fams["session:{hex}"]["observed"]["ttl_policy"] == "always"
    assert fams["user:{id}:profile"]["ttl"] == "none"


def test_every_key_in_one_family(loaded):
    rel = "redis-7.4.1/small"
    s = infer(loaded(rel))
    assert sum(f["observed"]["keys"] for f in s["families"]) == len(manifest(rel).keys)
    assert len({f["pattern"] for f in s["families"]}) == len(s["families"])
    assert len(infer(loaded(rel), min_keys=5)["families"]) == 11


def _dump(tmp_path, keys: list[tuple[str, int | None]], name="t.rdb"):
    """A dump of string keys (name, expire_at_ms or None) written with tests/rdbwriter.py."""
    body = b"\xfe\x00"
    for k, exp in keys:
        if exp is not None:
            body += b"\xfc" + exp.to_bytes(8, "little")
        body += W.key(0, k, W.string("v"))
    path = tmp_path / name
    path.write_bytes(W.rdb(body, aux={"redis-ver": "7.2.4", "ctime": "1700000000"}))
    return path


def test_typed_placeholders(tmp_path):
    keys = (
        [f"evt:{1700000000 + i}" for i in range(3)]
        + [f"evtms:{1700000000000 + i}" for i in range(3)]
        + [f"obj:{i:08x}-aaaa-bbbb-cccc-{i:012x}" for i in range(3)]
        + ["day:2024-01-05", "day:2024-02-06"]
        + [f"sess:{i:016x}a" for i in range(3)]
        + ["u:1", "u:22", "mix:1", "mix:2.5", "{user:42}:cart", "{user:7}:cart"]
    )
    dump = _dump(tmp_path, [(k, None) for k in keys])
    db = str(tmp_path / "t.duckdb")
    load([str(dump)], db)
    pats = {f["pattern"]: f["observed"]["keys"] for f in infer(db)["families"]}
    assert pats == {
        "evt:{ts}": 3,
        "evtms:{ts}": 3,
        "obj:{uuid}": 3,
        "day:{date}": 2,
        "sess:{hex}": 3,
        "u:{id}": 2,
        "mix:{*}": 2,
        "{user:{id}}:cart": 2,
    }


def _string_dump(tmp_path, keys: list[tuple[str, int, int | None]], name="q.rdb"):
    """A dump of string keys (name, value length, expire_at_ms or None)."""
    body = b"\xfe\x00"
    for k, size, exp in keys:
        if exp is not None:
            body += b"\xfc" + exp.to_bytes(8, "little")
        body += W.key(0, k, W.string("v" * size))
    path = tmp_path / name
    path.write_bytes(W.rdb(body, aux={"redis-ver": "7.2.4", "ctime": "1700000000"}))
    return path


def test_percentiles_are_quantile_disc_over_each_family(tmp_path):
    """schema_families reads its percentiles from counts per value (a GROUP BY that spills, where
    quantile_disc holds every value) and gives a family of one key that key's figures: the same
    as quantile_disc over the family's keys, for families of 1 to 60 keys with repeated values,
    keys without TTL and expired ones."""
    import random

    from rdbscan.reports.engine import querylib, relations

    rng = random.Random(7)
    keys = []
    for n in range(1, 61):
        for i in range(n):
            ttl = rng.choice([None, None, -5_000, rng.randrange(1, 10**7), 3_600_000])
            exp = None if ttl is None else 1_700_000_000_000 + ttl
            keys.append((f"f{n}:{i}", rng.choice([1, 2, 3, rng.randrange(1, 200)]), exp))
    # families of one key each (no placeholder): expired, running, no TTL
    ctime = 1_700_000_000_000
    keys += [
        ("x:expired", 5, ctime - 5_000),
        ("x:running", 7, ctime + 3_600_000),
        ("x:never", 9, None),
    ]
    db = str(tmp_path / "q.duckdb")
    load([str(_string_dump(tmp_path, keys))], db)
    con = open_database(db)
    try:
        values = {"dump_id": 0, "delimiters": ":", "min_keys": 1}
        q = querylib.get_query("schema_families")
        relations.prepare(con, values, needs=relations.relations_used(q))
        got = {r["pattern"]: r for r in querylib.run_dicts(con, q, values)}
        measures = {"length": "length", "value_bytes": "max_elem_bytes", "memory": "memory_bytes"}
        reference = "SELECT pattern, " + ", ".join(
            f"quantile_disc({col}, {q}) AS {name}_p{p}"
            for name, col in measures.items()
            for q, p in ((0.5, 50), (0.99, 99))
        )
        reference += ", quantile_disc(ttl_ms, 0.5) FILTER (WHERE ttl_ms > 0) AS ttl_median_ms"
        cur = con.execute(reference + " FROM rkeys GROUP BY pattern")
        names = [d[0] for d in cur.description]
        expected = {r[0]: dict(zip(names[1:], r[1:])) for r in cur.fetchall()}
    finally:
        con.close()
    assert sorted(got) == sorted(
        [f"f{n}:{{id}}" for n in range(1, 61)] + ["x:expired", "x:running", "x:never"]
    )
    assert got["x:expired"]["keys_expired"] == 1 and got["x:expired"]["ttl_median_ms"] is None
    assert got["x:running"]["ttl_median_ms"] == 3_600_000
    for pattern, row in got.items():
        for column, value in expected[pattern].items():
            assert row[column] == value, (pattern, column)
        if pattern.startswith("x:"):
            continue
        n = int(pattern[1:].split(":")[0])
        assert row["keys"] == n
        assert row["length_max"] == max(size for k, size, _ in keys if k.startswith(f"f{n}:"))
    with_ttl = [r for r in got.values() if r["ttl_median_ms"] is not None]
    assert len(with_ttl) > 40  # the TTL median is tested, not only its NULLs


def test_pattern_language():
    rx = re.compile(sch.pattern_regex("{user:{id}}:cart:{*}", ":"))
    assert rx.fullmatch("{user:42}:cart:x y")
    assert not rx.fullmatch("{user:42}:cart:a:b")
    assert not rx.fullmatch("{user:x}:cart:a")
    assert re.fullmatch(sch.pattern_regex("a.b|{uuid}"), "a.b|0b8f3305-79ba-d9a5-1ca4-383db27a595f")
    assert not re.fullmatch(sch.pattern_regex("a.b"), "axb")
    assert re.fullmatch(sch.pattern_regex("e:{ts}"), "e:1700000000123")
    assert not re.fullmatch(sch.pattern_regex("e:{ts}"), "e:17000")


def test_markdown_table(loaded):
    out = run_cli("schema", loaded("redis-7.4.1/small"), "-f", "markdown", "--min-keys", "40")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    start = lines.index("| pattern | type | description | TTL | keys | memory | example |")
    assert lines[start + 1] == "|---|---|---|---|--:|--:|---|"
    rows = [line for line in lines[start + 2 :] if line.startswith("| ")]
    assert [r.split(" | ")[0] for r in rows] == [
        "| `cache:page:{id}`",
        "| `user:{id}:profile`",
        "| `session:{hex}`",
        "| `user:{id}:friends`",
        "| `counter:{id}`",
    ]
    session = next(r for r in rows if "session" in r)
    assert session.startswith("| `session:{hex}` | string |  | required; median ")
    assert " | 66 | " in session and session.endswith(
        "| `session:0b8f330579bad9a51ca4383db27a595f` |"
    )


@pytest.mark.slow
def test_toml_and_json_round_trip(loaded, tmp_path):
    db = loaded("redis-7.4.1/small")
    out = tmp_path / "keyschema.toml"
    r = run_cli("schema", db, "-o", str(out), "-q")
    assert r.exit_code == 0, r.output
    data = tomllib.loads(out.read_text())
    comments = [line for line in out.read_text().splitlines() if line.startswith("#")]
    assert len(comments) == 7 and max(map(len, comments)) <= 80  # read in a terminal
    parsed = sch.parse_schema(data, str(out))
    js = json.loads(run_cli("schema", db, "-f", "json").output)
    assert [r.pattern for r in parsed.rules] == [f["pattern"] for f in js["families"]]
    assert len(parsed.rules) == 183
    assert (
        js["families"][0]["observed"]["memory_bytes"]
        == data["family"][0]["observed"]["memory_bytes"]
    )


@pytest.mark.slow
def test_never_overwrites_a_users_file_and_keeps_what_the_team_wrote(loaded, tmp_path):
    db = loaded("redis-7.4.1/small")
    mine = tmp_path / "mine.toml"
    mine.write_text("# my notes\n")
    r = run_cli("schema", db, "-o", str(mine))
    assert r.exit_code == EXIT_DATABASE
    assert r.output == (
        f"rdbscan: error: {mine}: exists and is not a schema rdbscan wrote; not overwritten "
        "(choose another -o, or remove the file)\n"
    )
    assert mine.read_text() == "# my notes\n"
    out = tmp_path / "ks.toml"
    assert run_cli("schema", db, "-o", str(out), "-q").exit_code == 0
    text = out.read_text().replace(
        'pattern = "session:{hex}"\ntype = "string"\ndescription = ""',
        'pattern = "session:{hex}"\ntype = "string"\ndescription = "web sessions"\nmax_ttl = "1d"',
        1,
    )
    text += '\n[[family]]\npattern = "gone:{id}"\ntype = "hash"\ndescription = "retired"\n'
    out.write_text(text)
    assert run_cli("schema", db, "-o", str(out), "-q").exit_code == 0
    fams = {f["pattern"]: f for f in tomllib.loads(out.read_text())["family"]}
    assert fams["session:{hex}"]["description"] == "web sessions"
    assert fams["session:{hex}"]["max_ttl"] == "1d"
    assert fams["gone:{id}"] == {"pattern": "gone:{id}", "type": "hash", "description": "retired"}
    assert len(fams) == 184


# --- report --schema --------------------------------------------------------------------------

# A schema for sample_dumps/redis-7.4.1.rdb (= tests/fixtures/redis-7.4.1/small) with one
# deliberate mistake of each kind; the expected counts come from the manifest.
HAND_WRITTEN = """
[schema]
delimiters = ":"

[[family]]
pattern = "user:{id}:profile"
type = "hash"
description = "profiles"
ttl = "none"
max_memory = 300                      # mistake: the hashtable-encoded profiles use more

[[family]]
pattern = "user:{id}:friends"
type = "zset"                         # mistake: they are sets
description = "friend ids"

[[family]]
pattern = "session:{hex}"
type = "string"
ttl = "required"
max_ttl = "1d"                        # mistake: the sessions set with EXPIREAT 2100 live longer

[[family]]
pattern = "cache:page:{id}"
type = "string"
max_value_bytes = "1.5KB"             # mistake: pages up to 2 KB

[[family]]
pattern = "queue:jobs:{id}"
type = "list"
max_length = 25                       # mistake: queues up to 40 jobs

[[family]]
pattern = "counter:{id}"
type = "string"
ttl = "required"                      # mistake: counters never expire

[[family]]
pattern = "volatile:{id}"
type = "string"
ttl = "none"                          # mistake: they all expire

[[family]]
pattern = "tags:{id}"
type = "set"
max_family_memory = "1KB"             # mistake: the family uses about 2 KB

[[family]]
pattern = "order:{uuid}"
type = "hash"                         # mistake: no such keys
"""

FAMILY_RX = {
    "user:{id}:profile": r"user:\d+:profile",
    "user:{id}:friends": r"user:\d+:friends",
    "session:{hex}": r"session:[0-9a-f]+",
    "cache:page:{id}": r"cache:page:\d+",
    "queue:jobs:{id}": r"queue:jobs:\d+",
    "counter:{id}": r"counter:\d+",
    "volatile:{id}": r"volatile:\d+",
    "tags:{id}": r"tags:\d+",
}


def check_report(db: str, schema_path, **kw) -> dict:
    con = open_database(db)
    try:
        fail_on = kw.pop("fail_on", None)
        return rpt.build_report(
            con,
            rpt.ReportOptions(
                schema=sch.load_schema(str(schema_path)), top=1000, sections=("overview",), **kw
            ),
            fail_on=fail_on,
        )
    finally:
        con.close()


def test_hand_written_schema_yields_exactly_its_mistakes(loaded, tmp_path):
    rel = "redis-7.4.1/small"
    m = manifest(rel)
    snapshot_ms = m.data["save_time_ms"]
    path = tmp_path / "keyschema.toml"
    path.write_text(HAND_WRITTEN)
    s = check_report(loaded(rel), path)["schema"]

    def members(pattern):
        return [k for k in m.keys if k.valid_utf8 and re.fullmatch(FAMILY_RX[pattern], k.text)]

    documented = {k.raw for p in FAMILY_RX for k in members(p)}
    truth = {
        "undocumented": len(m.keys) - len(documented),
        "type": len(members("user:{id}:friends")),
        "ttl-required": len(members("counter:{id}")),
        "ttl-none": len(members("volatile:{id}")),
        "max-ttl": sum(
            1 for k in members("session:{hex}") if k.expire_at_ms - snapshot_ms > 86_400_000
        ),
        "max-length": sum(1 for k in members("queue:jobs:{id}") if k.length > 25),
        "max-value-bytes": sum(1 for k in members("cache:page:{id}") if k.length > 1536),
        "max-memory": sum(1 for k in members("user:{id}:profile") if k.memory_usage > 300),
        "max-family-memory": 1,
        "no-keys": 1,
    }
    got = {c["check"]: c["count"] for c in s["checks"]}
    assert got == truth
    assert all(v > 0 for v in truth.values())
    assert s["violations"] == sum(truth.values())
    assert s["keys_documented"] == len(documented) and s["keys"] == len(m.keys)
    by = collections.defaultdict(list)
    for r in s["items"]:
        by[r["check"]].append(r)
    assert [(r["pattern"], r["found"], r["keys"]) for r in by["type"]] == [
        ("user:{id}:friends", "set", 40)
    ]
    assert by["no-keys"][0]["pattern"] == "order:{uuid}" and by["no-keys"][0]["keys"] == 0
    assert by["max-family-memory"][0]["pattern"] == "tags:{id}"
    assert by["max-family-memory"][0]["measured"] > 1024
    assert by["max-length"][0]["measured"] == max(k.length for k in members("queue:jobs:{id}"))
    assert by["max-ttl"][0]["declared"] == 86_400_000
    undocumented = {r["family"]: r["keys"] for r in by["undocumented"]}
    assert undocumented["event:{id}"] == 5 and "user:{id}:profile" not in undocumented
    assert sum(undocumented.values()) == truth["undocumented"]


@pytest.mark.slow
def test_inferred_schema_checks_clean_against_its_dump(loaded, tmp_path):
    """Every key lands in its own family's pattern: nothing undocumented, no declared family
    without keys, and type breaks only for the keys of a family's minority types."""
    db = loaded("redis-7.4.1/small")
    out = tmp_path / "ks.toml"
    assert run_cli("schema", db, "-o", str(out), "-q").exit_code == 0
    inferred = tomllib.loads(out.read_text())["family"]
    s = check_report(db, out)["schema"]
    got = {c["check"]: c["count"] for c in s["checks"]}
    minority = sum(sum(f["observed"].get("other_types", {}).values()) for f in inferred)
    assert got == {**{c: 0 for c in got}, "type": minority}
    assert s["keys_documented"] == s["keys"] == 584


@pytest.mark.slow
def test_report_cli_schema_and_fail_on(loaded, tmp_path):
    db = loaded("redis-7.4.1/small")
    path = tmp_path / "keyschema.toml"
    path.write_text(HAND_WRITTEN)
    res = run_cli(
        "report",
        db,
        "--schema",
        str(path),
        "--section",
        "overview",
        "-f",
        "json",
        "--fail-on",
        "schema:no-keys",
    )
    assert res.exit_code == 3, res.output
    rep = json.loads(res.stdout)
    assert rep["fail_on"]["checks"][0] == {
        **rep["fail_on"]["checks"][0],
        "rule": "schema:no-keys",
        "value": 1,
        "failed": True,
    }
    res = run_cli(
        "report",
        db,
        "--schema",
        str(path),
        "--section",
        "overview",
        "--fail-on",
        "schema:no-keys=1,schema:type=40",
    )
    assert res.exit_code == 0, res.output
    assert "Schema" in res.stdout and "order:{uuid}" in res.stdout
    md = run_cli("report", db, "--schema", str(path), "--section", "overview", "-f", "markdown")
    assert "## Schema" in md.stdout and "| no-keys |" in md.stdout
    res = run_cli("report", db, "--fail-on", "schema")
    assert res.exit_code == EXIT_USAGE and "needs --schema" in res.output


@pytest.mark.parametrize(
    "text,error",
    [
        (
            '[[family]]\npattern = "a:{id}"\nttl = "sometimes"\n',
            "family 1 (a:{id}): ttl = 'sometimes': expected one of required, none, optional",
        ),
        (
            '[[family]]\npattern = "a:{id}"\nmax_size = 3\n',
            "family 1 (a:{id}): unknown key 'max_size'",
        ),
        (
            '[[family]]\npattern = "a"\n[[family]]\npattern = "a"\n',
            "family 2 (a): the same pattern as family 1",
        ),
        (
            '[[family]]\npattern = "a"\nmax_ttl = "soon"\n',
            "family 1 (a): max_ttl = 'soon': expected seconds",
        ),
        (
            '[[family]]\npattern = "a"\nmax_value_bytes = "4 parsecs"\n',
            "max_value_bytes = '4 parsecs': expected",
        ),
        (
            '[[family]]\npattern = "a"\nmax_length = -1\n',
            "max_length = -1: expected a non-negative integer",
        ),
        ('[[family]]\ntype = "hash"\n', "family 1: needs a pattern"),
        ('[[family]]\npattern = "a"\nttl = "none"\nmax_ttl = 60\n', 'max_ttl with ttl = "none"'),
        ("[schema]\nformat = 2\n", "format = 2: this rdbscan reads format 1"),
        ("[rules]\nx = 1\n", "unknown key 'rules' at the top level"),
        ("[[family]\n", "not valid TOML"),
    ],
)
def test_schema_file_errors_are_one_line(loaded, tmp_path, text, error):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ValueError) as e:
        sch.load_schema(str(path))
    assert error in str(e.value) and str(e.value).startswith(str(path)) and "\n" not in str(e.value)
    res = run_cli("report", loaded("redis-7.4.1/small"), "--schema", str(path))
    assert res.exit_code == EXIT_USAGE and error in res.output and "Traceback" not in res.output


def test_sizes_and_durations():
    assert (
        sch.parse_size("1.5KB") == 1536
        and sch.parse_size(10) == 10
        and sch.parse_size("2MiB") == 2 << 20
    )
    assert sch.parse_duration_ms("1d") == 86_400_000 and sch.parse_duration_ms(90) == 90_000
    assert sch.parse_duration_ms("500ms") == 500 and sch.parse_duration_ms("30m") == 1_800_000


@pytest.mark.slow
def test_schema_of_dump_files(tmp_path):
    dump = str(manifest("redis-7.4.1/small").dump)
    res = run_cli("schema", dump, "-q", "-f", "json", "--min-keys", "50")
    assert res.exit_code == 0, res.output
    assert [f["pattern"] for f in json.loads(res.stdout)["families"]] == [
        "user:{id}:profile",
        "session:{hex}",
        "counter:{id}",
    ]
    bad = tmp_path / "bad.rdb"
    bad.write_bytes(b"garbage")
    res = run_cli("schema", str(bad), "-q")
    assert (
        res.exit_code == 4
        and "not an RDB file" in res.output
        and not res.stdout.startswith("# rdbscan")
    )


def test_schema_output_that_cannot_be_written_is_refused_before_loading(tmp_path):
    """`schema -o` into a read-only directory: one line, exit 7, before any dump is read (it
    was exit 2 with a raw '[Errno 30] ... .rdbscan-schema-...' after the whole load)."""
    import os
    import subprocess
    import sys

    src, ro = tmp_path / "src", tmp_path / "ro"
    src.mkdir()
    ro.mkdir()
    mounted = (
        subprocess.run(
            ["mount", "--bind", "-o", "ro", str(src), str(ro)], capture_output=True
        ).returncode
        == 0
    )
    if not mounted:
        ro.chmod(0o555)
    try:
        if os.access(ro, os.W_OK):
            pytest.skip("no read-only directory can be made here (root without mount)")
        p = subprocess.run(
            [sys.executable, "-m", "rdbscan", "schema", "missing.rdb", "-o", str(ro / "s.toml")],
            capture_output=True,
            text=True,
        )
    finally:
        if mounted:
            subprocess.run(["umount", str(ro)])
        ro.chmod(0o755)
    assert (p.returncode, p.stderr) == (
        7,
        f"rdbscan: error: {ro / 's.toml'}: cannot be written (its directory is read-only or "
        f"not yours)\n",
    )
    p = subprocess.run(
        [sys.executable, "-m", "rdbscan", "schema", "x.rdb", "-o", str(tmp_path / "no/s.toml")],
        capture_output=True,
        text=True,
    )
    assert (p.returncode, p.stderr) == (
        7,
        f"rdbscan: error: {tmp_path / 'no/s.toml'}: its directory does not exist\n",
    )


def test_write_output_leaves_a_users_file_untouched(tmp_path):
    mine = tmp_path / "mine.toml"
    mine.write_text("# my notes\n")
    with pytest.raises(sch.SchemaOutputError) as e:
        sch.write_output(str(mine), "x = 1\n")
    assert str(e.value) == (
        f"{mine}: exists and is not a schema rdbscan wrote; not overwritten (choose another -o, "
        "or remove the file)"
    )
    assert mine.read_text() == "# my notes\n" and [p.name for p in tmp_path.iterdir()] == [
        "mine.toml"
    ]
