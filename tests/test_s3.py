"""Dumps and datasets in S3 (docs/fleet.md): tested against moto's S3 server on a local port, a
real S3 API spoken over HTTP by s3fs and botocore, not a fake of rdbscan's calls."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from common import run_cli
from killed_writer import killed_load

import rdbscan
from rdbscan.db.load import ProgressHook
from rdbscan.db.parquet import Dataset

pytestmark = pytest.mark.network  # moto's S3 server and an HTTP server on local ports

s3fs = pytest.importorskip("s3fs")  # the [s3] extra, part of [test]
moto_server = pytest.importorskip("moto.server")

ROOT = Path(__file__).parent.parent
SAMPLES = sorted((ROOT / "sample_dumps").glob("*.rdb"))
DROP = {"parse_seconds", "bytes_per_second", "keys_per_second", "generated_at", "report_seconds"}
DROP_PATH = DROP | {"path"}  # the report names each dump by its path: an s3:// URL here
ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@pytest.fixture(scope="module")
def s3():
    """moto's S3 server (ThreadedMotoServer) on a free local port; s3fs reaches it through
    AWS_ENDPOINT_URL_S3, as it would reach MinIO or any S3-compatible store."""
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {**ENV, "AWS_ENDPOINT_URL_S3": f"http://{host}:{port}"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    s3fs.S3FileSystem.clear_instance_cache()
    fs = s3fs.S3FileSystem()
    fs.mkdir("dumps")
    fs.put(str(SAMPLES[2]), "dumps/redis-7.4.1.rdb")
    packed = gzip.compress(SAMPLES[3].read_bytes(), mtime=0)
    fs.pipe("dumps/valkey-8.0.1.rdb.gz", packed)
    try:
        yield fs, packed
    finally:
        s3fs.S3FileSystem.clear_instance_cache()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        server.stop()


def _strip(value, drop=DROP_PATH):
    if isinstance(value, dict):
        return {k: _strip(v, drop) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [_strip(v, drop) for v in value]
    return value


def _json_report(*args) -> dict:
    result = run_cli("report", *args, "-q", "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.slow
def test_report_on_a_dump_in_s3(s3, tmp_path):
    remote = _json_report("s3://dumps/valkey-8.0.1.rdb.gz")
    (tmp_path / "valkey-8.0.1.rdb.gz").write_bytes(s3[1])  # the same object, on a local disk
    local = _json_report(str(tmp_path / "valkey-8.0.1.rdb.gz"))
    assert remote["overview"]["dumps"][0]["path"] == "s3://dumps/valkey-8.0.1.rdb.gz"
    assert remote["overview"]["dumps"][0]["compression"] == "gzip"
    assert remote["overview"]["keys"] == 562
    assert _strip(remote) == _strip(local)


@pytest.mark.slow
def test_dataset_in_s3_equals_the_local_database(s3, tmp_path):
    fs, _ = s3
    urls = ["s3://dumps/redis-7.4.1.rdb", "s3://dumps/valkey-8.0.1.rdb.gz"]
    load = run_cli("load", *urls, "-q", "--parquet", "s3://fleet/nightly/")
    assert load.exit_code == 0, load.output
    names = fs.find("fleet/nightly")
    assert "fleet/nightly/_rdbscan_dataset.json" in names
    assert (
        "fleet/nightly/keys/instance=__HIVE_DEFAULT_PARTITION__/snapshot=1/dump_id=2/"
        "part-00000.parquet" in names
    )
    assert not [n for n in names if "/_staging/" in n]  # written in place, nothing staged
    assert "fleet/nightly/_rdbscan.lock" not in names  # the writer's lock, released
    db = str(tmp_path / "local.duckdb")
    packed = tmp_path / "valkey-8.0.1.rdb.gz"
    packed.write_bytes(s3[1])  # the same objects, on a local disk
    assert run_cli("load", str(SAMPLES[2]), str(packed), "-q", "-j", "1", "-o", db).exit_code == 0
    from_s3 = _json_report("s3://fleet/nightly")
    assert from_s3["overview"]["keys"] == 584 + 562
    # which of several keys of equal memory a family names is documented as any (test_parquet.py)
    ties = DROP_PATH | {"largest_key", "largest_key_without_ttl", "example"}
    assert _strip(from_s3, ties) == _strip(_json_report(db), ties)
    # a second load of the same dumps is refused, and nothing in the bucket changes
    again = run_cli("load", urls[0], "-q", "--parquet", "s3://fleet/nightly")
    assert again.exit_code == 2 and "already loaded in s3://fleet/nightly" in again.output
    assert fs.find("fleet/nightly") == names


def test_progress_counts_the_objects_bytes(s3):
    class Seen(ProgressHook):
        def __init__(self):
            self.size, self.last = None, 0

        def start(self, name, size):
            self.size = size

        def update(self, bytes_read, keys):
            self.last = bytes_read

    seen = Seen()
    results = rdbscan.load_dataset(
        ["s3://dumps/redis-7.4.1.rdb"], "s3://fleet/progress", progress=seen
    )
    assert results[0].keys == 584 and results[0].error is None
    assert seen.size == SAMPLES[2].stat().st_size == seen.last


def test_missing_object_is_an_input_error(s3):
    result = run_cli("report", "s3://dumps/nope.rdb", "-q")
    assert result.exit_code == 6
    assert "s3://dumps/nope.rdb: No such file or directory" in result.output


@pytest.mark.slow
def test_report_on_a_dump_over_http(s3):
    """An http(s):// dump goes through fsspec's http file system (aiohttp, the [http] extra),
    in ranged GET requests: moto serves a public-read object at its plain HTTP address, as any
    web server or a bucket's public URL would."""
    fs, _ = s3
    fs.put(str(SAMPLES[2]), "dumps/public.rdb")
    fs.chmod("dumps/public.rdb", "public-read")
    url = f"{os.environ['AWS_ENDPOINT_URL_S3']}/dumps/public.rdb"
    remote = _json_report(url)
    assert remote["overview"]["dumps"][0]["path"] == url
    assert remote["overview"]["keys"] == 584
    assert _strip(remote) == _strip(_json_report(str(SAMPLES[2])))


