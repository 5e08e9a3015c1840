"""Pluggable text classifiers behind one scikit-learn-shaped protocol (see ``tsteval.classifiers.base``).
May import: core."""
