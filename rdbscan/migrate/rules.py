"""Will a dump load on another server: what the target's loader does with the dump's header,
each RDB type, module type, opcode and aux field it holds (loads, converts, skips, refuses),
read from the servers' own loaders (rdb.c rdbLoadRioWithLoadingCtx, rdbLoadObject; Valkey's
rdbIsVersionAccepted; Redis 8.6 keymeta.c).  docs/migrate.md cites file and function per rule;
`source` on each Finding says the same.

A refusal stops the whole load on the server (it logs one line and loads nothing); rdbscan
lists every rule that would refuse, so that one pass finds them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..rdb import constants as C
from . import servers as S
from .servers import Server

LOADS, CONVERTS, SKIPS, REFUSES = "loads", "converts", "skips", "refuses"

# The newest type id each Redis RDB version reads (rdb.h rdbIsObjectType), types 0-7 and 9-N.
REDIS_MAX_TYPE = {6: 13, 7: 14, 8: 14, 9: 15, 10: 19, 11: 21, 12: 25, 13: 26, 14: 28, 15: 32}
# Module types built into a server line (Redis 8.0+: vector sets, modules/vector-sets).
BUILTIN_MODULES = {"vectorset": ("redis", (8, 0))}
# Aux fields the loaders act on (rdb.c rdbLoadRioWithLoadingCtx, RDB_OPCODE_AUX); any other is
# logged at debug level and ignored.
AUX_USED = {
    "repl-stream-db",
    "repl-id",
    "repl-offset",
    "redis-ver",
    "ctime",
    "used-mem",
    "aof-preamble",
    "aof-base",
    "redis-bits",
}
RDB_C = "src/rdb.c"


@dataclass
class Finding:
    """One rule as it applies to this dump on one target."""

    target: str
    kind: str  # header | type | module | opcode | aux
    subject: str  # what in the dump: "REDIS0012", "type 24 hash-hashtable-md", ...
    action: str  # loads | converts | skips | refuses
    what: str  # what the server does, in its own words where it logs them
    source: str  # the server's source: file and function
    fix: str | None = None  # for a refusal: what to do
    # the keys it concerns: None for none (a dump-level record), "" for every key, else a
    # predicate on the view `keys`
    where: str | None = None
    keys: int = 0
    examples: list[str] = field(default_factory=list)
    families: list[tuple[str, int]] = field(default_factory=list)

    @property
    def blocker(self) -> bool:
        return self.action == REFUSES

    def as_dict(self) -> dict:
        return {
            "target": self.target,
            "kind": self.kind,
            "subject": self.subject,
            "action": self.action,
            "blocker": self.blocker,
            "what": self.what,
            "fix": self.fix,
            "source": self.source,
            "keys": self.keys,
            "examples": self.examples,
            "families": [{"family": f, "keys": n} for f, n in self.families],
        }


@dataclass
class DumpFacts:
    """What the rules read of a dump: its header and dump-level records (DumpInfo) and a census
    of its keys by RDB type and module type."""

    magic: str  # "REDIS" or "VALKEY"
    rdb_version: int
    server: str | None
    server_version: str | None
    aux: dict[str, str]
    functions: int
    module_aux: list[str]
    slot_info_opcode: bool  # Redis 7.4+ opcode 244 records
    key_meta: int  # Redis 8.6+ opcode 243 records
    templates: int  # Redis 8.10 opcode 242 hash templates
    replication_commands: int  # Valkey 9.2 opcode 242 (UPDATE) records
    types: dict[int, int]  # {rdb_type: keys}
    modules: dict[str, int]  # {module type name: keys}
    keys: int = 0
    expires: int = 0
    lru: int = 0  # keys with an IDLE opcode
    lfu: int = 0  # keys with a FREQ opcode


def _version_text(server: Server) -> str:
    return f"{server.family} {server.version[0]}.{server.version[1]}"


def _redis_version_for(rdb_version: int) -> str | None:
    """The first Redis line that reads an RDB version."""
    for v, r in S.REDIS_RDB.items():
        if r >= rdb_version:
            return f"redis-{v[0]}.{v[1]}"
    return None


def _valkey_version_for(magic: str, rdb_version: int) -> str | None:
    for v, r in S.VALKEY_RDB.items():
        if (r >= S.FOREIGN_VERSION_MIN) == (magic == "VALKEY") and r >= rdb_version:
            return f"valkey-{v[0]}.{v[1]}"
    return None


def header(facts: DumpFacts, server: Server, relaxed: bool = False) -> tuple[Finding, bool]:
    """The header rule, and whether the rest is read as Valkey's relaxed check reads it (the
    fix of a strict refusal is `rdb-version-check relaxed`).  `relaxed`: the target runs with
    rdb-version-check relaxed already (Valkey 8.1+)."""
    head, lifted = _header(facts, server)
    if relaxed and lifted and server.version_check:
        head.action = LOADS
        head.what = (
            f"accepted under rdb-version-check relaxed (strict would say: {head.what}); the "
            "loader refuses what it cannot read as it meets it"
        )
        head.fix = None
        head.where = None
    return head, lifted


def _header(facts: DumpFacts, server: Server) -> tuple[Finding, bool]:
    """What the target's loader does with the dump's magic and RDB version, and whether
    rdb-version-check relaxed would let it read on.  Three loaders decide differently: Redis
    (and Valkey before its version check), Valkey 8.1, Valkey 9.0+."""
    label = (
        f"{facts.magic}{facts.rdb_version:04d}"
        if facts.magic == "REDIS"
        else (f"VALKEY{facts.rdb_version:03d}")
    )
    if server.family == "redis" or not server.version_check:
        return _header_unchecked(facts, server, label)
    # Valkey 8.1+: rdb-version-check strict (default) or relaxed.
    if server.version < (9, 0):
        return _header_valkey_8(facts, server, label)
    return _header_valkey_9(facts, server, label)


def _header_unchecked(facts: DumpFacts, server: Server, label: str) -> tuple[Finding, bool]:
    """Redis, and Valkey without rdb-version-check: the REDIS magic only, and an RDB version
    up to the server's own."""
    t = server.name
    v = facts.rdb_version
    src_sig = f"{RDB_C} rdbLoadRioWithLoadingCtx"
    if facts.magic != "REDIS":
        return Finding(
            t,
            "header",
            label,
            REFUSES,
            "Wrong signature trying to load DB from file (reads only the REDIS magic)",
            src_sig,
            "no RDB route: Valkey 9's format is VALKEY, and its DUMP payloads carry RDB "
            "version 80, which RESTORE refuses alike; copy the keys with commands (a "
            "SCAN-based copier), or stay on Valkey",
            where="",
        ), False
    if v > server.rdb_version:
        newer = (
            _redis_version_for(v) if server.family == "redis" else _valkey_version_for("REDIS", v)
        )
        return Finding(
            t,
            "header",
            label,
            REFUSES,
            f"Can't handle RDB format version {v} (reads 1 to {server.rdb_version})",
            src_sig,
            f"load it on a server that reads RDB {v}"
            + (f" ({newer} or newer)" if newer else "")
            + "; RESTORE checks the same version (verifyDumpPayload), so an older "
            "server takes the keys only as commands (a SCAN-based copier)",
            where="",
        ), False
    return Finding(
        t, "header", label, LOADS, f"RDB {v} is at most {server.rdb_version}", src_sig
    ), False


