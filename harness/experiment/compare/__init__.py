"""Comparing systems and runs: paired significance tests, tradeoff curves, the printed comparisons.
May import: core, aggregate, metrics, scorecard."""
