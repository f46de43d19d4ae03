"""Key schemas (docs/schema.md): `infer` one from a dump (`rdbscan schema`), `write` it as TOML,
markdown or JSON, `read` one back, and `check` a dump against it (the report's Schema section,
`report --schema FILE`); `spec` is what a schema file is (its pattern language), `data` the
inferred schema as types."""

from .infer import SAMPLE_ELEMENTS, InferOptions, infer, sample_statement
from .read import Schema, load_schema, merge_previous, parse_duration_ms, parse_schema, parse_size
from .spec import pattern_regex
from .write import RENDERERS, SchemaOutputError, not_ours, write_output, written_by_rdbscan

__all__ = [
    "RENDERERS",
    "SAMPLE_ELEMENTS",
    "InferOptions",
    "Schema",
    "SchemaOutputError",
    "infer",
    "load_schema",
    "merge_previous",
    "not_ours",
    "parse_duration_ms",
    "parse_schema",
    "parse_size",
    "pattern_regex",
    "sample_statement",
    "write_output",
    "written_by_rdbscan",
]
