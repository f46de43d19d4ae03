"""The parameters a report or a diff runs its queries with: the compact-encoding thresholds of
the dump's server (docs/rdb-format.md section 7.1), a redis.conf, `--set`, the big-key thresholds."""

from __future__ import annotations

from pathlib import Path

from ...rdb import constants as C
from . import querylib

# The big-key thresholds a rules file may set (queries/big_keys.sql parameters).
BIG_KEY_PARAMS = (
    "string_bytes",
    "string_critical_bytes",
    "collection_length",
    "collection_critical_length",
    "collection_memory",
)

# The big-key thresholds are parameters of queries/big_keys.sql; its header holds their defaults,
# which follow the big-key guidance of the cloud Redis services (Alibaba Cloud, Huawei Cloud,
# BytePlus: strings over 10 KB, collections over 5,000 elements, Huawei: 50 MB per collection;
# a critical tier at 1 MB and 100,000 elements).
BIG_KEY_DEFAULTS = {
    name: querylib.get_query("big_keys").params[name].default for name in BIG_KEY_PARAMS
}


# The compact-encoding thresholds are parameters of queries/_rlimits.sql; its header holds the
# defaults of the newest servers, default_thresholds() what older servers differ in.
NEWEST_THRESHOLDS = dict(
    (name, p.default) for name, p in querylib.bundled_queries(True)["_rlimits"].params.items()
)


# parameter -> the name shown in reports (the current config name): the numeric thresholds
SETTING_NAMES = {
    name: name.replace("_", "-")
    for name, value in NEWEST_THRESHOLDS.items()
    if isinstance(value, int)
}


# config name -> query parameter: the current names, and the old ones (ziplist, zipmap) that
# servers still accept for the same setting
CONFIG_ALIASES = {config: param for param, config in SETTING_NAMES.items()} | {
    "hash-max-ziplist-entries": "hash_max_listpack_entries",
    "hash-max-zipmap-entries": "hash_max_listpack_entries",
    "hash-max-ziplist-value": "hash_max_listpack_value",
    "hash-max-zipmap-value": "hash_max_listpack_value",
    "zset-max-ziplist-entries": "zset_max_listpack_entries",
    "zset-max-ziplist-value": "zset_max_listpack_value",
    "list-max-ziplist-size": "list_max_listpack_size",
}


def server_semantics(
    server: str | None, version: str | None, rdb_version: int | None
) -> tuple[int, int]:
    """The Redis version whose encoding rules apply (Valkey 7.2+/8.x behave as Redis 7.2)."""
    v = C.server_version(version, rdb_version) or ((7, 2) if (rdb_version or 0) > 13 else (2, 6))
    if (server or "").lower() == "valkey":
        v = (7, 2) if v >= (7, 2) else v
    return v


def default_thresholds(server: str | None, version: str | None, rdb_version: int | None) -> dict:
    """Compact-encoding thresholds a server of that version uses by default (docs/rdb-format.md section 7.1)."""
    v = server_semantics(server, version, rdb_version)
    out = dict(NEWEST_THRESHOLDS)
    if v < (2, 4):  # no ziplist-encoded sorted sets yet
        out["zset_max_listpack_entries"] = 0
    if v < (7, 2):  # no listpack-encoded sets yet
        out["set_max_listpack_entries"] = 0
    out["list_compact_encoding"] = (
        "ziplist" if v < (3, 2) else ("listpack" if v >= (7, 2) else "none")
    )
    out["compact_encoding"] = "listpack" if v >= (7, 0) else "ziplist"
    return out


def hash_field_ttl_encoding(
    server: str | None, version: str | None, rdb_version: int | None
) -> str | None:
    """The compact encoding a hash with field TTLs gets on that server: `listpackex` on Redis
    7.4+ (t_hash.c, hashTypeConvertListpack -> OBJ_ENCODING_LISTPACK_EX); None elsewhere: older
    Redis has no field TTLs, and Valkey 9.x turns such a hash into a hashtable for good
    (valkey src/t_hash.c, hashTypeSetExpire)."""
    if (server or "redis").lower() == "valkey":
        return None
    return "listpackex" if server_semantics(server, version, rdb_version) >= (7, 4) else None


def dump_thresholds(
    server: str | None, version: str | None, rdb_version: int | None, overrides: dict
) -> dict:
    """The thresholds in force for one dump: its server's defaults, then `overrides` (what
    --config and --set, or `rdbscan query --param`, set for every dump)."""
    return {
        **default_thresholds(server, version, rdb_version),
        **{p: v for p, v in overrides.items() if p in NEWEST_THRESHOLDS},
        "hash_field_ttl_encoding": hash_field_ttl_encoding(server, version, rdb_version),
    }


def read_redis_conf(path: str) -> dict[str, str]:
    """`name value` lines of a redis.conf / valkey.conf (comments and quotes handled, includes not)."""
    out = {}
    for raw in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 1)
        value = parts[1].strip() if len(parts) > 1 else ""
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out[parts[0].lower()] = value
    return out


def apply_settings(thresholds: dict, settings: dict[str, str], origin: str, sources: dict) -> dict:
    """Apply `name value` settings (config file or --set) that rdbscan understands; returns the rest."""
    rest = {}
    for name, value in settings.items():
        param = CONFIG_ALIASES.get(name.lower())
        if param is None:
            rest[name] = value
            continue
        try:
            number = int(value)
        except ValueError:
            raise ValueError(f"{origin}: {name} must be an integer, not {value!r}") from None
        if not -(2**63) < number < 2**63:  # list-max-listpack-size may be negative
            raise ValueError(f"{origin}: {name} {value} is out of range")
        thresholds[param] = number
        sources[param] = origin
    return rest


def thresholds_for(
    server: str | None,
    version: str | None,
    rdb_version: int | None,
    config_path: str | None,
    settings: dict[str, str],
) -> tuple[dict, dict, dict, dict]:
    """The compact-encoding thresholds for a dump of that server: its version's defaults, then
    the config file's, then --set's; where each came from; and the settings of the config file
    and of --set that are no threshold."""
    thresholds = default_thresholds(server, version, rdb_version)
    label = f"{server or 'redis'} {version or f'(rdb {rdb_version})'} defaults"
    sources = {p: label for p in SETTING_NAMES}
    from_config = {}
    if config_path:
        from_config = apply_settings(
            thresholds, read_redis_conf(config_path), f"config {config_path}", sources
        )
    rest = apply_settings(thresholds, settings, "--set", sources)
    return thresholds, sources, from_config, rest


def set_query_params(values: dict, big: dict, settings: dict[str, str], queries) -> dict[str, str]:
    """--set NAME=VALUE for the parameters of `queries` (a `-` in NAME stands for `_`): the value
    in the type of the parameter's default, into `values` (and `big` for a big-key threshold).
    Returns the settings that name no parameter."""
    known: dict[str, object] = {}
    for q in queries:
        for p in q.params.values():
            known.setdefault(p.name, p.default)
    unknown = {}
    for name, value in settings.items():
        pname = name.replace("-", "_")
        if pname not in known:
            unknown[name] = value
            continue
        try:
            values[pname] = querylib.coerce(value, known[pname])
        except ValueError as e:
            raise ValueError(f"--set {name}: {e}") from None
        if pname in BIG_KEY_DEFAULTS:
            big[pname] = values[pname]
    return unknown
