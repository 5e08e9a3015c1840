"""Running a plan: the per-sentence phase (local, overlapped, Ray), leakage guards, outputs, whole experiments.
May import: core, readers, classifiers, lexicons, metrics, scorecard, failures, experiment, metaeval, backends."""
