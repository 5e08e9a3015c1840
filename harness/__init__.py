"""tsteval: evaluate text style transfer for style, content preservation, naturalness and compatibility.

The public API is listed in ``__all__``; everything else is reachable through the subpackages (``tsteval.core``,
``tsteval.readers``, ``tsteval.metrics``, ``tsteval.experiment``, ``tsteval.probes``, ``tsteval.classifiers``,
``tsteval.lexicons``).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from tsteval.core.records import Corpus, Transfers
from tsteval.experiment.manifest import load_manifest
from tsteval.scorecard import Scorecard

try:
    __version__ = version("tsteval")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["Corpus", "Scorecard", "Transfers", "__version__", "load_manifest"]
