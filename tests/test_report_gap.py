"""The overview shows the estimate next to the dump's used-mem and the gap between them."""

from __future__ import annotations

import json

import duckdb
from common import FIXTURES, run_cli

from rdbscan.db.load import load


def test_overview_gap_to_used_mem(tmp_path):
    d = FIXTURES / "redis-7.2.6" / "small"
    m = json.loads((d / "manifest.json").read_text())
    db = str(tmp_path / "g.duckdb")
    load([str(d / "dump.rdb")], db)
    con = duckdb.connect(db, read_only=True)
    used = int(con.execute("SELECT map_extract(aux, 'used-mem')[1] FROM dumps").fetchone()[0])
    total = con.execute("SELECT sum(memory_total_bytes) FROM keys").fetchone()[0]
    con.close()
    out = run_cli("report", db, "--format", "json", "--section", "overview")
    assert out.exit_code == 0, out.output
    o = json.loads(out.output)["overview"]
    assert (o["used_mem"], o["memory_total_bytes"], o["used_mem_gap"]) == (
        used,
        total,
        used - total,
    )
    # What the keys do not explain is mostly the server's startup memory, which the manifest
    # recorded: the gap is at least that and well under twice the dataset.
    startup = m["info_memory"]["used_memory_startup"]
    assert startup <= o["used_mem_gap"] < startup + total
