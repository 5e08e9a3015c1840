"""Studies as data: a declaration (rated sets, columns, statistics, rule) run by one engine into one kind of page.
May import: core, aggregate, readers, metrics, scorecard, metaeval, experiment, api, annotate."""
