"""The built-in rated sets, each one declaration (:class:`~tsteval.readers.rated_spec.RatedSet`) read by
:func:`tsteval.readers.rated.read_rated_set`.  Adding a set is a declaration here (or
:func:`register_rated_set` for one of your own) and a test.

Directions were checked against the data: every question below is higher-is-better.  CAE-T5's four questions
were read from the platform's own test questions (the ``_golden`` rows' accepted answers: an output of ``[mask]``
tokens must get content, fluency and acceptability 1; a near copy of the toxic input content 5 and politeness 1-3)
and from the 28 outputs that copy their input (content 3.1 against 2.1 for the rest; politeness 2.3 against 2.9);
the mean content rating per output is the ``human`` column of ``mis_benchmark/datasets/CAE.csv`` (but for the 12
outputs that were also test questions, whose every answer that file averages).
"""

from __future__ import annotations

from tsteval.core.errors import TstevalError, did_you_mean
from tsteval.readers.rated_spec import INPUT_NUMBER, RATER_INDEX, ROW, Question, RatedSet, RatingFile
from tsteval.readers.ratings import CATEGORICAL_RATINGS
from tsteval.readers.yelp import YELP_STYLES

MIR = RatedSet(
    name="mir", title="Mir et al. (2019)", task="sentiment", folder="mir2019",
    summary="Yelp sentiment transfer, 12 model settings x 244 inputs, mean of the raters (1-5)",
    files=(RatingFile("human_ratings.csv"),),
    fields={"input": "input", "output": "output", "system": "model", "item": "item", "source_style": "source_style",
            "target_style": "target_style"},
    hyperparameter=("param", "value"), systems=("CAAE", "ARAE", "DAR"), style_labels=YELP_STYLES,
    questions=(Question("style_intensity", "style", field="human_style_intensity"),
               Question("content_preservation", "content", field="human_content_preservation"),
               Question("naturalness_relative", field="human_naturalness_relative",
                        choices=CATEGORICAL_RATINGS["human_naturalness_relative"]),
               Question("naturalness_output", "naturalness", field="human_naturalness_output"),
               Question("naturalness_input", field="human_naturalness_input")),
    style_corpus="yelp", lexicon="style_lexicon/style_words_and_weights.json")


def _lai_file(path: str, question: str, tag: str) -> RatingFile:
    return RatingFile(path, layout="jsonl-systems", questions=(question,), rater_fields=("human_1", "human_2"),
                      published_tag=tag)


LAI = RatedSet(
    name="lai", title="Lai et al. (2022)", task="formality", folder="lai2022", scale=(0, 100),
    summary="GYAFC informal -> formal, 80 inputs x 9 outputs, two annotators (0-100)",
    files=(_lai_file("style.json", "style", "style"), _lai_file("content.src.json", "content_src", "src"),
           _lai_file("content.ref.json", "content_ref", "ref"), _lai_file("fluency.json", "fluency", "fluency")),
    fields={"input": "src", "output": "out", "reference": "ref", "system": "@system", "item": ROW},
    constants={"source_style": "informal", "target_style": "formal"},
    questions=(Question("style", "style"), Question("content_src", "content"),
               Question("content_ref", "content", baseline="bleu@ref"), Question("fluency", "naturalness")),
    keep_out=("input", "reference"), lower_is_better=frozenset({"wmd", "gpt2_ppl"}), style_corpus="gyafc",
    complete=True,
    citation="Lai et al. 2022")

_HALVES = (0.0, 0.5, 1.0)
TOX600 = RatedSet(
    name="tox600", title="Dale et al. (2021), Tox600", task="toxicity", folder="detox2021", scale=(0, 1),
    summary="English detoxification, 200 toxic inputs x 3 systems, 3 of 5 labellers an output (0 / 0.5 / 1)",
    files=(RatingFile("manual_markup/emnlp_eval_long.tsv"),),
    fields={"input": "original", "output": "rewritten", "system": "source", "item": "idx", "rater": "labeller"},
    constants={"source_style": "toxic", "target_style": "non-toxic"},
    systems=("condbert", "mask_infill", "paragedi"), complete=True,
    questions=(Question("style", "style", values=_HALVES), Question("meaning", "content", values=_HALVES),
               Question("fluency", "naturalness", values=_HALVES),
               Question("joint", product_of=("style", "meaning", "fluency"))),
    style_labels={"toxic": "toxic", "non-toxic": "non-toxic"}, style_corpus="detox2021")

