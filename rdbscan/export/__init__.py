"""Getting the numbers out of rdbscan: key rows written by DuckDB's own writers (`rdbscan
export`, keys.py) and the report as OpenMetrics text (metrics.py, `report --format
openmetrics`)."""
