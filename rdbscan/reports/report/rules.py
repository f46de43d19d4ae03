"""The rules file (`--rules FILE`, TOML): naming-rule settings, big-key thresholds, --fail-on defaults.

The rules themselves are evaluated in SQL (rdbscan/reports/queries/_rnaming.sql); this module only turns the file
into query parameters.  Format documented in docs/report.md ("Rules file").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.thresholds import BIG_KEY_PARAMS

try:  # Python 3.11+
    import tomllib as _toml
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    try:
        import tomli as _toml
    except ModuleNotFoundError:
        _toml = None

NAMING_RULES = (
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
    "type-name",
)
# Rules that are off unless a rules file enables them (`[rules.type-name] enabled = true`).
OPT_IN_RULES = ("type-name",)

DEFAULT_GENERIC_NAMES = ["data", "temp", "tmp", "config", "test", "default", "foo", "bar"]


@dataclass
class NamingConfig:
    allowed_chars: str = "A-Za-z0-9|_.:"
    max_length: int = 128
    recommended_length: int = 30
    generic_names: list[str] = field(default_factory=lambda: list(DEFAULT_GENERIC_NAMES))
    mixed_candidates: str = ":./|#"
    delimiters: str | None = None  # None: the report's --delimiters
    disabled: set[str] = field(default_factory=set)
    enabled: set[str] = field(default_factory=set)  # opt-in rules switched on (OPT_IN_RULES)

    def off(self) -> list[str]:
        """The rule ids switched off: `disabled`, and the opt-in rules not enabled."""
        return sorted(self.disabled | (set(OPT_IN_RULES) - self.enabled))

    def query_values(self, delimiters: str) -> dict:
        return {
            "allowed_chars": self.allowed_chars,
            "max_length": self.max_length,
            "recommended_length": self.recommended_length,
            "generic_names": [n.lower() for n in self.generic_names],
            "mixed_candidates": self.mixed_candidates,
            "disabled": self.off(),
            # _rnaming reads $delimiters: only override when the rules file sets it
            **({"delimiters": self.delimiters} if self.delimiters else {}),
        }

    def describe(self, delimiters: str) -> dict:
        return {
            "delimiters": self.delimiters or delimiters,
            "allowed_chars": self.allowed_chars,
            "max_length": self.max_length,
            "recommended_length": self.recommended_length,
            "generic_names": list(self.generic_names),
            "mixed_candidates": self.mixed_candidates,
            "disabled": self.off(),
        }


@dataclass
class RulesFile:
    naming: NamingConfig = field(default_factory=NamingConfig)
    big_keys: dict = field(default_factory=dict)
    fail_on: dict = field(default_factory=dict)
    delimiters: str | None = None


_RULE_KEYS: dict[str, dict[str, tuple[str, type]]] = {
    "disallowed-chars": {"allowed": ("allowed_chars", str)},
    "max-length": {"max_bytes": ("max_length", int)},
    "recommended-length": {"max_bytes": ("recommended_length", int)},
    "generic-name": {"names": ("generic_names", list)},
    "mixed-delimiters": {"candidates": ("mixed_candidates", str)},
}


def parse_rules(data: dict, origin: str = "rules file") -> RulesFile:
    """Validate a parsed TOML document; unknown names are errors (typos must not pass silently)."""
    out = RulesFile()
    for top in data:
        if top not in ("rules", "big-keys", "fail-on", "patterns"):
            raise ValueError(
                f"{origin}: unknown table [{top}] (expected rules, big-keys, fail-on, patterns)"
            )
    for rid, conf in (data.get("rules") or {}).items():
        if rid not in NAMING_RULES:
            raise ValueError(
                f"{origin}: unknown naming rule [rules.{rid}] (known: {', '.join(NAMING_RULES)})"
            )
        if not isinstance(conf, dict):
            raise ValueError(f"{origin}: [rules.{rid}] must be a table")
        for key, value in conf.items():
            if key == "enabled":
                if not isinstance(value, bool):
                    raise ValueError(f"{origin}: rules.{rid}.enabled must be true or false")
                if value:
                    out.naming.disabled.discard(rid)
                    out.naming.enabled.add(rid)
                else:
                    out.naming.disabled.add(rid)
                    out.naming.enabled.discard(rid)
            elif key == "delimiters" and rid == "no-delimiter":
                out.naming.delimiters = str(value)
            elif key in _RULE_KEYS.get(rid, {}):
                attr, typ = _RULE_KEYS[rid][key]
                if typ is list:
                    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                        raise ValueError(f"{origin}: rules.{rid}.{key} must be a list of strings")
                elif typ is int:
                    if not isinstance(value, int) or isinstance(value, bool):
                        raise ValueError(f"{origin}: rules.{rid}.{key} must be an integer")
                elif not isinstance(value, str):
                    raise ValueError(f"{origin}: rules.{rid}.{key} must be a string")
                elif attr == "allowed_chars":
                    _check_char_class(value, f"{origin}: rules.{rid}.{key}")
                setattr(out.naming, attr, value)
            else:
                raise ValueError(f"{origin}: unknown setting rules.{rid}.{key}")
    for key, value in (data.get("big-keys") or {}).items():
        if key not in BIG_KEY_PARAMS:
            raise ValueError(
                f"{origin}: unknown setting big-keys.{key} (known: {', '.join(BIG_KEY_PARAMS)})"
            )
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"{origin}: big-keys.{key} must be an integer")
        out.big_keys[key] = value
    for key, value in (data.get("fail-on") or {}).items():
        out.fail_on[key] = str(value)
    patterns = data.get("patterns") or {}
    for key, value in patterns.items():
        if key != "delimiters":
            raise ValueError(f"{origin}: unknown setting patterns.{key}")
        out.delimiters = str(value)
    return out


def _check_char_class(body: str, where: str) -> None:
    """`allowed` goes into a regular expression `[^...]` (RE2, in DuckDB): refuse here, in one
    line, what the query would fail on."""
    import duckdb

    con = duckdb.connect(":memory:")
    try:
        con.execute("SELECT regexp_matches('', '[^' || ? || ']')", [body])
    except duckdb.Error as e:
        reason = str(e).splitlines()[0].removeprefix("Invalid Input Error: ")
        raise ValueError(
            f"{where}: {body!r} is not a regular-expression character class ({reason})"
        ) from None
    finally:
        con.close()


def load_rules(path: str) -> RulesFile:
    if _toml is None:  # pragma: no cover
        raise ValueError("reading a rules file on Python 3.10 needs the `tomli` package")
    with open(path, "rb") as fh:
        try:
            data = _toml.load(fh)
        except Exception as exc:  # tomllib.TOMLDecodeError
            raise ValueError(f"{path}: not valid TOML: {exc}") from None
    return parse_rules(data, path)
