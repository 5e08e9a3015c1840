"""Probes of the embeddings behind the metrics: style invariance on the Corpus of Diverse Styles.
May import: core, classifiers, metrics."""
