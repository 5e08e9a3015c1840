"""One plan from the command line or a manifest, its trivial baseline systems and its classifiers.
May import: core, aggregate, readers, classifiers, lexicons, metrics, experiment.options, experiment.manifest, metaeval.
"""
