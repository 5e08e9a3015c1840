"""Pluggable text classifiers behind one scikit-learn-shaped protocol (see ``classifiers.base``)."""