_CAE_Q = "{}_the_candidate_rephrasing_{}"
_POINTS = (1.0, 2.0, 3.0, 4.0, 5.0)
CAE_T5 = RatedSet(
    name="cae_t5", title="Laugier et al. (2021), CAE-T5 crowd ratings", task="toxicity", folder="mis_benchmark",
    summary="civil rephrasing of toxic comments, 100 inputs x 5 systems, 5 crowd workers an output (1-5)",
    files=(RatingFile("source_data/cae_t5_figure_eight_ratings.csv", keep={"_golden": "false"}),),
    fields={"input": "original_toxic_comment", "output": "value", "system": "variable", "item": "id",
            "rater": "_worker_id"},
    constants={"source_style": "toxic", "target_style": "civil"},
    systems=("CA rephrasing", "CAET rephrasing", "IE rephrasing", "ST (cond) rephrasing", "ST (multi) rephrasing"),
    complete=True,
    questions=(Question("content", "content", values=_POINTS,
                        field=_CAE_Q.format("does", "preserve_the_nontoxic_content_from_the_original_comment")),
               Question("fluency", "naturalness", values=_POINTS, field=_CAE_Q.format("is", "fluent_in_english")),
               Question("politeness", "style", values=_POINTS, field=_CAE_Q.format("is", "text_a_polite_comment")),
               Question("acceptability", values=_POINTS,
                        field="we_also_ask_you_to_judge_the_overall_acceptability_of_the_rephrasing_if_it_appeared_in_"
                              "a_realworld_system")),
    style_labels={"toxic": "toxic", "civil": "civil"}, style_corpus="detox2021")


def _content(name: str, file: str, scale: tuple[float, float], summary: str, target: str) -> RatedSet:
    """A content-pair set of Babakov et al. (2022): ``text1`` the input, ``text2`` the output, ``human`` the mean
    similarity judgment; one system, one row an output; ``target``: what a rewrite of the set was asked to be, the
    target style an LM prompt names."""
    return RatedSet(
        name=name, title=f"Babakov et al. (2022), {file}", task="content", folder="mis_benchmark", scale=scale,
        summary=summary, files=(RatingFile(f"datasets/{file}.csv"),),
        fields={"input": "text1", "output": "text2", "item": ROW},
        constants={"system": "pairs", "source_style": "source", "target_style": "rewrite"},
        questions=(Question("content", "content", field="human"),), keep_out=("input", "output"),
        style_labels={"source": "the original", "rewrite": target})


# The target style an LM prompt names for each set (what its rewrites were asked to be; fixed before any LM score).
CONTENT_SETS = (
    _content("content_cae", "CAE", (1, 5), "CAE-T5 civil rephrasings of toxic comments, mean content (1-5)",
             "non-toxic"),
    _content("content_pg_yelp", "PG_YELP", (1, 5), "Pang & Gimpel (2019) Yelp sentiment transfers (1-5)",
             "of the opposite sentiment"),
    _content("content_tox600", "tox600", (0, 1), "Tox600's outputs, mean meaning (0-1)", "non-toxic"),
    _content("content_yamsh_bible", "yamsh_bible", (1, 5), "Yamshchikov et al. (2021) Bible versions (1-5)",
             "in the wording of another Bible translation"),
    _content("content_yamsh_gyafc", "yamsh_gyafc", (1, 5), "Yamshchikov et al. (2021) GYAFC, lower-cased (1-5)",
             "of the other formality"),
    _content("content_yamsh_yelp", "yamsh_yelp", (1, 5), "Yamshchikov et al. (2021) Yelp (1-5)",
             "of the opposite sentiment"),
    _content("content_yamsh_para", "yamsh_para", (1, 5), "Yamshchikov et al. (2021) paraphrase pairs (1-5)",
             "a paraphrase"),
)


