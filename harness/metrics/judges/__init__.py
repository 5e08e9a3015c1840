"""Language-model judges: prompt templates as data, ratings and log-probabilities read from the model.
May import: core, metrics, scorecard, backends."""