def _header_valkey_8(facts: DumpFacts, server: Server, label: str) -> tuple[Finding, bool]:
    """Valkey 8.1: every REDIS-magic version from the fork on is refused, a newer version
    too unless rdb-version-check is relaxed."""
    t = server.name
    v = facts.rdb_version
    src = f"{RDB_C} rdbLoadRioWithLoadingCtx (rdb-version-check, config.c)"
    if facts.magic == "REDIS" and v >= S.FOREIGN_VERSION_MIN:
        return Finding(
            t,
            "header",
            label,
            REFUSES,
            f"Can't handle RDB format version {v}: Valkey 8.1 refuses every REDIS-magic "
            f"version from {S.FOREIGN_VERSION_MIN} (Redis's formats after the fork), "
            "whatever rdb-version-check says",
            src,
            "Valkey 9.0+ with rdb-version-check relaxed loads such a file when it holds no "
            "type or opcode 22-243; else copy the keys with commands",
            where="",
        ), False
    if v > server.rdb_version:
        return Finding(
            t,
            "header",
            label,
            REFUSES,
            f"Can't handle RDB format version {v} (rdb-version-check strict, the default)",
            src,
            "CONFIG SET rdb-version-check relaxed (or set it in valkey.conf) before the "
            "load: the loader then reads on and refuses only what it does not know",
            where="",
        ), True
    return Finding(
        t, "header", label, LOADS, f"RDB {v} is at most {server.rdb_version}", src
    ), False


