"""SQL to the reports (docs/architecture.md): `engine` runs the bundled SQL and knows no section;
`format` writes values, `document` lays out and draws blocks, `html` makes the pages; the
products are `report` (its sections, one package each), `diff` (and trend) and `schema`."""
