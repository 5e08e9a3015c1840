"""Metrics learned from human judgements (rated_pairs, training, folder, learn), behind ``tsteval train-metric``.
May import: core, classifiers, readers, metrics."""