def _header_valkey_9(facts: DumpFacts, server: Server, label: str) -> tuple[Finding, bool]:
    """Valkey 9.0+ (rdbIsVersionAccepted): a foreign (Redis after the fork) or newer version
    loads only with rdb-version-check relaxed."""
    t = server.name
    v = facts.rdb_version
    src = f"{RDB_C} rdbIsVersionAccepted"
    if facts.magic == "VALKEY" and v <= S.FOREIGN_VERSION_MAX:
        return Finding(
            t, "header", label, REFUSES, f"Can't handle RDB format version {v}", src, None, where=""
        ), False
    if facts.magic == "REDIS" and v > S.FOREIGN_VERSION_MAX:
        return Finding(
            t, "header", label, REFUSES, f"Can't handle RDB format version {v}", src, None, where=""
        ), False
    foreign = facts.magic == "REDIS" and S.FOREIGN_VERSION_MIN <= v <= S.FOREIGN_VERSION_MAX
    if foreign or v > server.rdb_version:
        why = (
            f"RDB {v} under the REDIS magic is a foreign (Redis, after the fork) version"
            if foreign
            else f"RDB {v} is newer than {server.rdb_version}"
        )
        return Finding(
            t,
            "header",
            label,
            REFUSES,
            f"Can't handle RDB format version {v}: {why}; rdb-version-check strict (the "
            "default) refuses it",
            src,
            "CONFIG SET rdb-version-check relaxed (or in valkey.conf) before the load: the "
            "loader then reads on, and refuses only the types and opcodes it cannot read"
            + (
                " (any of 22-243 in a REDIS-magic file, rdbLoadRioWithLoadingCtx)"
                if foreign
                else ""
            ),
            where="",
        ), True
    return Finding(t, "header", label, LOADS, f"RDB {v} is accepted", src), False


def _type_known(server: Server, facts: DumpFacts, t: int) -> bool:
    if t == 8 or t < 0:
        return False
    if server.family == "redis":
        if facts.magic == "VALKEY" and t >= S.FOREIGN_TYPE_MIN:
            return False  # Valkey's own ids from 22 mean other types in Redis
        return t <= 7 or t <= REDIS_MAX_TYPE[server.rdb_version]
    if t <= 21:
        return True
    if server.version < (9, 0) or facts.magic != "VALKEY":
        return False
    return t == 22 or (t == 23 and server.version >= (9, 2))


def _type_name(facts: DumpFacts, t: int) -> str:
    if facts.magic == "VALKEY" and t == 22:
        return "hash-2 (hash with field TTLs)"
    if facts.magic == "VALKEY" and t == 23:
        return "path-hash"
    return C.RDB_TYPE_LABELS.get(t, "unknown")


