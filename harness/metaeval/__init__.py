"""Meta-evaluation: agreement statistics, the tables and pages, the profile rule and files, the recommended profile.
May import: core, aggregate, readers, classifiers, metrics, scorecard, experiment.compare; never run/, annotate/, cli/.
"""
