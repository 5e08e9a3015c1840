"""The metrics: base (Metric), registry (METRICS), resources, selection; one subpackage per family.
May import: core, lexicons, experiment.manifest, experiment.plan, backends (resources), metaeval.profile_file."""
