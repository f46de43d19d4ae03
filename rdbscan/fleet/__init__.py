"""Fleets of dumps: loading into Parquet datasets on one machine (`--jobs`) or on a Dask
cluster (`--dask`), and reports over such datasets (docs/fleet.md)."""
