"""The rated sets of the data root (:mod:`tsteval.readers.rated_sets`, each one declaration), scored by every
applicable metric and meta-evaluated.

``mir``: Mir et al. (2019), Yelp sentiment, 12 model settings x 244 inputs; raters judged the *change* of style,
content preservation and (for 9 settings) the output's naturalness (1-5).  Style classifiers and the naturalness
human text come from Yelp dev+test with every rated input removed; the lexicon is Mir et al.'s published one.

``lai``: Lai et al. (2022), GYAFC informal -> formal, 80 inputs x 9 outputs, two annotators (0-100) for the
output's formality, content vs the input, content vs the reference and fluency.  GYAFC ships test sets only, so
style classifiers, the lexicon and the naturalness human text are trained on DualRL's GYAFC test sets and
references with every Lai input and reference removed (compared lower-cased, punctuation and spaces ignored,
since DualRL's copy is tokenised and lower-cased), and with them every line parallel to one (the other rewrites of
a rated sentence); the counts are returned.  DualRL's text is lower-cased and Penn-Treebank tokenised, Lai's is
not: the style classifiers score a copy of the transfers written the same way
(:func:`tsteval.core.text_form.tokenise_lowercase`), the other metrics the original text.  The authors' own metric
scores are judged beside ours (``source`` = ``Lai et al. 2022``).

Every other set (Tox600, CAE-T5, the content-pair sets) is scored by :func:`score_declared`: the content columns
and the packaged LM's fluency where the set rates naturalness, and style columns only where its declaration names a
training corpus (``RatedSet.style_corpus``, an entry of :data:`STYLE_CORPORA`: the detox sets name ``detox2021``);
where none is named the run says that style is not scored.  The hook for a new corpus: add a function
``(Ratings) -> (Corpus, notes)`` to :data:`STYLE_CORPORA` that leaves out every text of the set's ``keep_out``
columns, and name it in the declaration.

Everything expensive goes through the cache (classifiers, lexicon fits), so a rerun is fast.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tsteval.aggregate import N_RESAMPLES
from tsteval.core.datapaths import dataset_dir
from tsteval.core.records import Corpus, Transfers
from tsteval.core.text_form import match_key, tokenise_lowercase
from tsteval.metaeval.engine import meta_evaluate
from tsteval.metaeval.tables import JUDGED_BY, MetaEvaluation, MetricColumn, Rating, registered_columns
from tsteval.readers.rated import Ratings, read_rated_set
from tsteval.readers.rated_sets import LAI, MIR, rated_set
from tsteval.readers.rated_spec import RatedSet
from tsteval.scorecard import Scorecard

DATASETS = ("mir", "lai")  # the sets of the committed meta-evaluation tables (benchmarks/studies/meta_eval*.py)
# The style classifiers of the rated runs: name -> (backend, parameters); the transformer by its default recipe
# (:mod:`tsteval.classifiers.transformer`), ``fasttext_transformer`` the calibrated mean of fastText and it.
STYLE_CLASSIFIERS = {"fasttext": ("fasttext", {}), "tfidflr": ("tfidf-lr", {}), "ensemble": ("ensemble", {}),
                     "transformer": ("transformer", {}),
                     "fasttext_transformer": ("ensemble", {"members": "fasttext,transformer"})}
STYLE_BACKENDS = tuple(STYLE_CLASSIFIERS)
CONTENT = ("bleu", "chrf", "meteor", "rougeL", "wmd", "sbert", "bertscore_p", "bertscore_r", "bertscore_f1")
MODIFICATIONS = ("none", "mask", "erase")
NATURALNESS = ("kn3", "smollm2", "unigram", "unigram-pooled")
JUDGES = ("cond_lp", "judge_style", "judge_content", "judge_fluency")
# The one template per LM metric scored on Mir: each the best at sentence level on Lai, where every template was
# scored (chosen on one dataset, confirmed on the other; scoring them all on Mir's 2,928 rows takes an hour on 2 cores).
MIR_TEMPLATES = {"cond_lp": 3, "judge_style": 3, "judge_content": 1, "judge_fluency": 2}
# Human-written text for the naturalness scorers: a seeded sample keeps the cross-fitted classifiers cheap.
HUMAN_SAMPLE = 20000


def ratings_of(spec: RatedSet, *, primary: bool = False) -> tuple[Rating, ...]:
    """The set's judged ratings; ``primary``: only each aspect's first (Lai's content vs the input, not the
    reference)."""
    judged = [q for q in spec.judged if not primary or q is next(p for p in spec.judged if p.aspect == q.aspect)]
    return tuple(Rating(q.column, q.aspect) for q in judged)


MIR_RATINGS = ratings_of(MIR, primary=True)
LAI_RATINGS = ratings_of(LAI, primary=True)
Log = Callable[[str], None]


@dataclass
class RatedRun:
    """A rated dataset scored and meta-evaluated, with the facts a report should print."""

    name: str
    card: Scorecard
    result: MetaEvaluation
    notes: dict = field(default_factory=dict)


def _sample(texts: Sequence[str], size: int, seed: int) -> list[str]:
    if len(texts) <= size:
        return list(texts)
    keep = np.sort(np.random.default_rng(seed).choice(len(texts), size, replace=False))
    return [texts[i] for i in keep]


def style_classifiers(names: Sequence[str] = STYLE_BACKENDS) -> dict[str, object]:
    """The classifier specs of :data:`STYLE_CLASSIFIERS` named ``names``."""
    from tsteval.experiment.manifest.loader import ClassifierSpec

    return {name: ClassifierSpec(name, *STYLE_CLASSIFIERS[name], heldout=0.1) for name in names}


def _score(transfers: Transfers, corpus: Corpus, lexicon: object, human: list[str], seed: int,
           style_view: Transfers | None = None,
           templates: dict[str, int] | None = None, log: Log = print,
           language_model: str = "smollm2") -> Scorecard:
    """Style columns (on ``style_view`` when given), content at none, mask and erase, naturalness, the LM metrics
    of ``language_model`` (each template too), in one scorecard; ``@ref`` against the transfers' ``reference``
    column where they have one (the plan's)."""
    from tsteval.experiment.plan.plan import Plan
    from tsteval.experiment.run.execute import run
    from tsteval.metrics.content.references import has_references

    log(f"scoring {len(transfers.frame)} transfers: style {list(STYLE_BACKENDS)}, content {list(CONTENT)} x "
        f"{list(MODIFICATIONS)}{' + @ref' if has_references(transfers) else ''}, naturalness {list(NATURALNESS)}, "
        f"LM metrics {list(JUDGES)} with {language_model}")
    rest = Plan(transfers, content=CONTENT, modifications=MODIFICATIONS, lexicon=lexicon, naturalness=NATURALNESS,
                human=human, corpus=corpus, seed=seed, language_model=language_model,
                precision="fp32")  # the committed tables' precision, on every machine (docs/precision.md)
    card = run(rest)
    _lm_columns(card, rest, templates, log)
    style = run(Plan(style_view or transfers, classifiers=style_classifiers(), corpus=corpus, seed=seed))
    for column in style.metrics:
        card.add(column, style.frame[column].to_numpy(), style.signatures[column])
    return card


def _lm_columns(card: Scorecard, plan: object, templates: dict[str, int] | None, log: Log) -> None:
    """The LM metrics with each template's own column (``NAME@MODEL-tK``; only those of ``templates`` when
    given), the LM's fluency scores on the text as the dataset writes it (``@MODEL-asis``) beside the
    restored text's (``@MODEL``), and LogProp of every packaged LM
    (:func:`tsteval.metaeval.rated.lm_subset.score_logprop`)."""
    from tsteval.experiment.plan.plan import resource_options
    from tsteval.metaeval.rated.lm_subset import score_logprop  # imports this module
    from tsteval.metrics.judges.scorer import score_judges
    from tsteval.metrics.naturalness.lm_names import column_name
    from tsteval.metrics.naturalness.lm_scores import score_language_model
    from tsteval.metrics.resources import Resources

    start = time.perf_counter()
    resources = Resources(resource_options(plan))
    score_judges(card, JUDGES, resources, {}, plan.text_form, plan.style_name, plan.language_model,
                 each_template=templates is None, only=templates)
    lm = resources.get("language_model").value.fit_unigram(list(plan.human))
    score_language_model(card, lm, f"{column_name(plan.language_model)}-asis", text_form="as-is")
    log(f"LM metrics and {plan.language_model} as-is scores in {time.perf_counter() - start:.0f} s")
    score_logprop(card, plan, log=log)


def mir_materials(seed: int = 0, log: Log = print) -> tuple[Transfers, Corpus, list[str], dict]:
    """Mir et al.'s rated transfers, the Yelp training corpus without them, a seeded sample of its texts as the
    human text, and the corpus counts."""
    from tsteval.readers.mir import load_mir
    from tsteval.readers.yelp import load_yelp_corpus

    transfers = load_mir()
    corpus = load_yelp_corpus(exclude=set(transfers.frame["input"]))  # STYLE_CORPORA["yelp"]
    notes = {"training_texts": len(corpus), "excluded_lines": corpus.removed, "excluded_texts": corpus.removed_texts}
    log(f"Yelp training corpus: {len(corpus)} texts; removed {corpus.removed} lines carrying "
        f"{corpus.removed_texts} of the rated inputs")
    return transfers, corpus, _sample(corpus.texts, HUMAN_SAMPLE, seed), notes


def score_mir(seed: int = 0, log: Log = print, language_model: str = "smollm2",
              templates: dict[str, int] | None = None) -> tuple[Scorecard, dict]:
    """Mir et al.'s rated transfers scored by every applicable metric, the LM metrics with one template each
    (``templates``, default :data:`MIR_TEMPLATES`); notes: the training-corpus counts."""
    transfers, corpus, human, notes = mir_materials(seed, log)
    lexicon = dataset_dir("mir2019") / "style_lexicon" / "style_words_and_weights.json"
    card = _score(transfers, corpus, lexicon, human, seed, templates=templates or MIR_TEMPLATES, log=log,
                  language_model=language_model)
    return card, notes


def lai_training_corpus(rated: Transfers, drop_parallel: bool = True,
                        columns: Sequence[str] = ("input", "reference")) -> tuple[Corpus, dict]:
    """Formal/informal text from DualRL's GYAFC test sets and references, minus every text of the rated set's
    ``columns`` (Lai's inputs and references) and every line parallel to one.

    DualRL: ``test.0`` formal, ``test.1`` informal; ``reference{k}.0`` are informal rewrites of the formal test
    inputs, ``reference{k}.1`` formal rewrites of the informal ones; line i of ``test.S`` and of every
    ``reference{k}.S`` is one item.  An item holding a rated text (an input or reference of Lai's, matched by
    :func:`~tsteval.core.text_form.match_key`) is dropped whole: its other lines are rewrites of that text,
    near-copies of what is scored
    (``drop_parallel=False``: only the lines matching a rated text, as before, for comparison).
    """
    from tsteval.readers.lines import read_lines

    drop = {match_key(t) for column in columns for t in rated.frame[column]}
    data, refs = dataset_dir("dualrl") / "data" / "GYAFC", dataset_dir("dualrl") / "references" / "GYAFC"
    files = {"formal": [(data / "test.0", "0"), *((refs / f"reference{k}.1", "1") for k in range(4))],
             "informal": [(data / "test.1", "1"), *((refs / f"reference{k}.0", "0") for k in range(4))]}
    lines: list[tuple[str, str, int, str]] = []  # (text, style, item, side)
    for style, paths in files.items():
        for path, side in paths:
            lines += [(line, style, item, side) for item, line in enumerate(read_lines(path))]
    rated_items = {(side, item) for line, _, item, side in lines if match_key(line) in drop}
    texts, labels, removed, parallel, seen = [], [], 0, 0, set()
    for line, label, item, side in lines:
        key = match_key(line)
        if key in drop:
            removed += 1
            seen.add(key)
        elif drop_parallel and (side, item) in rated_items:
            parallel += 1
        else:
            texts.append(line)
            labels.append(label)
    notes = {"training_texts": len(texts), "excluded_lines": removed, "excluded_texts": len(seen),
             "rated_texts": len(drop), "excluded_parallel_lines": parallel}
    return Corpus(texts, labels, str(data)), notes


def dualrl_form(transfers: Transfers) -> Transfers:
    """The transfers with input and output written as DualRL's GYAFC is (:func:`tokenise_lowercase`)."""
    frame = transfers.frame.copy()
    for column in ("input", "output"):
        frame[column] = [tokenise_lowercase(t) for t in frame[column]]
    return Transfers(frame, transfers.origin)


def lai_materials(seed: int = 0, log: Log = print) -> tuple[Transfers, Corpus, list[str], dict]:
    """Lai et al.'s rated transfers, the GYAFC training corpus without them (:func:`lai_training_corpus`), a seeded
    sample of its formal texts as the human text, and the corpus counts."""
    from tsteval.readers.lai import load_lai

    transfers = load_lai()
    corpus, notes = lai_training_corpus(transfers)
    log(f"GYAFC training corpus (DualRL test sets + references): {notes['training_texts']} texts; removed "
        f"{notes['excluded_lines']} lines matching {notes['excluded_texts']} of the {notes['rated_texts']} distinct "
        f"Lai inputs and references and {notes['excluded_parallel_lines']} lines parallel to them")
    formal = [t for t, label in zip(corpus.texts, corpus.labels, strict=True) if label == "formal"]
    return transfers, corpus, _sample(formal, HUMAN_SAMPLE, seed), notes


def score_lai(seed: int = 0, log: Log = print, language_model: str = "smollm2") -> tuple[Scorecard, dict]:
    """Lai et al.'s rated transfers scored by every applicable metric (``@ref`` against their reference)."""
    from tsteval.experiment.manifest.loader import LexiconSpec

    transfers, corpus, human, notes = lai_materials(seed, log)
    card = _score(transfers, corpus, LexiconSpec(), human, seed, style_view=dualrl_form(transfers), log=log,
                  language_model=language_model)
    notes["published"] = transfers.extra["published"]
    return card, notes


def _yelp_corpus(rated: Ratings) -> tuple[Corpus, dict]:
    from tsteval.readers.yelp import load_yelp_corpus

    corpus = load_yelp_corpus(exclude={t for c in rated.spec.keep_out for t in rated.frame[c]})
    return corpus, {"training_texts": len(corpus), "excluded_lines": corpus.removed,
                    "excluded_texts": corpus.removed_texts}


def _gyafc_corpus(rated: Ratings) -> tuple[Corpus, dict]:
    return lai_training_corpus(rated.transfers, columns=rated.spec.keep_out)


def _detox_corpus(rated: Ratings) -> tuple[Corpus, dict]:
    """Dale et al.'s toxic and normal comments without any rated text of the detoxification sets (nor the set's own
    ``keep_out`` texts), labelled with the set's own styles: ``toxic`` its source, ``normal`` its target."""
    from tsteval.readers.detox import load_detox_corpus, rated_texts

    exclude = set().union(*rated_texts().values(), *(rated.frame[c] for c in rated.spec.keep_out))
    corpus = load_detox_corpus(exclude)
    frame = rated.transfers.frame
    names = {"toxic": frame["source_style"].iloc[0], "normal": frame["target_style"].iloc[0]}
    labelled = Corpus(corpus.texts, [names[label] for label in corpus.labels], corpus.origin)
    return labelled, {"training_texts": len(corpus), "excluded_lines": corpus.removed,
                      "excluded_texts": corpus.removed_texts}


# Style training corpora by the name a declaration gives (RatedSet.style_corpus): each leaves out the set's texts.
STYLE_CORPORA: dict[str, Callable[[Ratings], tuple[Corpus, dict]]] = {"yelp": _yelp_corpus, "gyafc": _gyafc_corpus,
                                                                      "detox2021": _detox_corpus}


def score_declared(rated: Ratings, seed: int = 0, log: Log = print,
                   language_model: str = "smollm2") -> tuple[Scorecard, dict]:
    """A set other than Mir's and Lai's: the content columns (no style masking: no lexicon is declared), the LM's
    fluency where the set rates naturalness, and style columns where its declaration names a training corpus."""
    from tsteval.experiment.plan.plan import Plan
    from tsteval.experiment.run.execute import run

    spec, transfers = rated.spec, rated.transfers
    aspects = {q.aspect for q in spec.judged}
    naturalness = (language_model,) if "naturalness" in aspects else ()
    log(f"scoring {len(transfers.frame)} transfers of {spec.name}: content {list(CONTENT)}"
        f"{f', naturalness {list(naturalness)}' if naturalness else ''}")
    card = run(Plan(transfers, content=CONTENT, modifications=("none",), naturalness=naturalness, seed=seed,
                    language_model=language_model, precision="fp32",
                    language=spec.language))  # each metric whose model lacks the set's language says so
    notes: dict = {}
    if "style" not in aspects:
        return card, notes
    if spec.style_corpus is None:
        notes["style"] = (f"style not scored: the {spec.name} declaration names no style training corpus yet "
                          "(RatedSet.style_corpus, an entry of tsteval.metaeval.rated.datasets.STYLE_CORPORA)")
        log(notes["style"])
        return card, notes
    corpus, counts = STYLE_CORPORA[spec.style_corpus](rated)
    notes.update(counts)
    style = run(Plan(transfers, classifiers=style_classifiers(), corpus=corpus, seed=seed))
    for column in style.metrics:
        card.add(column, style.frame[column].to_numpy(), style.signatures[column])
    return card, notes


def rated_dataset(name: str, *, n_resamples: int = N_RESAMPLES, seed: int = 0, log: Log = print,
                  language_model: str = "smollm2", mir_templates: dict[str, int] | None = None,
                  cache: Path | None = None) -> RatedRun:
    """Score the rated set ``name`` (any of :func:`~tsteval.readers.rated_sets.rated_set_names`) and meta-evaluate
    every column against each of its judged ratings, the raters' agreement in ``notes["agreement"]`` (the LM metrics
    with ``language_model``; Lai scores every template, Mir one per metric: ``mir_templates``, default
    :data:`MIR_TEMPLATES`, chosen on Lai with SmolLM2).  With ``cache`` (a folder) the scorecard is kept there and
    read back by a rerun over the same rows with the same LM, templates and seed
    (:mod:`~tsteval.metaeval.rated.card_cache`)."""
    from tsteval.metaeval.rated.card_cache import load_cached, save_cached
    from tsteval.metaeval.rated.rater_agreement import rated_agreement

    spec = rated_set(name)
    rated = read_rated_set(spec)
    key = {"set": name, "language_model": language_model, "seed": seed,
           "templates": (mir_templates or MIR_TEMPLATES) if name == "mir" else None}
    cached = load_cached(cache, rated.frame, key) if cache is not None else None
    if cached is not None:
        card, notes = cached
        log(f"{name}: the scores read from {cache} (delete it to score again)")
    else:
        start = time.perf_counter()
        if name == "mir":
            card, notes = score_mir(seed, log, language_model, mir_templates)
        elif name == "lai":
            card, notes = score_lai(seed, log, language_model)
        else:
            card, notes = score_declared(rated, seed, log, language_model)
        notes["scoring_seconds"] = round(time.perf_counter() - start, 1)  # kept with the cached scores
        if cache is not None:
            save_cached(cache, card, key, notes)
    published = [MetricColumn(column, aspect, higher, spec.citation or spec.title)
                 for column, (aspect, higher) in notes.pop("published", {}).items()]
    baselines = {q.column: q.baseline for q in spec.judged if q.baseline}
    scored = {c.aspect for c in (*registered_columns(card), *published)}
    ratings = [r for r in ratings_of(spec) if scored & set(JUDGED_BY[r.aspect])]  # a style rating needs a style column
    result = meta_evaluate(card, ratings, baselines=baselines, published=published, n_resamples=n_resamples,
                           seed=seed)
    notes["agreement"] = rated_agreement(rated, seed=seed)
    return RatedRun(name, card, result, notes)