# What to do about keys of a type a target cannot read.
TYPE_FIXES = {
    "hfe": "remove the field TTLs before the dump (HPERSIST key FIELDS n field ...) or rewrite "
    "those hashes without them; or copy those keys with commands (Valkey 9.0+ has field TTLs: "
    "HSETEX, HEXPIRE)",
    "stream": "this stream layout is newer than the target's: copy those streams with "
    "commands (XRANGE then XADD, XGROUP CREATE / SETID), or dump from a server that writes an "
    "older stream type",
    "valkey-hash": "hashes with field TTLs in Valkey 9's layout: Redis and Valkey 8 cannot read "
    "them; HPERSIST the fields before the dump, or copy the hashes with commands",
    "new": "a type of a newer server: copy those keys with commands, or load on a server that "
    "reads it",
}


def _type_fix(facts: DumpFacts, t: int) -> str:
    if facts.magic == "REDIS" and t in (22, 23, 24, 25):
        return TYPE_FIXES["hfe"]
    if facts.magic == "VALKEY" and t == 22:
        return TYPE_FIXES["valkey-hash"]
    if t in (26, 27):
        return TYPE_FIXES["stream"]
    return TYPE_FIXES["new"]


def type_rules(
    facts: DumpFacts, server: Server, foreign_check: bool, conversions: dict | None = None
) -> list[Finding]:
    """`conversions`: {rdb_type: [(encoding today, encoding there, keys)]} of the keys whose
    encoding the target changes on load (the projection's, rdbLoadObject's choices)."""
    out = []
    src_type = f"{RDB_C} rdbLoadObjectType (rdb.h rdbIsObjectType)"
    for t, n in sorted(facts.types.items()):
        if t in (C.RDB_TYPE_MODULE_PRE_GA, C.RDB_TYPE_MODULE_2):
            continue  # by module type (module_rules)
        subject = f"type {t} {_type_name(facts, t)}"
        where = f"rdb_type = {t}"
        if foreign_check and S.FOREIGN_TYPE_MIN <= t <= S.FOREIGN_TYPE_MAX:
            out.append(
                Finding(
                    server.name,
                    "type",
                    subject,
                    REFUSES,
                    f"Can't handle foreign type or opcode {t} in RDB with version "
                    f"{facts.rdb_version}",
                    f"{RDB_C} rdbLoadRioWithLoadingCtx (RDB_FOREIGN_TYPE_MIN/MAX, rdb.h)",
                    _type_fix(facts, t),
                    where=where,
                    keys=n,
                )
            )
        elif not _type_known(server, facts, t):
            out.append(
                Finding(
                    server.name,
                    "type",
                    subject,
                    REFUSES,
                    f"Unknown RDB encoding type {t} (rdbLoadObject; the loader then logs: "
                    "Short read or OOM loading DB. Unrecoverable error, aborting now.): "
                    f"{_version_text(server)} reads types 0-7 and "
                    f"9-{REDIS_MAX_TYPE[server.rdb_version] if server.family == 'redis' else (21 if server.version < (9, 0) else (23 if server.version >= (9, 2) else 22))}",
                    src_type,
                    _type_fix(facts, t),
                    where=where,
                    keys=n,
                )
            )
        else:
            conv = ", ".join(f"{k:,} from {a} to {b}" for a, b, k in (conversions or {}).get(t, []))
            out.append(
                Finding(
                    server.name,
                    "type",
                    subject,
                    CONVERTS if conv else LOADS,
                    f"re-encodes {conv}" if conv else "read as written",
                    f"{RDB_C} rdbLoadObject",
                    where=where,
                    keys=n,
                )
            )
    return out


