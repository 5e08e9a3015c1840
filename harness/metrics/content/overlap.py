"""Word-overlap metrics per sentence: BLEU and chrF (sacreBLEU), METEOR (NLTK), ROUGE-L (rouge-score).

Texts are tokenized by :func:`tsteval.core.tokenize.tokenize` and re-joined with single spaces, so sacreBLEU runs
with ``tokenize="none"`` and every metric sees the same words.  The reference is the input ``x``, the
hypothesis the output ``x'``.  All metrics apply :mod:`tsteval.metrics.content.policy` for empty texts.

Each text is tokenised once per modification by the caller (``tokens=``, see
:func:`tsteval.metrics.content.scorer.score_content`) and the tokens go to every metric.  BLEU and chrF follow
sacreBLEU's design: per-sentence sufficient statistics are extracted with sacreBLEU's own
``_extract_reference_info`` / ``_compute_segment_statistics`` (reference n-grams once per distinct reference),
:data:`CHUNK` pairs at a time so memory stays flat; sentence BLEU is computed from each row (vectorised in
numpy, same formula as ``sacrebleu.metrics.BLEU.compute_bleu``), chrF with ``CHRF._compute_f_score``, and corpus
BLEU from the summed rows.  Plain chrF's statistics are counted in numpy (:mod:`~tsteval.metrics.content.
char_ngrams`, identical integers); ROUGE-L uses a bit-parallel LCS length (:func:`lcs_length`) in rouge-score's
formula.  Values equal the per-pair library calls (tests/test_overlap_speed.py).

* ``smooth_method="exp", effective_order=True`` (the default) is ``sacrebleu.sentence_bleu``'s default.
* :data:`MIR_BLEU` (``floor`` smoothing, value 0.01, no effective order) reproduces Mir et al.'s stored
  sentence BLEU on 243 of 244 CAAE rho=0.5 pairs to 1e-3 (the other differs by Mir's tokenizer splitting
  ``9pm``); this is sacreBLEU 1.x's old floor smoothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache, partial
from typing import TYPE_CHECKING

import numpy as np
from sacrebleu.metrics import BLEU, CHRF

from tsteval.metrics.content.char_ngrams import char_statistics
from tsteval.metrics.content.declarations import CONTENT
from tsteval.metrics.content.policy import MetricResult, Tokens, apply_policy, pair_tokens

if TYPE_CHECKING:  # NLTK (about a CPU-second to import) only when METEOR runs
    from tsteval.metrics.content.wordnet import DebianWordNetReader

MAX_ORDER = 4
MIR_BLEU: dict[str, object] = dict(next(m for m in CONTENT if m.name == "bleu_mir").params)
_LOG_ZERO = -9999999999.0  # sacreBLEU's my_log(0)
CHUNK = 4096  # pairs whose statistics are held at once: memory stays flat in the number of pairs
REFERENCE_INFO = 50_000  # distinct references whose n-grams are kept for the next pairs that share them

def segment_statistics(metric: object, hyps: Sequence[str], references: Sequence[Sequence[str]],
                       info: dict[tuple[str, ...], object] | None = None) -> list[list[int]]:
    """``metric._extract_corpus_statistics(hyps, references)``: sacreBLEU's per-sentence statistics, with the
    same ``_extract_reference_info`` / ``_compute_segment_statistics`` calls, but the reference n-grams extracted
    once per distinct set of references (kept in ``info`` across calls; bounded by :data:`REFERENCE_INFO`)."""
    info = {} if info is None else info
    stats = []
    for hyp, refs in zip(hyps, zip(*references, strict=True), strict=True):
        if refs not in info:
            if len(info) >= REFERENCE_INFO:
                info.clear()
            info[refs] = metric._extract_reference_info([metric._preprocess_segment(r) for r in refs])
        stats.append(metric._compute_segment_statistics(metric._preprocess_segment(hyp), info[refs]))
    return stats


def chunked_statistics(metric: object, tokens: Tokens) -> Iterator[np.ndarray]:
    """Per-sentence statistics of ``metric`` on tokens joined by spaces, :data:`CHUNK` pairs at a time."""
    ref_tokens, hyp_tokens = tokens
    info: dict[tuple[str, ...], object] = {}
    for start in range(0, len(hyp_tokens), CHUNK):
        refs = [" ".join(t) for t in ref_tokens[start:start + CHUNK]]
        hyps = [" ".join(t) for t in hyp_tokens[start:start + CHUNK]]
        yield np.asarray(segment_statistics(metric, hyps, [refs], info), dtype=np.float64)


def _bleu() -> BLEU:
    return BLEU(tokenize="none", force=True)


def bleu_statistics(refs: Sequence[str], hyps: Sequence[str], tokens: Tokens | None = None) -> np.ndarray:
    """sacreBLEU's per-sentence statistics, shape (n, 2 + 2*4): sys_len, ref_len, correct[1..4], total[1..4].

    Equal to ``BLEU._extract_corpus_statistics`` (the function ``BLEU.corpus_score`` aggregates) on our tokens.
    """
    chunks = list(chunked_statistics(_bleu(), pair_tokens(refs, hyps, tokens)))
    return np.concatenate(chunks) if chunks else np.zeros((0, 2 + 2 * MAX_ORDER))


def bleu_from_statistics(stats: np.ndarray, smooth_method: str = "exp", smooth_value: float | None = None,
                         effective_order: bool = True) -> np.ndarray:
    """BLEU (0-100) for each row of statistics, vectorised; same result as ``BLEU.compute_bleu`` per row."""
    stats = np.atleast_2d(np.asarray(stats, dtype=np.float64))
    if smooth_method not in BLEU.SMOOTH_DEFAULTS:
        raise ValueError(f"smooth_method must be one of {list(BLEU.SMOOTH_DEFAULTS)}, not {smooth_method!r}")
    value = BLEU.SMOOTH_DEFAULTS[smooth_method] if smooth_value is None else smooth_value
    sys_len, ref_len = stats[:, 0], stats[:, 1]
    correct = stats[:, 2:2 + MAX_ORDER].copy()
    total = stats[:, 2 + MAX_ORDER:].copy()
    no_match = ~correct.any(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(sys_len < ref_len, np.where(sys_len > 0, np.exp(1 - ref_len / sys_len), 0.0), 1.0)
        if smooth_method == "add-k":
            correct[:, 1:] += value
            total[:, 1:] += value
        n_rows = len(stats)
        log_p = np.zeros((n_rows, MAX_ORDER))
        alive = np.ones(n_rows, dtype=bool)
        eff_order = np.full(n_rows, MAX_ORDER, dtype=np.float64)
        mteval = np.ones(n_rows)
        for n in range(MAX_ORDER):
            alive &= total[:, n] > 0
            if effective_order:
                eff_order = np.where(alive, n + 1, eff_order)
            zero = alive & (correct[:, n] == 0)
            if smooth_method == "exp":
                mteval = np.where(zero, mteval * 2, mteval)
                smoothed = 100.0 / (mteval * total[:, n])
            elif smooth_method == "floor":
                smoothed = 100.0 * value / total[:, n]
            else:
                smoothed = np.zeros(n_rows)
            precision = np.where(zero, smoothed, 100.0 * correct[:, n] / total[:, n])
            precision = np.where(alive, precision, 0.0)
            log_p[:, n] = np.where(precision > 0, np.log(np.where(precision > 0, precision, 1.0)), _LOG_ZERO)
        used = np.arange(MAX_ORDER)[None, :] < eff_order[:, None]
        score = bp * np.exp((log_p * used).sum(axis=1) / eff_order)
    return np.where(no_match, 0.0, score)


def sentence_bleu(refs: Sequence[str], hyps: Sequence[str], smooth_method: str = "exp",
                  smooth_value: float | None = None, effective_order: bool = True,
                  tokens: Tokens | None = None) -> MetricResult:
    """Sentence BLEU (0-100) per pair, reference = input, with the empty-text policy; statistics streamed in
    chunks of :data:`CHUNK` pairs."""
    tokens = pair_tokens(refs, hyps, tokens)
    parts = [bleu_from_statistics(chunk, smooth_method, smooth_value, effective_order)
             for chunk in chunked_statistics(_bleu(), tokens)]
    values = np.concatenate(parts) if parts else np.zeros(0)
    return apply_policy(values, *tokens, scale=100.0)


def corpus_bleu(refs: Sequence[str], hyps: Sequence[str], smooth_method: str = "exp",
                smooth_value: float | None = None, effective_order: bool = False) -> float:
    """Corpus BLEU from the summed per-sentence statistics (equals ``sacrebleu.corpus_bleu`` on our tokens)."""
    total = np.zeros((1, 2 + 2 * MAX_ORDER))
    for chunk in chunked_statistics(_bleu(), pair_tokens(refs, hyps, None)):
        total += chunk.sum(axis=0, keepdims=True)
    return float(bleu_from_statistics(total, smooth_method, smooth_value, effective_order)[0])


def chrf_statistics(chrf: CHRF, tokens: Tokens) -> Iterator[np.ndarray]:
    """sacreBLEU's per-sentence chrF statistics on tokens joined by spaces, :data:`CHUNK` pairs at a time: in
    numpy (:func:`~tsteval.metrics.content.char_ngrams.char_statistics`, the same integers) for plain chrF,
    through ``CHRF._compute_segment_statistics`` for chrF++ or when the numpy codes would overflow."""
    if chrf.word_order or chrf.whitespace:
        yield from chunked_statistics(chrf, tokens)
        return
    ref_tokens, hyp_tokens = tokens
    for start in range(0, len(hyp_tokens), CHUNK):
        refs = [" ".join(t) for t in ref_tokens[start:start + CHUNK]]
        hyps = [" ".join(t) for t in hyp_tokens[start:start + CHUNK]]
        stats = char_statistics(refs, hyps, chrf.char_order)
        yield np.asarray(segment_statistics(chrf, hyps, [refs]) if stats is None else stats, dtype=np.int64)


def sentence_chrf(refs: Sequence[str], hyps: Sequence[str], char_order: int = 6, word_order: int = 0,
                  beta: int = 2, tokens: Tokens | None = None) -> MetricResult:
    """Sentence chrF (0-100; chrF++ with ``word_order=2``): sacreBLEU's per-sentence statistics
    (:func:`chrf_statistics`) and its ``CHRF._compute_f_score`` on each row."""
    tokens = pair_tokens(refs, hyps, tokens)
    chrf = CHRF(char_order=char_order, word_order=word_order, beta=beta)
    values = np.array([chrf._compute_f_score(row) for chunk in chrf_statistics(chrf, tokens)
                       for row in chunk.astype(np.int64).tolist()])
    return apply_policy(values, *tokens, scale=100.0)


def corpus_chrf(refs: Sequence[str], hyps: Sequence[str], char_order: int = 6, word_order: int = 0,
                beta: int = 2) -> float:
    """Corpus chrF from the summed per-sentence statistics (``sacrebleu.corpus_chrf`` on our tokens)."""
    chrf = CHRF(char_order=char_order, word_order=word_order, beta=beta)
    chunks = [chunk.sum(axis=0) for chunk in chrf_statistics(chrf, pair_tokens(refs, hyps, None))]
    return float(chrf._compute_f_score(np.sum(chunks, axis=0).astype(np.int64).tolist())) if chunks else 0.0


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token lists, bit-parallel (Allison & Dix 1986; Hyyrö
    2004): one integer update per token of ``b`` instead of rouge-score's ``len(a) * len(b)`` table.

    >>> lcs_length("the cat sat on the mat".split(), "the cat lay on a mat".split())
    4
    """
    masks: dict[str, int] = {}
    for position, token in enumerate(a):
        masks[token] = masks.get(token, 0) | (1 << position)
    full = (1 << len(a)) - 1
    v = full
    for token in b:
        u = v & masks.get(token, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def rouge_l(refs: Sequence[str], hyps: Sequence[str], tokens: Tokens | None = None) -> MetricResult:
    """ROUGE-L F-measure (0-1) per pair on our tokens, no stemming: rouge-score's ``_score_lcs`` formula (its
    ``scoring.fmeasure`` of LCS/len(hyp) and LCS/len(ref)) with the LCS length from :func:`lcs_length`."""
    from rouge_score import scoring  # only when ROUGE-L runs

    ref_tokens, hyp_tokens = pair_tokens(refs, hyps, tokens)
    values = np.zeros(len(ref_tokens))
    for k, (ref, hyp) in enumerate(zip(ref_tokens, hyp_tokens, strict=True)):
        if ref and hyp:
            lcs = lcs_length(ref, hyp)
            values[k] = scoring.fmeasure(lcs / len(hyp), lcs / len(ref))
    return apply_policy(values, ref_tokens, hyp_tokens)


Enumerated = list[tuple[int, str]]  # (position in the sentence, word)


def _match_exact(hyp: Enumerated, ref: Enumerated) -> tuple[list[tuple[int, int]], Enumerated, Enumerated]:
    """NLTK's greedy exact matcher: from the last hypothesis word back, take the latest free reference position
    holding the same word; returns the matched (hypothesis, reference) positions and the unmatched remainders."""
    positions: dict[str, list[int]] = {}
    for j, (_, word) in enumerate(ref):
        positions.setdefault(word, []).append(j)
    matches, used_h, used_r = [], set(), set()
    for i in range(len(hyp) - 1, -1, -1):
        free = positions.get(hyp[i][1])
        if free:
            j = free.pop()
            used_h.add(i)
            used_r.add(j)
            matches.append((hyp[i][0], ref[j][0]))
    return (matches, [p for i, p in enumerate(hyp) if i not in used_h],
            [p for j, p in enumerate(ref) if j not in used_r])


def _match_synonyms(hyp: Enumerated, ref: Enumerated,
                    synonyms: Callable[[str], frozenset[str]]) -> list[tuple[int, int]]:
    """NLTK's greedy synonym matcher: from the last hypothesis word back, take the latest free reference position
    whose word is in ``synonyms(word)``.  Scanning the few free positions from the end finds the position that
    NLTK's look-up of every synonym's latest free position finds."""
    free = list(range(len(ref)))
    matches = []
    for i in range(len(hyp) - 1, -1, -1):
        candidates = synonyms(hyp[i][1])
        for k in range(len(free) - 1, -1, -1):
            if ref[free[k]][1] in candidates:
                matches.append((hyp[i][0], ref[free.pop(k)][0]))
                break
    return matches


def _chunks(matches: list[tuple[int, int]]) -> int:
    pairs = zip(matches, matches[1:], strict=False)
    return 1 + sum(1 for a, b in pairs if not (b[0] == a[0] + 1 and b[1] == a[1] + 1))


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return _stemmer().stem(word)


@lru_cache(maxsize=1)
def _stemmer() -> object:
    """NLTK's Porter stemmer (NLTK's default mode, as its METEOR uses)."""
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=50_000)
def _synonyms(wordnet: DebianWordNetReader, word: str) -> frozenset[str]:
    """``word`` and the names without ``_`` of the lemmas of its WordNet synsets (NLTK's METEOR synonyms)."""
    return frozenset({name for name in wordnet.lemma_names_of(word) if "_" not in name} | {word})