@pytest.mark.slow
def test_a_refused_http_request_is_not_a_missing_file(s3):
    """fsspec's http file system turns a 403 into FileNotFoundError: the line says what the
    server answered (the object exists, it is private), not "No such file"."""
    base = os.environ["AWS_ENDPOINT_URL_S3"]
    private, missing = f"{base}/dumps/redis-7.4.1.rdb", f"{base}/dumps/nope.rdb"
    result = run_cli("report", private, "-q")
    assert (result.exit_code, result.output) == (
        6,
        f"rdbscan: error: {private}: the server answered HTTP 403 FORBIDDEN\n",
    )
    result = run_cli("report", missing, "-q")
    assert (result.exit_code, result.output) == (
        6,
        f"rdbscan: error: {missing}: No such file or directory\n",
    )


@pytest.mark.slow
def test_a_quoted_pattern_loads_the_objects_it_matches(s3, tmp_path):
    """`rdbscan load 's3://bucket/prefix/shard-*.rdb'`: the shell cannot expand it; rdbscan lists
    the bucket (the pattern of docs/fleet.md), in the order of the names."""
    fs, _ = s3
    fs.put(str(SAMPLES[1]), "dumps/glob/shard-b.rdb")
    fs.put(str(SAMPLES[0]), "dumps/glob/shard-a.rdb")
    fs.pipe("dumps/glob/notes.txt", b"not a dump")
    db = str(tmp_path / "x.duckdb")
    load = run_cli("load", "-q", "s3://dumps/glob/shard-*.rdb", "-o", db)
    assert load.exit_code == 0, load.output
    import duckdb

    con = duckdb.connect(db, read_only=True)
    rows = con.execute("SELECT dump_id, path FROM dumps ORDER BY 1").fetchall()
    con.close()
    assert rows == [(1, "s3://dumps/glob/shard-a.rdb"), (2, "s3://dumps/glob/shard-b.rdb")]
    none = run_cli("report", "-q", "s3://dumps/glob/*.rdb.gz")
    assert (none.exit_code, none.output) == (
        6,
        "rdbscan: error: s3://dumps/glob/*.rdb.gz: no file matches\n",
    )


