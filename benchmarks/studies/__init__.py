"""Studies of the metrics themselves: meta-evaluations against human ratings and the investigations behind the
recommended profile (``python -m benchmarks.studies.NAME``; results in ``benchmarks/results/``)."""