def _meteor_matches(ref: Sequence[str], hyp: Sequence[str],
                    synonyms: Callable[[str], frozenset[str]]) -> list[tuple[int, int]]:
    """Exact, then Porter-stem, then WordNet-synonym matches; as in NLTK, the synonym stage looks up the *stems*
    of the words left unmatched."""
    exact, h, r = _match_exact(list(enumerate(hyp)), list(enumerate(ref)))
    if not h or not r:
        return exact
    stem, h, r = _match_exact([(i, _stem(w)) for i, w in h], [(j, _stem(w)) for j, w in r])
    if not h or not r:
        return exact + stem
    return exact + stem + _match_synonyms(h, r, synonyms)


def meteor(refs: Sequence[str], hyps: Sequence[str], alpha: float = 0.9, beta: float = 3.0,
           gamma: float = 0.5, tokens: Tokens | None = None) -> MetricResult:
    """METEOR (0-1) per pair, identical to ``nltk.translate.meteor_score.meteor_score([ref], hyp)`` on our tokens
    with the Debian WordNet, but with stems and WordNet synonym sets computed once per distinct word in the
    process (NLTK recomputes them for every pair), the synonyms read without NLTK's ``Synset`` objects
    (:meth:`~tsteval.metrics.content.wordnet.DebianWordNetReader.lemma_names_of`).
    """
    from tsteval.metrics.content.wordnet import load_wordnet

    wordnet = load_wordnet()
    ref_tokens, hyp_tokens = pair_tokens(refs, hyps, tokens)
    synonyms = partial(_synonyms, wordnet)
    values = np.zeros(len(ref_tokens))
    for k, (ref, hyp) in enumerate(zip(ref_tokens, hyp_tokens, strict=True)):
        if not ref or not hyp:
            continue
        matches = sorted(_meteor_matches(ref, hyp, synonyms), key=lambda pair: pair[0])
        if not matches:
            continue
        precision, recall = len(matches) / len(hyp), len(matches) / len(ref)
        fmean = precision * recall / (alpha * precision + (1 - alpha) * recall)
        values[k] = (1 - gamma * (_chunks(matches) / len(matches)) ** beta) * fmean
    return apply_policy(values, ref_tokens, hyp_tokens)
