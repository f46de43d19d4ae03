"""The RDB layer: source bytes -> records.  Knows nothing of DuckDB or reports."""
