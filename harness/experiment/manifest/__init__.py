"""The experiment manifest: its safe YAML, located errors, schema (specs) and validation (loader).
May import: core, readers, classifiers, metrics, experiment.options, metaeval.tables."""
