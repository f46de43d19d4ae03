"""Brief fuzzing in the test suite (the long run is `python bench/fuzz.py --iterations N`, the
harness tests/fuzz.py):
mutated fixtures either parse or raise an RDBError -- no other exception, no hang."""

from __future__ import annotations

import gzip
import io
import sys

import fuzz  # tests/fuzz.py: the harness of the long run (bench/fuzz.py)
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rdbscan.rdb.errors import RDBError
from rdbscan.rdb.parser import DumpInfo, parse

SEEDS = fuzz.load_seeds()


def _parse(data: bytes, known: bool, skip_bad: bool, rows: bool = False) -> None:
    """rows: as the loader parses, with key rows and Arrow batches (the compiled record loop
    when built), so that no number the parser accepts breaks a column."""
    try:
        fuzz.run_parse(data, known, skip_bad=skip_bad, rows=rows)
    except RDBError:
        pass


edits = st.lists(
    st.tuples(
        st.sampled_from(["flip", "set", "delete", "insert", "truncate", "inflate"]),
        st.integers(min_value=0, max_value=1 << 20),
        st.integers(0, 255),
    ),
    min_size=1,
    max_size=6,
)


def _apply(data: bytes, ops) -> bytes:
    b = bytearray(data)
    for op, pos, val in ops:
        if not b:
            break
        i = pos % len(b)
        if op == "flip":
            b[i] ^= 1 << (val % 8)
        elif op == "set":
            b[i] = val
        elif op == "delete":
            del b[i : i + 1 + val % 16]
        elif op == "insert":
            b[i:i] = bytes([val]) * (1 + val % 8)
        elif op == "truncate":
            del b[i:]
        else:  # a 32- or 64-bit length where a length byte may be
            b[i : i + 1] = (
                (b"\x80" + (0xFFFFFFFF - val).to_bytes(4, "big"))
                if val & 1
                else (b"\x81" + ((1 << 63) + val).to_bytes(8, "big"))
            )
    return bytes(b)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    seed=st.integers(0, len(SEEDS) - 1),
    ops=edits,
    known=st.booleans(),
    skip_bad=st.booleans(),
    rows=st.booleans(),
)
def test_mutated_fixtures_parse_or_raise_rdberror(seed, ops, known, skip_bad, rows):
    _parse(_apply(SEEDS[seed], ops), known, skip_bad, rows)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.binary(max_size=2000), known=st.booleans())
def test_random_bytes_after_a_header(data, known):
    _parse(b"REDIS0011" + data, known, False)
    _parse(b"VALKEY080" + data, known, True)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, len(SEEDS) - 1), ops=edits, how=st.integers(0, 4))
def test_mutated_inputs_through_open_source(seed, ops, how):
    data = _apply(SEEDS[seed], ops)
    try:
        fuzz.run_source(data, how)
    except RDBError:
        pass


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    seed=st.integers(0, len(SEEDS) - 1), cut=st.integers(0, 1 << 16), flip=st.integers(0, 1 << 16)
)
def test_damaged_gzip_streams(seed, cut, flip):
    from rdbscan.rdb import source as S

    comp = bytearray(gzip.compress(SEEDS[seed]))
    comp[flip % len(comp)] ^= 0x10
    comp = bytes(comp[: max(2, cut % (len(comp) + 1))])
    old = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(comp))
    try:
        src = S.open_source("-")
        for _ in parse(src.stream, DumpInfo(), size=src.size, initial=src.initial):
            pass
    except RDBError:
        pass
    finally:
        sys.stdin = old


@pytest.mark.slow
def test_harness_short_run_finds_nothing():
    ok, errors, n, crashes = fuzz.worker((0, 3000, 11, "", 5.0, 0))
    assert n == 3000 and ok + errors == n
    assert crashes == []


@pytest.mark.parametrize("mode", range(14))
def test_harness_modes_run(mode):
    try:
        fuzz.one(SEEDS[0], mode)
    except RDBError:
        assert mode >= 12  # damaged compressed data or a mangled header
