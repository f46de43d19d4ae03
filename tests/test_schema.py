"""`rdbscan schema` (inference, output) and `report --schema` (checks), against the fixtures'
manifests and dumps built for the purpose."""
from __future__ import annotations

import collections
import json
import re

import pytest
import rdbwriter as W
import tomllib
from click.testing import CliRunner
from report_truth import manifest

from rdbscan import report as rpt
from rdbscan import schema as sch
from rdbscan.cli import main
from rdbscan.load import load

SMALL = ["redis-2.8.24", "redis-3.2.13", "redis-4.0.14", "redis-5.0.14", "redis-6.0.20", "redis-6.2.16",
         "redis-7.0.15", "redis-7.2.6", "redis-7.4.1", "redis-8.0-m01", "valkey-7.2.7", "valkey-8.0.1",
         "valkey-unstable-20241025"]

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


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    cache = {}

    def get(rel: str) -> str:
        if rel not in cache:
            db = tmp_path_factory.mktemp("schema") / "s.duckdb"
            res = load([str(manifest(rel).dump)], str(db))
            assert res[0].complete, res[0].error
            cache[rel] = str(db)
        return cache[rel]
    return get


def infer(db: str, **kw) -> dict:
    con = rpt.open_database(db)
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
        if not members:          # streams (event:*) from 5.0 on
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
    keys = ([f"evt:{1700000000 + i}" for i in range(3)] + [f"evtms:{1700000000000 + i}" for i in range(3)]
            + [f"obj:{i:08x}-aaaa-bbbb-cccc-{i:012x}" for i in range(3)]
            + ["day:2024-01-05", "day:2024-02-06"] + [f"sess:{i:016x}a" for i in range(3)]
            + ["u:1", "u:22", "mix:1", "mix:2.5", "{user:42}:cart", "{user:7}:cart"])
    dump = _dump(tmp_path, [(k, None) for k in keys])
    db = str(tmp_path / "t.duckdb")
    load([str(dump)], db)
    pats = {f["pattern"]: f["observed"]["keys"] for f in infer(db)["families"]}
    assert pats == {"evt:{ts}": 3, "evtms:{ts}": 3, "obj:{uuid}": 3, "day:{date}": 2, "sess:{hex}": 3,
                    "u:{id}": 2, "mix:{*}": 2, "{user:{id}}:cart": 2}


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
    out = CliRunner().invoke(main, ["schema", loaded("redis-7.4.1/small"), "-f", "markdown", "--min-keys", "40"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    start = lines.index("| pattern | type | description | TTL | keys | memory | example |")
    assert lines[start + 1] == "|---|---|---|---|--:|--:|---|"
    rows = [line for line in lines[start + 2:] if line.startswith("| ")]
    assert [r.split(" | ")[0] for r in rows] == ["| `cache:page:{id}`", "| `user:{id}:profile`",
                                                 "| `session:{hex}`", "| `user:{id}:friends`",
                                                 "| `counter:{id}`"]
    session = next(r for r in rows if "session" in r)
    assert session.startswith("| `session:{hex}` | string |  | required; median ")
    assert " | 66 | " in session and session.endswith("| `session:0b8f330579bad9a51ca4383db27a595f` |")


def test_toml_and_json_round_trip(loaded, tmp_path):
    db = loaded("redis-7.4.1/small")
    out = tmp_path / "keyschema.toml"
    r = CliRunner().invoke(main, ["schema", db, "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    data = tomllib.loads(out.read_text())
    parsed = sch.parse_schema(data, str(out))
    js = json.loads(CliRunner().invoke(main, ["schema", db, "-f", "json"]).output)
    assert [r.pattern for r in parsed.rules] == [f["pattern"] for f in js["families"]]
    assert len(parsed.rules) == 183
    assert js["families"][0]["observed"]["memory_bytes"] == data["family"][0]["observed"]["memory_bytes"]


def test_never_overwrites_a_users_file_and_keeps_what_the_team_wrote(loaded, tmp_path):
    db = loaded("redis-7.4.1/small")
    mine = tmp_path / "mine.toml"
    mine.write_text("# my notes\n")
    r = CliRunner().invoke(main, ["schema", db, "-o", str(mine)])
    assert r.exit_code == 1
    assert "exists and is not a schema rdbscan wrote" in r.output
    assert mine.read_text() == "# my notes\n"
    out = tmp_path / "ks.toml"
    assert CliRunner().invoke(main, ["schema", db, "-o", str(out), "-q"]).exit_code == 0
    text = out.read_text().replace('pattern = "session:{hex}"\ntype = "string"\ndescription = ""',
                                   'pattern = "session:{hex}"\ntype = "string"\ndescription = "web sessions"'
                                   '\nmax_ttl = "1d"', 1)
    text += '\n[[family]]\npattern = "gone:{id}"\ntype = "hash"\ndescription = "retired"\n'
    out.write_text(text)
    assert CliRunner().invoke(main, ["schema", db, "-o", str(out), "-q"]).exit_code == 0
    fams = {f["pattern"]: f for f in tomllib.loads(out.read_text())["family"]}
    assert fams["session:{hex}"]["description"] == "web sessions"
    assert fams["session:{hex}"]["max_ttl"] == "1d"
    assert fams["gone:{id}"] == {"pattern": "gone:{id}", "type": "hash", "description": "retired"}
    assert len(fams) == 184
