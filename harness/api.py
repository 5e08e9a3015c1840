"""``tsteval.evaluate``: pairs or a table in, a :class:`~tsteval.scorecard.Scorecard` out, in one call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from tsteval.core.errors import TstevalError, did_you_mean
from tsteval.core.records import DEFAULT_SETTING, DEFAULT_SYSTEM, Corpus, Transfers
from tsteval.scorecard import Scorecard


def _corpus(corpus: Corpus | Mapping[str, Sequence[str]] | None) -> Corpus | None:
    if corpus is None or isinstance(corpus, Corpus):
        return corpus
    texts = [text for style in corpus for text in corpus[style]]
    labels = [str(style) for style in corpus for _ in corpus[style]]
    return Corpus(texts, labels, "<evaluate corpus>")


def _classifier_source(name: str, value: object, corpus: Corpus | None) -> object:
    """A backend name (not an existing folder) becomes a training spec on ``corpus``, ``hf:ID_OR_DIR`` a ready-made
    classifier's spec; anything else is kept."""
    from tsteval.classifiers.base import BACKENDS
    from tsteval.experiment.manifest.specs import HUB, ready_made

    if isinstance(value, str) and value.startswith(f"{HUB}:"):
        return ready_made(name, value)
    if isinstance(value, str) and value in BACKENDS and not Path(value).is_dir():
        from tsteval.experiment.manifest.loader import ClassifierSpec

        if corpus is None:
            raise TstevalError(f"classifier={value!r} names a backend to train: give corpus= (labelled texts)")
        return ClassifierSpec(value, value, {}, heldout=0.0)
    if isinstance(value, str) and not Path(value).exists() and (hint := did_you_mean(value, BACKENDS)):
        raise TstevalError(f"classifier={value!r} is neither a saved classifier folder (there is none) nor a backend "
                           f"to train; {hint}")
    return value