def module_rules(facts: DumpFacts, server: Server, modules: set[str]) -> list[Finding]:
    out = []
    for name, n in sorted(facts.modules.items()):
        built = BUILTIN_MODULES.get(name)
        here = name in modules or (
            built is not None and built[0] == server.family and server.version >= built[1]
        )
        quoted = name.replace("'", "''")
        out.append(
            Finding(
                server.name,
                "module",
                f"module type {name}",
                LOADS if here else REFUSES,
                "read by the module's rdb_load"
                if here
                else f"The RDB file contains module data I can't load: no matching module "
                f"type '{name}'",
                f"{RDB_C} rdbLoadObject (RDB_TYPE_MODULE_2)",
                None
                if here
                else f"load the module that defines '{name}' on the target (loadmodule), or "
                "delete or move those keys before the dump",
                where=f"rdb_type IN (6, 7) AND type = '{quoted}'",
                keys=n,
            )
        )
    for name in sorted(set(facts.module_aux)):
        here = name in modules
        out.append(
            Finding(
                server.name,
                "opcode",
                f"opcode 247 module aux {name}",
                LOADS if here else REFUSES,
                "read by the module's aux_load"
                if here
                else f"The RDB file contains AUX module data I can't load: no matching module "
                f"'{name}' (the server exits)",
                f"{RDB_C} rdbLoadRioWithLoadingCtx (RDB_OPCODE_MODULE_AUX)",
                None if here else f"load the module '{name}' on the target (loadmodule)",
            )
        )
    return out


def opcode_rules(facts: DumpFacts, server: Server, foreign_check: bool) -> list[Finding]:
    """What the target's loader does with each opcode the dump holds.  foreign_check: the
    loader refuses the foreign range (Valkey 9 reading a REDIS-magic file), whatever it would
    otherwise do with the opcode."""
    sig = f"{RDB_C} rdbLoadRioWithLoadingCtx"
    out = []
    for code, name, action, what, fix in (
        _function_and_slot_opcodes(facts, server)
        + _newer_opcodes(facts, server)
        + _key_opcodes(facts)
    ):
        if foreign_check and S.FOREIGN_TYPE_MIN <= code <= S.FOREIGN_TYPE_MAX:
            action = REFUSES
            what = f"Can't handle foreign type or opcode {code} in RDB with version {facts.rdb_version}"
            fix = fix or f"remove what writes opcode {code} ({name}) before the dump"
        out.append(Finding(server.name, "opcode", f"opcode {code} {name}", action, what, sig, fix))
    return out


# An opcode's rule: (code, name, action, what the loader does, the fix or None).
_Opcode = tuple[int, str, str, str, "str | None"]


def _function_and_slot_opcodes(facts: DumpFacts, server: Server) -> list[_Opcode]:
    """Functions (Redis 7.0+) and cluster slot info (Redis 7.4+, skipped by Valkey 9)."""
    out: list[_Opcode] = []
    if facts.functions:
        if server.family == "redis" and server.version < (7, 0):
            out.append(
                (
                    245,
                    "FUNCTION2",
                    REFUSES,
                    "functions need Redis 7.0+",
                    "re-create the functions as scripts",
                )
            )
        else:
            what = f"{facts.functions} function libraries loaded (rdbFunctionLoad)"
            out.append((245, "FUNCTION2", LOADS, what, None))
    if facts.slot_info_opcode:
        if server.family == "valkey" and server.version >= (9, 0):
            what = "foreign slot info, safe to ignore (rdb.h RDB_OPCODE_SLOT_INFO)"
            out.append((244, "SLOT_INFO", SKIPS, what, None))
        elif server.family == "redis" and server.version >= (7, 4):
            out.append((244, "SLOT_INFO", LOADS, "sizes the slots' dicts (cluster mode)", None))
        else:
            out.append(
                (
                    244,
                    "SLOT_INFO",
                    REFUSES,
                    "Unknown RDB type 244",
                    "dump from a standalone server, or copy with commands",
                )
            )
    return out


