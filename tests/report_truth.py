"""Ground truth for the report tests, computed from the fixtures' manifest.json in plain Python.

Nothing here calls rdbscan: every expected value is derived independently from what the server
reported (TYPE, STRLEN/LLEN/..., PEXPIRETIME, CLUSTER KEYSLOT, OBJECT FREQ/IDLETIME) and from the
rules as documented in the README, so the tests compare the SQL against a second implementation.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from pathlib import Path

from common import FIXTURES
from family_reference import fast_family


@dataclass
class MKey:
    db: int
    raw: bytes
    type: str
    encoding: str
    length: int
    expire_at_ms: int | None
    memory_usage: int | None
    slot: int | None
    value: object
    lfu_freq: int | None
    lru_idle_s: int | None

    @property
    def text(self) -> str:
        return self.raw.decode("utf-8", "backslashreplace")

    @property
    def valid_utf8(self) -> bool:
        try:
            self.raw.decode("utf-8")
            return True
        except UnicodeDecodeError:
            return False


@dataclass
class Manifest:
    path: Path
    data: dict
    keys: list[MKey]

    @property
    def dump(self) -> Path:
        return self.path.parent / self.data["rdb_file"]


def manifest(rel: str) -> Manifest:
    path = FIXTURES / rel / "manifest.json"
    data = json.loads(path.read_text())
    keys = []
    for k in data["keys"]:
        raw = base64.b64decode(k["key_b64"]) if "key_b64" in k else k["key"].encode()
        keys.append(
            MKey(
                k["db"],
                raw,
                k["type"],
                k["encoding"],
                k["length"],
                k.get("expire_at_ms"),
                k.get("memory_usage"),
                k.get("slot"),
                k.get("value"),
                k.get("lfu_freq"),
                k.get("lru_idle_s"),
            )
        )
    return Manifest(path, data, keys)


# --- big keys (README "Big keys": strict >, lengths as STRLEN / element count) ---------------

COLLECTIONS = ("list", "set", "zset", "hash", "stream")


def big_key_rules(
    k: MKey, string_bytes=10240, string_critical=1048576, coll_len=5000, coll_critical=100_000
) -> set[str]:
    out = set()
    if k.type == "string":
        # a dense HyperLogLog (12,304 bytes by design) is no big key
        if k.length > string_bytes and k.length != 12304:
            out.add("big-string")
        if k.length > string_critical:
            out.add("big-string-critical")
    elif k.type in COLLECTIONS:
        if k.length > coll_len:
            out.add("big-collection")
        if k.length > coll_critical:
            out.add("big-collection-critical")
    return out


# --- cluster hashtag (format §9) -----------------------------------------------------------


def hashtag(raw: bytes) -> bytes | None:
    s = raw.find(b"{")
    if s < 0:
        return None
    e = raw.find(b"}", s + 1)
    if e < 0 or e == s + 1:
        return None
    return raw[s + 1 : e]


# --- naming rules (README "Naming rules") --------------------------------------------------

ALLOWED = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789|_.:")
SPECIAL = set(b"\\*?[]()'\"") | set(b" \t\n\f\r")
GENERIC = {"data", "temp", "tmp", "config", "test", "default", "foo", "bar"}
MIXED = b":./|#"


def naming_violations(
    keys: list[MKey], max_length=128, recommended=30, generic=GENERIC
) -> dict[str, set]:
    """rule id -> set of (db, raw key) breaking it."""
    out: dict[str, set] = {
        r: set()
        for r in (
            "disallowed-chars",
            "special-chars",
            "not-letter-start",
            "uppercase",
            "max-length",
            "recommended-length",
            "no-delimiter",
            "hashtag",
            "invalid-utf8",
            "control-chars",
            "generic-name",
            "mixed-delimiters",
        )
    }
    roots: dict[bytes, dict[str, int]] = {}
    info = []
    for k in keys:
        raw = k.raw
        ident = (k.db, raw)
        if any(b not in ALLOWED for b in raw):
            out["disallowed-chars"].add(ident)
        if any(b in SPECIAL for b in raw) or (
            any(b in b"{}" for b in raw) and hashtag(raw) is None
        ):
            out["special-chars"].add(ident)
        if not raw[:1].isalpha():  # bytes.isalpha: ASCII letters only
            out["not-letter-start"].add(ident)
        if any(65 <= b <= 90 for b in raw):
            out["uppercase"].add(ident)
        if len(raw) > max_length:
            out["max-length"].add(ident)
        if len(raw) > recommended:
            out["recommended-length"].add(ident)
        if b":" not in raw:
            out["no-delimiter"].add(ident)
        if hashtag(raw) is not None:
            out["hashtag"].add(ident)
        if not k.valid_utf8:
            out["invalid-utf8"].add(ident)
        if any(b < 0x20 or b == 0x7F for b in raw):
            out["control-chars"].add(ident)
        first = raw.split(b":", 1)[0].decode("utf-8", "replace").lower()
        if re.sub(r"[-_.]?[0-9]+$", "", first) in generic:
            out["generic-name"].add(ident)
        root = re.split(rb"[:./|#]", raw, maxsplit=1)[0]
        # the candidates the key's family holds: none inside an id-like value (`10.1.2.3` is
        # {ip}, `3.5` {id}); a key the reference gives no family (not printable ASCII): its bytes
        fam = fast_family(raw)
        named = fam.encode() if fam is not None else raw
        dset = "".join(sorted({chr(b) for b in named if b in MIXED}))
        info.append((ident, root, dset))
        if dset and root:
            roots.setdefault(root, {}).setdefault(dset, 0)
            roots[root][dset] += 1
    for ident, root, dset in info:
        fams = roots.get(root, {})
        # the most used delimiter set; ties: the longest, then the last in byte order
        main = max(fams.items(), key=lambda kv: (kv[1], len(kv[0]), kv[0]))[0] if fams else None
        if len(dset) > 1 or (len(fams) > 1 and dset and dset != main):
            out["mixed-delimiters"].add(ident)
    return out
