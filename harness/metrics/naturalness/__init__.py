"""Naturalness: cross-fitted adversarial classifiers and language-model scores."""
