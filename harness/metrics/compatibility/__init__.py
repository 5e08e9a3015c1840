"""Content compatibility (De Mattei et al. 2020): TF-IDF alignment, pair classifiers, compliancy.
May import: core, classifiers, metrics."""
