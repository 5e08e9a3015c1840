"""tsteval: evaluate text style transfer for style, content preservation, naturalness and compatibility.

The public API is listed in ``__all__``; everything else is reachable through the subpackages (``tsteval.core``,
``tsteval.readers``, ``tsteval.metrics``, ``tsteval.experiment``, ``tsteval.metaeval``, ``tsteval.annotate``,
``tsteval.probes``, ``tsteval.classifiers``, ``tsteval.lexicons``).  ``evaluate`` scores pairs in one call;
``meta_evaluate`` checks a scorecard's metrics against human ratings; ``run_study`` runs a study declaration
(rated sets, columns, statistics, the profile rule: ``load_study`` reads one); ``train_metric`` fine-tunes a
learned content metric on the rated sets (``tsteval train-metric``); ``Plan`` and ``run`` are what
``evaluate``, the command line and experiment manifests share; ``METRICS`` declares every metric (aspect,
direction, range, needs).

>>> import tsteval
>>> tsteval.METRICS["ppl"].higher_is_better
False
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from tsteval.api import evaluate
from tsteval.core.records import Corpus, Transfers
from tsteval.experiment.manifest.loader import load_manifest
from tsteval.experiment.plan.plan import Plan
from tsteval.experiment.run.execute import run
from tsteval.metaeval.engine import meta_evaluate
from tsteval.metaeval.study.declaration import load_study
from tsteval.metaeval.study.runner import run_study
from tsteval.metrics.learned.learn import train_metric
from tsteval.metrics.registry import METRICS
from tsteval.scorecard import Scorecard

try:
    __version__ = version("tsteval")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["METRICS", "Corpus", "Plan", "Scorecard", "Transfers", "__version__", "evaluate", "load_manifest",
           "load_study", "meta_evaluate", "run", "run_study", "train_metric"]
