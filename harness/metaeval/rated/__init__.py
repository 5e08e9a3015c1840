"""Rated data meta-evaluated: the rated datasets scored, their LM subsets, rated sets as studies, the study loop.
May import: core, aggregate, readers, metrics, scorecard, metaeval, annotate, experiment."""
