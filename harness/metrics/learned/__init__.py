"""Metrics learned from human judgements: the rated pairs and their groups (:mod:`.rated_pairs`), the fine-tuning
recipe (:mod:`.training`), the saved folder and its scorer (:mod:`.folder`) and ``train_metric`` (:mod:`.learn`),
behind ``tsteval train-metric`` and the ``learned`` content column."""
