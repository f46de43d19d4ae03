"""rdbscan: offline analyzer for Redis and Valkey RDB dump files.

source bytes -> streaming parser -> key rows -> Arrow batches -> DuckDB -> bundled SQL -> renderers
"""
__version__ = "0.1.0"