@pytest.mark.slow
@pytest.mark.subprocess
def test_without_the_s3_extra_one_line_and_exit_2(tmp_path):
    """s3fs not importable: the URL's line names the extra to install; no traceback."""
    code = (
        "import sys; sys.modules['s3fs'] = None\n"
        "from rdbscan.cli.main import run\n"
        "sys.argv = ['rdbscan'] + sys.argv[1:]\n"
        "run()\n"
    )
    for args in (
        ["report", "s3://bucket/dump.rdb.gz"],
        ["load", str(SAMPLES[0]), "--parquet", "s3://bucket/prefix/"],
    ):
        proc = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=tmp_path
        )
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "pip install 'rdbscan[s3]'" in lines[0], proc.stderr


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_killed_writer_in_s3_leaves_no_visible_dump(s3, tmp_path):
    """Objects are written straight to their final keys, the `dumps` object last (the commit
    mark): a writer killed before it leaves objects readers ignore, and its lock object; the
    report equals the local database's; the next load takes the stale lock over (same host,
    process gone), removes the objects and loads the dump."""
    fs, packed = s3
    urls = ["s3://dumps/redis-7.4.1.rdb", "s3://dumps/valkey-8.0.1.rdb.gz"]
    assert run_cli("load", urls[0], "-q", "--parquet", "s3://fleet/crash").exit_code == 0
    killed_load("Dataset.publish", urls[1], "--parquet", "s3://fleet/crash", cwd=tmp_path)
    names = fs.find("fleet/crash")
    assert "fleet/crash/_rdbscan.lock" in names  # killed: never released
    part = "instance=__HIVE_DEFAULT_PARTITION__/snapshot=2/dump_id=2/part-00000.parquet"
    assert f"fleet/crash/keys/{part}" in names  # at its final key, never copied there
    assert f"fleet/crash/dumps/{part}" not in names
    assert not [n for n in names if "_staging" in n]
    db = str(tmp_path / "local.duckdb")
    assert run_cli("load", str(SAMPLES[2]), "-q", "-o", db).exit_code == 0
    from_s3 = _json_report("s3://fleet/crash")
    assert from_s3["overview"]["keys"] == 584  # not 584 + the killed dump's 562
    assert _strip(from_s3) == _strip(_json_report(db))
    again = run_cli("load", urls[1], "-q", "--parquet", "s3://fleet/crash")
    assert again.exit_code == 0, again.output
    names = fs.find("fleet/crash")
    assert not [n for n in names if "/dump_id=2/" in n] and "fleet/crash/_rdbscan.lock" not in names
    (tmp_path / "valkey-8.0.1.rdb.gz").write_bytes(packed)
    assert run_cli("load", str(tmp_path / "valkey-8.0.1.rdb.gz"), "-q", "-o", db).exit_code == 0
    ties = DROP_PATH | {"largest_key", "largest_key_without_ttl", "example", "dump_id"}
    both, local = _json_report("s3://fleet/crash"), _json_report(db)
    assert both["overview"]["keys"] == 584 + 562
    # the second dump is dump 3 in the dataset (2 was the killed load's), dump 2 locally
    assert [f["dumps"] for f in both["findings"]] == [
        [{2: 3}.get(d, d) for d in f["dumps"]] for f in local["findings"]
    ]
    assert _strip(both, ties | {"dumps"}) == _strip(local, ties | {"dumps"})


@pytest.mark.slow
def test_a_second_writer_in_s3_is_refused(s3):
    """The lock object, created only if absent (If-None-Match: *): a second writer is refused
    in one line naming the holder (exit 7), and the bucket is left as it was."""
    fs, _ = s3
    url = "s3://fleet/locked"
    assert run_cli("load", "s3://dumps/redis-7.4.1.rdb", "-q", "--parquet", url).exit_code == 0
    before = {n: fs.cat_file(n) for n in fs.find("fleet/locked")}
    writer = Dataset(url, create=True)  # holds the lock, as a running load does
    try:
        assert "fleet/locked/_rdbscan.lock" in fs.find("fleet/locked")
        second = run_cli("load", "s3://dumps/valkey-8.0.1.rdb.gz", "--parquet", url)
        assert second.exit_code == 7, second.output
        lines = second.output.strip().splitlines()
        assert len(lines) == 1 and "another process holds it" in lines[0]
        assert (
            f"pid {os.getpid()} on " in lines[0]
            and "remove s3://fleet/locked/_rdbscan.lock" in (lines[0])
        )
    finally:
        writer.close()
    assert {n: fs.cat_file(n) for n in fs.find("fleet/locked")} == before
    # a lock another host holds is never taken over, however old
    fs.pipe_file(
        "fleet/locked/_rdbscan.lock",
        json.dumps({"host": "elsewhere", "pid": 1, "started": "2026-01-01T00:00:00Z"}).encode(),
    )
    other = run_cli("load", "s3://dumps/valkey-8.0.1.rdb.gz", "--parquet", url)
    assert other.exit_code == 7 and "pid 1 on elsewhere" in other.output
    fs.rm_file("fleet/locked/_rdbscan.lock")
    assert run_cli("load", "s3://dumps/valkey-8.0.1.rdb.gz", "-q", "--parquet", url).exit_code == 0
