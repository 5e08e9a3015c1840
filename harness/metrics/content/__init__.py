"""Content-preservation metrics (Mir et al. 2019, 3.2.2): per-sentence statistics, aggregation, signatures.
May import: core, lexicons, readers, metrics, scorecard."""
