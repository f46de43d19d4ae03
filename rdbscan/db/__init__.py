"""The DuckDB layer: key rows, schema, Arrow batches, the loader."""