def evaluate(inputs: Sequence[str] | None = None, outputs: Sequence[str] | None = None, *,
             table: str | Path | None = None, transfers: Transfers | None = None,
             source_style: str | Sequence[str] | None = None, target_style: str | Sequence[str] | None = None,
             metrics: Iterable[str] = ("sti",),
             classifier: object = None, corpus: Corpus | Mapping[str, Sequence[str]] | None = None,
             lexicon: object = None, human: Sequence[str] | None = None, hh: Mapping[str, object] | None = None,
             system: str = DEFAULT_SYSTEM, setting: str = DEFAULT_SETTING, references: object = None,
             attribution: str | None = None, **options: object) -> Scorecard:
    """Score style transfers in one call: one row per transfer, one column per metric, each with a signature.

    Give ``inputs`` and ``outputs`` (aligned lists) with ``source_style`` and ``target_style`` (one style for
    all, or one per row), or a ``table`` file (CSV/JSONL/Parquet with input, output, source_style, target_style).
    ``metrics`` names metrics of :data:`tsteval.METRICS`, with parameters for a content metric
    (``"bleu:smooth_method=floor"``), naturalness scorers (``unigram``, ``textcnn``, ``unigram-pooled``, ``kn3``,
    ``smollm2``; ``device`` and ``threads`` apply to SmolLM2) or ``recommended``
    (:mod:`tsteval.metrics.selection`): a style metric adds all four style columns, ``ppl`` the ``kn3`` scorer's
    columns, ``joint`` STRAP's J; a metric whose resource is missing (``hh`` without ``hh=``) is one error line.
    ``classifier`` is a saved folder, a fitted classifier, ``"hf:ID_OR_DIR"`` (a ready-made Hugging Face
    sequence-classification model scored as it is; ``classifier_labels`` maps its labels to the styles where they
    differ), a backend name trained on ``corpus`` (labelled texts:
    a :class:`~tsteval.Corpus` or ``{style: [texts]}``), or ``{NAME: any of these}`` (columns ``sti@NAME``;
    a single classifier is named ``clf``; a backend is trained on all of ``corpus``, through the cache).
    ``lexicon`` (a Lexicon or its file) serves the ``mask``/``remove`` modifications; the ``erase`` modification
    fits LEACE style erasers on ``corpus`` for the embedding metrics (``sbert@erase``, ``wmd@erase``, ...).
    ``references`` adds the content metrics against human references (columns ``metric@ref``): a list of reference
    sets, each a file or a list of texts (text i: a reference for transfer i), or ``"dualrl:GYAFC"`` /
    ``"dualrl:yelp"``; a ``table`` with a ``reference`` column is scored against it too (``references=[]``: against
    none), and the scorecard keeps the first set as its ``reference`` column.  ``metrics`` may name a rating study's
    ``profile:FILE`` (:mod:`tsteval.metaeval.profile_file`).  ``attribution`` names the transformer classifier of
    the ``attribution-mask``/``attribution-delete`` modifications.  ``options`` are the run options of
    :data:`tsteval.experiment.options.OPTIONS` -- the same, with the same checks, as ``tsteval score``'s flags and
    a manifest's keys (listed at the end of this text).  The scorecard's ``policy`` holds, per column, what
    ``policy.json`` holds for ``tsteval score``: the empty/OOV policy's counts and, for a model with a length limit,
    how many rows read a text it cut (``n_truncated``, ``max_tokens``; one warning line per metric says so).

    >>> import tsteval
    >>> corpus = {"neg": ["the food was awful", "terrible service", "i hated it", "bad and cold"],
    ...           "pos": ["the food was great", "lovely service", "i loved it", "good and warm"]}
    >>> card = tsteval.evaluate(["the food was awful", "i hated it"], ["the food was great", "i hated it"],
    ...                         source_style="neg", target_style="pos", metrics=["sti", "bleu"],
    ...                         classifier="tfidf-lr", corpus=corpus)
    >>> card.metrics  # doctest: +NORMALIZE_WHITESPACE
    ['sti@clf', 'sti_norm@clf', 'target_prob@clf', 'style_strength@clf', 'target_acc@clf',
     'bleu@none']
    >>> round(float(card.frame.loc[1, "bleu@none"]), 6)    # output = input
    100.0
    >>> bool(card.frame.loc[0, "sti@clf"] > 0)
    True
    """
    from tsteval.experiment.options import OPTIONS
    from tsteval.experiment.plan.plan import Plan
    from tsteval.experiment.run.execute import run

    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise TstevalError(f"evaluate() has no option {unknown[0]!r}; its run options: {', '.join(OPTIONS)}")
    options = {name: option.read(options.get(name)) for name, option in OPTIONS.items()}
    if sum(x is not None for x in (table, transfers, inputs if inputs is not None else outputs)) > 1:
        raise TstevalError("give one of inputs and outputs, table= or transfers=")
    if transfers is not None:
        if not isinstance(transfers, Transfers):
            raise TstevalError(f"transfers= takes a tsteval.Transfers, not {type(transfers).__name__}")
    elif table is not None:
        from tsteval.readers.tables import load_table_transfers

        transfers = load_table_transfers(table)
    else:
        if inputs is None or outputs is None:
            raise TstevalError("give inputs and outputs (aligned lists of texts), or table=FILE")
        if source_style is None or target_style is None:
            raise TstevalError("inputs and outputs need source_style= and target_style=")
        if isinstance(inputs, str) or isinstance(outputs, str):
            raise TstevalError("inputs and outputs are lists of texts, not one string")
        transfers = Transfers.from_pairs(list(inputs), list(outputs), source_style=source_style,
                                         target_style=target_style, system=system, setting=setting)
    from tsteval.metaeval.profile_file import apply_profiles
    from tsteval.metrics.content.references import has_references
    from tsteval.metrics.selection import select

    chosen = select(metrics, classifiers=classifier is not None, hh=bool(hh), served=options["lm_endpoint"] is not None)
    given = {} if classifier is None else classifier if isinstance(classifier, Mapping) else {"clf": classifier}
    apply_profiles(chosen, options, classifiers=[str(name) for name in given], pairs=[str(name) for name in hh or {}],
                   references=bool(references) or (references is None and has_references(transfers)))
    training = _corpus(corpus)
    classifiers = {}
    if chosen.style:
        classifiers = {str(name): _classifier_source(str(name), value, training) for name, value in given.items()}
    if chosen.joint and options["joint"] == "auto":
        options["joint"] = "strap"
    plan = Plan(transfers, classifiers=classifiers, content=tuple(chosen.content), params=chosen.params,
                lexicon=lexicon, naturalness=tuple(chosen.naturalness), human=human,
                hh=dict(hh or {}) if chosen.pairs else {}, references=references, attribution=attribution,
                corpus=training, judges=tuple(chosen.judges), **options)
    return run(plan)


def _options_doc() -> str:
    """The run options' lines for :func:`evaluate`'s docstring."""
    from tsteval.experiment.options import OPTIONS

    lines = [f"    ``{o.name}`` (default {o.default!r}; ``{o.flag}``, manifest ``{o.manifest}``): {o.help}."
             for o in OPTIONS.values()]
    return "\n\n    Run options:\n\n" + "\n".join(lines) + "\n"


evaluate.__doc__ = (evaluate.__doc__ or "") + _options_doc()
