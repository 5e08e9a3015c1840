"""Foundations every other part uses: errors, records, signatures, cache, atomic outputs, integrity, tokenizer.
May import: nothing else of tsteval."""