def _newer_opcodes(facts: DumpFacts, server: Server) -> list[_Opcode]:
    """The opcodes of the newest servers: key metadata (Redis 8.6+), hash templates (Redis
    8.10+), replicated commands (Valkey 9.2+); older servers refuse them."""
    out: list[_Opcode] = []
    if facts.key_meta:
        if server.family == "redis" and server.version >= (8, 6):
            what = (
                f"{facts.key_meta} key metadata records: read by their module's class, skipped "
                "when the class is absent and allows it, else refused (keymeta.c "
                "rdbLoadKeyMetadata)"
            )
            out.append((243, "KEY_META", LOADS, what, None))
        else:
            what = f"Unknown RDB type 243 ({facts.key_meta} key metadata records)"
            fix = "load on Redis 8.6+ with the modules that wrote the key metadata"
            out.append((243, "KEY_META", REFUSES, what, fix))
    if facts.templates:
        if server.family == "redis" and server.version >= (8, 10):
            out.append((242, "HASH_TEMPLATE", LOADS, f"{facts.templates} hash templates", None))
        else:
            what = f"Unknown RDB type 242 ({facts.templates} hash templates)"
            fix = "load on Redis 8.10+, or copy the hashes with commands"
            out.append((242, "HASH_TEMPLATE", REFUSES, what, fix))
    if facts.replication_commands:
        if server.family == "valkey" and server.version >= (9, 2):
            what = f"{facts.replication_commands} replicated commands"
            out.append((242, "UPDATE", LOADS, what, None))
        else:
            what = f"Unknown RDB type 242 ({facts.replication_commands} replicated commands)"
            out.append((242, "UPDATE", REFUSES, what, "load on Valkey 9.2+"))
    return out


def _key_opcodes(facts: DumpFacts) -> list[_Opcode]:
    """Expiry, LRU and LFU: every server loads them."""
    out: list[_Opcode] = []
    if facts.expires:
        what = f"{facts.expires} keys' expiry; keys already expired are not loaded on a primary"
        out.append((252, "EXPIRETIME_MS", LOADS, what, None))
    if facts.lru:
        what = "LRU idle times, used when maxmemory-policy is an LRU one"
        out.append((248, "IDLE", LOADS, what, None))
    if facts.lfu:
        what = "LFU counters, used when maxmemory-policy is an LFU one"
        out.append((249, "FREQ", LOADS, what, None))
    return out


def aux_rules(facts: DumpFacts, server: Server) -> list[Finding]:
    out = []
    src = f"{RDB_C} rdbLoadRioWithLoadingCtx (RDB_OPCODE_AUX)"
    used = set(AUX_USED)
    if server.family == "valkey":
        used.add("valkey-ver")
        if server.version >= (8, 0):
            used.add("slot-info")
    if server.family == "redis" or server.version < (8, 0):
        pass
    for name in sorted(facts.aux):
        if name == "lua":
            scripts = server.family == "redis" and server.version < (7, 0)
            out.append(
                Finding(
                    server.name,
                    "aux",
                    "aux lua",
                    LOADS if scripts else SKIPS,
                    "scripts loaded into the script cache"
                    if scripts
                    else "scripts not loaded back (7.0+): EVALSHA answers NOSCRIPT until SCRIPT "
                    "LOAD runs again",
                    src,
                )
            )
        elif name in used:
            out.append(Finding(server.name, "aux", f"aux {name}", LOADS, "read", src))
        else:
            out.append(
                Finding(
                    server.name,
                    "aux",
                    f"aux {name}",
                    SKIPS,
                    "Unrecognized RDB AUX field (logged at debug level, ignored)",
                    src,
                )
            )
    return out


def evaluate(
    facts: DumpFacts,
    server: Server,
    modules: set[str] | None = None,
    conversions: dict | None = None,
    relaxed: bool = False,
) -> list[Finding]:
    """Every rule of `server` that this dump meets, header first; `relaxed`: the Valkey 8.1+
    targets run with rdb-version-check relaxed."""
    head, relaxed = header(facts, server, relaxed)
    foreign_check = (
        server.family == "valkey"
        and server.version >= (9, 0)
        and facts.magic == "REDIS"
        and (relaxed or facts.rdb_version <= S.FOREIGN_VERSION_MAX)
    )
    out = [head]
    out += type_rules(facts, server, foreign_check, conversions)
    out += module_rules(facts, server, modules or set())
    out += opcode_rules(facts, server, foreign_check)
    out += aux_rules(facts, server)
    return out


def loads(findings: list[Finding]) -> bool:
    return not any(f.blocker for f in findings)
