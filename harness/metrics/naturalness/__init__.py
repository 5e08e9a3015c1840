"""Naturalness: cross-fitted adversarial classifiers and language-model scores.
May import: core, classifiers, metrics, scorecard."""
