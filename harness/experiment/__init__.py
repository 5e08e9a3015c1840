"""An experiment's stages, as a run takes them: manifest/, plan/, run/, compare/, report/; options.py, shared.
May import: core, metrics, experiment.plan.baselines, backends (options.py); each stage says what it may."""
