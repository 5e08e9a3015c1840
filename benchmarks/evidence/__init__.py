"""The evidence pages as data: one study declaration (YAML) per page, run by ``tsteval meta-eval --study``
(``make evidence``; docs/studies.md), the hooks a declaration names, and the README tables generated from the pages."""
