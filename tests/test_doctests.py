"""The examples in tsteval's docstrings run (``make test`` runs them through this file)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["tsteval", "tsteval.api", "tsteval.metrics.base", "tsteval.metrics.registry",
           "tsteval.metrics.naturalness.lm_scores", "tsteval.metrics.naturalness.pooled",
           "tsteval.metrics.naturalness.causal_lm",
           "tsteval.classifiers.calibration", "tsteval.classifiers.ensemble", "tsteval.classifiers.training_texts",
           "tsteval.core.tokenize", "tsteval.core.text_form", "tsteval.core.devices",
           "tsteval.metaeval.statistics", "tsteval.metaeval.engine",
           "tsteval.core.texttable",
           "tsteval.metrics.resources", "tsteval.metrics.selection", "tsteval.metrics.style.intensity",
           "tsteval.experiment.options", "tsteval.experiment.manifest.loader", "tsteval.scorecard",
           "tsteval.metrics.judges.prompts", "tsteval.metrics.judges.logprop", "tsteval.metaeval.profile_rule",
           "tsteval.metaeval.recommended", "tsteval.metaeval.rated.lm_subset", "tsteval.experiment.report.explorer",
           "tsteval.metrics.judges.prefix_scoring", "tsteval.experiment.run.ray_engine",
           "tsteval.annotate.template", "tsteval.annotate.store", "tsteval.annotate.reliability",
           "tsteval.annotate.platforms", "tsteval.metaeval.profile_file", "tsteval.core.markdown",
           "tsteval.backends.client", "tsteval.backends.remote", "tsteval.backends.options",
           "tsteval.metaeval.rated.card_cache", "tsteval.classifiers.tfidf_lr",
           "tsteval.experiment.run.outputs", "tsteval.metrics.naturalness.packaged", "tsteval.classifiers.hub",
           "tsteval.core.errors", "tsteval.classifiers.corpus_checks", "tsteval.metrics.content.policy",
           "tsteval.metaeval.study.scoring"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_import_is_light_and_help_shows_an_example() -> None:
    import subprocess
    import sys

    code = ("import sys, tsteval; assert 'torch' not in sys.modules, 'torch'; "
            "assert set(tsteval.__all__) >= {'evaluate', 'METRICS', 'run', 'Plan', 'Scorecard', 'Transfers', "
            "'Corpus', 'load_manifest'}; help(tsteval.evaluate)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert ">>> card = tsteval.evaluate(" in out
