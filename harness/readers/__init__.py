"""Readers: line files, TSV, tables, Hugging Face datasets, the published datasets, rated sets as declarations.
May import: core."""
