"""Experiments: manifest, runner, agreement with human ratings, tradeoff curves, report."""
