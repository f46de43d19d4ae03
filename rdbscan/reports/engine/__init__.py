"""The engine: runs the bundled SQL and knows no section of any report.

`querylib` reads the SQL files (header, parameters) and runs one; `relations` creates the base
relations the queries read and runs queries with a report's parameter values (`Runner`);
`database` opens a database rdbscan wrote (or a Parquet dataset, `dataset`) for queries;
`sources` loads dumps into one first; `thresholds` works out the parameters a server's rules
decide (compact-encoding thresholds, big-key thresholds).
"""