_BINARY = (0.0, 1.0)
_RUSSE_SCORES = ("chrf", "wmt22-comet-da", "XCOMET-XL", "XCOMET-LITE", "XCOMET-XXL", "SIM-INPUT-GEN", "SIM-GEN-REF")
RUSSE2022 = RatedSet(
    name="russe2022", title="Dementieva et al. (2022), RUSSE-2022 detoxification", task="toxicity",
    folder="russe2022", scale=(0, 1), language="ru",
    summary="Russian detoxification, 875 toxic inputs x 5 systems, binary judgments aggregated per output (0 / 1)",
    files=(RatingFile("test_all_metrics_russe2022.csv", published_tag="authors",
                      published_aspects={**{name: "content" for name in _RUSSE_SCORES},
                                         "CLS_NEW_GEN": "style", "CLS_OLD_GEN": "style",
                                         **{f"CLS_{c}_{t}": None for c in ("NEW", "OLD") for t in ("INPUT", "REF")}}),),
    fields={"input": "original", "output": "method_output", "system": "participant_name", "item": INPUT_NUMBER,
            "reference": "neutral_sentence_reference"},
    constants={"source_style": "toxic", "target_style": "non-toxic"},
    systems=("anton_alexandrovich", "barracudas", "ekaterina_totmina", "orzhan", "ruprompts"), complete=True,
    questions=(Question("content", "content", values=_BINARY), Question("fluency", "naturalness", values=_BINARY),
               Question("non_toxicity", "style", field="non-toxicity", values=_BINARY),
               Question("J", values=_BINARY)),
    keep_out=("input", "output", "reference"), style_labels={"toxic": "toxic", "non-toxic": "non-toxic"},
    citation="RUSSE-2022 authors")

# InFormal's three answers and their numbers, as its README gives them.
INFORMAL_SIMILARITY = {"Approximately Same Meaning": 1.0, "Slight Difference in Meaning": 0.5,
                       "Different Meaning": 0.0}
INFORMAL_CHOICES = ("candidate_0", "Equal", "candidate_1")
INFORMAL_LANGUAGES = {"hi": "Hindi", "te": "Telugu", "kn": "Kannada", "bn": "Bengali"}


def _informal(language: str) -> RatedSet:
    """InFormal in one language: a pair of sentences a line (which one is the transfer is not marked), three crowd
    workers' similarity (text answers, 1 / 0.5 / 0) and which of the two is more formal (a pairwise choice); the
    authors' LaBSE similarity beside.  One set per language: each is its own file, raters and language."""
    return RatedSet(
        name=f"informal_{language}", title=f"Krishna et al. (2022), InFormal {INFORMAL_LANGUAGES[language]}",
        task="formality", folder="informal", scale=(0, 1), language=language,
        summary=f"{INFORMAL_LANGUAGES[language]} formality-transfer pairs, three crowd workers a pair: similarity "
                "(1 / 0.5 / 0) and which is more formal",
        files=(RatingFile(f"{language}_annotations.jsonl", layout="jsonl", rater_list="annotations",
                          published_tag="authors"),),
        fields={"input": "candidate_0", "output": "candidate_1", "item": ROW, "rater": RATER_INDEX},
        constants={"system": "pairs", "source_style": "candidate_0", "target_style": "candidate_1"},
        questions=(Question("similarity", "content", field="semantic_similarity", labels=INFORMAL_SIMILARITY),
                   Question("more_formal", field="formal_sent", choices=INFORMAL_CHOICES)),
        keep_out=("input", "output"), citation="Krishna et al. 2022")


INFORMAL_SETS = tuple(_informal(language) for language in INFORMAL_LANGUAGES)

_REGISTRY: dict[str, RatedSet] = {s.name: s for s in (MIR, LAI, TOX600, CAE_T5, *CONTENT_SETS, RUSSE2022,
                                                      *INFORMAL_SETS)}


def register_rated_set(spec: RatedSet) -> None:
    """Make ``spec`` readable by name (``read_rated_set(spec.name)``); a name already taken is an error."""
    if spec.name in _REGISTRY:
        raise TstevalError(f"a rated set named {spec.name!r} exists already")
    _REGISTRY[spec.name] = spec


def rated_set_names() -> list[str]:
    """The names of the rated sets, built-in first."""
    return list(_REGISTRY)


def rated_set(name: str) -> RatedSet:
    """The declaration of the rated set ``name``; an unknown name is one line listing them."""
    if name not in _REGISTRY:
        raise TstevalError(f"unknown rated set {name!r}; choose from {rated_set_names()}"
                           f"{did_you_mean(name, rated_set_names(), '; ')}")
    return _REGISTRY[name]
