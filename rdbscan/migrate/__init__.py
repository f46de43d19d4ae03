"""`rdbscan migrate`: will a dump load on another server (rules.py), and what would its keys
cost there (projection.py); run.py puts them together, render.py prints them."""
