"""Foundations every other part uses: errors, records, signatures, cache, atomic outputs, integrity, tokenizer.

Imports nothing else of tsteval; ``tsteval.classifiers`` and ``tsteval.lexicons`` import only this.
"""
