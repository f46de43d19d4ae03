"""A key's estimated MEMORY USAGE: the memory model of its server generation (memory.py) or, for
the servers that keep the key inside the value's object, kv.py.  One entry point, so that
memory.py need not import kv.py, which builds on it."""

from __future__ import annotations

from .kv import kv_estimate
from .memory import Profile, key_cost, value_cost


def estimate(rec, prof: Profile) -> int:
    """Estimated `MEMORY USAGE key SAMPLES 0` of one key (bytes)."""
    if prof.kv:
        return kv_estimate(rec, rec.key_length, rec.expire_ms is not None, prof)
    return key_cost(rec.key_length, prof) + int(value_cost(rec, prof))
