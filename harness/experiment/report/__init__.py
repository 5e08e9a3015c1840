"""The run report (Markdown, HTML) and the explorer (one self-contained interactive page, assets/).
May import: core, lexicons, metrics, scorecard, failures, experiment.manifest, experiment.compare, metaeval."""
