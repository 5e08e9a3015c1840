"""Readers: line files, TSV, tables, Hugging Face datasets, the published datasets of the data root.
May import: core."""
