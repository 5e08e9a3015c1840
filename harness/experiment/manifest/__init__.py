"""The experiment manifest: its safe YAML, located errors, schema (specs), validation (loader), files.
May import: core, aggregate, readers, classifiers, metrics, experiment.options, metaeval.tables, metaeval.profile_file.
"""
