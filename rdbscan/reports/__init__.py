"""The report layer: bundled SQL, the report dict, its renderers."""
