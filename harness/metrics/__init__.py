"""The metrics: base (Metric), registry (METRICS), resources, selection; one subpackage per family.
May import: core, lexicons, experiment.options, experiment.manifest, experiment.plan, backends, metaeval.profile_file"""
