"""The declaration of a rated set: which files hold its transfers and ratings, which field is which, the questions
with their aspects and scales, the raters, and the texts to keep out of any classifier's training.

A declaration is a frozen dataclass literal (no per-set code): :mod:`tsteval.readers.rated_sets` holds the built-in
ones and :func:`tsteval.readers.rated.read_rated_set` is the one reader.  Python literals rather than YAML/TOML files:
the declarations are type-checked and validated when the module is imported (a typo in a field name fails the test
suite, not a user's run), need no schema parser of their own, and a user can declare a set of their own in the same
form (:func:`tsteval.readers.rated_sets.register_rated_set`).

Field names (``fields``) map a *role* to a field of the file: ``input``, ``output``, ``system``, ``setting``,
``item``, ``rater``, ``reference``, ``source_style``, ``target_style``.  A role may be a constant instead
(``constants``); ``item`` may be ``"@row"``, the record's position in its file (0-based), or ``"@input"``, the
input's number in the order the inputs first appear (a file with one row per output and no input ids); ``rater`` may
be ``"@rater"``, an annotation's position in its record's list (``RatingFile.rater_list``: anonymous crowd workers).
Every role but ``reference`` and ``rater`` needs a field or a constant (``setting`` defaults to ``"default"``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

ROLES = ("input", "output", "system", "setting", "item", "rater", "reference", "source_style", "target_style")
ASPECTS = ("style", "content", "naturalness")
LAYOUTS = ("table", "jsonl", "jsonl-systems")
ROW = "@row"
INPUT_NUMBER = "@input"
RATER_INDEX = "@rater"
MEAN_RATER = "mean"


@dataclass(frozen=True)
class Question:
    """One human judgment of an output.

    ``name``: the study's question and the frame's column ``human_NAME``; ``field``: the file's field holding it
    (default ``name``); ``aspect``: the meta-evaluation aspect it judges (``style``, ``content``, ``naturalness``), or
    None for a judgment kept in the frame but not meta-evaluated (an overall score such as Tox600's ``joint``);
    ``scale``: its inclusive bounds (default: the set's); ``values``: the only values allowed, when the scale is
    discrete (1, 2, 3, 4, 5 or 0, 0.5, 1); ``labels``: answers written as text and their numbers (InFormal's
    "Slight Difference in Meaning" = 0.5); ``choices``: a categorical judgment (a pairwise one:
    ``input``/``tie``/``output``) kept as text, the majority choice per output (None on a tie), and coded as its
    position in ``choices`` in the per-rater table; ``baseline``: the meta-evaluation baseline column of this rating
    (default: the aspect's); ``judged``: meta-evaluated and imported into the set's study (default: when it has an
    aspect and no choices); ``product_of``: not read but computed, per rater, as the product of these questions'
    values in the same row (Dale et al.'s joint score, whose released column holds a typo: 1.25 for 0.125).
    """

    name: str
    aspect: str | None = None
    field: str | None = None
    scale: tuple[float, float] | None = None
    values: tuple[float, ...] | None = None
    labels: Mapping[str, float] = dataclasses.field(default_factory=dict)  # ``field`` is a field's name here
    choices: tuple[str, ...] | None = None
    baseline: str | None = None
    judged: bool | None = None
    product_of: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.aspect is not None and self.aspect not in ASPECTS:
            raise ValueError(f"question {self.name!r}: aspect {self.aspect!r} is not one of {ASPECTS}")
        if not self.name.isidentifier():
            raise ValueError(f"question {self.name!r}: the name must be an identifier")

    @property
    def source(self) -> str:
        """The file's field holding this question."""
        return self.field or self.name

    @property
    def column(self) -> str:
        """The frame's column: ``human_NAME``."""
        return f"human_{self.name}"

    @property
    def is_judged(self) -> bool:
        """Meta-evaluated and imported into studies."""
        return self.judged if self.judged is not None else (self.aspect is not None and self.choices is None)


@dataclass(frozen=True)
class RatingFile:
    """One file of a rated set, relative to its folder.

    ``layout``: ``table`` (CSV, or TSV for ``.tsv``; a header row; one row per output, or per output and rater when
    the set names a ``rater`` field), ``jsonl`` (one JSON object a line) or ``jsonl-systems`` (Lai et al.'s: one
    JSON object a line with the fields of the input, and ``sys`` mapping each system to an object with its output's
    fields: a row per system).  ``rater_list``: a JSON field holding a list of objects, one rater's answers each (a
    row per rater, the record's other fields shared).
    ``questions``: the names of the set's questions this file holds (default: all).  ``rater_fields``: fields each
    holding one rater's value of the file's question (raters side by side, e.g. ``human_1``, ``human_2``) instead of
    the question's own field.  ``keep``: only the rows whose field equals the value (e.g. ``{"_golden": "false"}``
    leaves out a crowd platform's test questions).  ``published_tag``: every other numeric field is the authors' own
    score of the file's aspect (or of ``published_aspects[FIELD]``; None leaves the field out, e.g. a classifier's
    score of the input), a column ``SET.FIELD@TAG``.
    """

    path: str
    layout: str = "table"
    questions: tuple[str, ...] | None = None
    rater_fields: tuple[str, ...] = ()
    keep: Mapping[str, str] = field(default_factory=dict)
    published_tag: str | None = None
    published_aspects: Mapping[str, str | None] = field(default_factory=dict)
    rater_list: str | None = None

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ValueError(f"file {self.path!r}: layout {self.layout!r} is not one of {LAYOUTS}")
        if self.rater_list is not None and self.layout != "jsonl":
            raise ValueError(f"file {self.path!r}: a rater_list needs the jsonl layout")


@dataclass(frozen=True)
class RatedSet:
    """The declaration of one rated set (see the module notes).

    ``folder``: its folder under the data root; ``task``: the task family (``sentiment``, ``formality``,
    ``toxicity``, ``content``: a content-pair set); ``language``: the texts' language (ISO 639-1);
    ``scale``: the default scale of the questions; ``systems``: the systems expected, in the frame's order (default:
    whatever the files hold, sorted); ``hyperparameter``: the fields holding a setting's hyperparameter name and
    value (the setting becomes ``NAME=VALUE`` and the column ``hp.NAME``); ``style_labels``: what each style label
    means; ``keep_out``: the frame's text columns that no classifier may be trained on; ``style_corpus``: the name of
    the corpus its style classifiers are trained on (an entry of
    :data:`tsteval.metaeval.rated.datasets.STYLE_CORPORA`), None while there is none (no style column is scored);
    ``lexicon``: the authors' published style lexicon, a file under ``folder`` (a study's ``lexicon: published``);
    ``lower_is_better``: the published fields that are lower-is-better; ``complete``: every input has an output
    of every system (and setting), and every output a rating of every judged question (checked); ``citation``: how
    the tables cite its published scores (default: the title); ``summary``: one line for the docs.
    """

    name: str
    title: str
    task: str
    folder: str
    files: tuple[RatingFile, ...]
    questions: tuple[Question, ...]
    fields: Mapping[str, str]
    constants: Mapping[str, str] = field(default_factory=dict)
    scale: tuple[float, float] = (1, 5)
    language: str = "en"
    systems: tuple[str, ...] | None = None
    hyperparameter: tuple[str, str] | None = None
    style_labels: Mapping[str, str] = field(default_factory=dict)
    keep_out: tuple[str, ...] = ("input",)
    style_corpus: str | None = None
    lexicon: str | None = None
    lower_is_better: frozenset[str] = frozenset()
    complete: bool = False
    citation: str = ""
    summary: str = ""

    def __post_init__(self) -> None:
        unknown = (set(self.fields) | set(self.constants)) - set(ROLES)
        if unknown:
            raise ValueError(f"rated set {self.name!r}: unknown roles {sorted(unknown)}; the roles are {ROLES}")
        for role in ("input", "output", "system", "item", "source_style", "target_style"):
            if role not in self.fields and role not in self.constants:
                raise ValueError(f"rated set {self.name!r}: give the {role} a field or a constant")
        names = [q.name for q in self.questions]
        if len(set(names)) != len(names):
            raise ValueError(f"rated set {self.name!r}: a question name is repeated in {names}")
        for question in self.questions:
            if not set(question.product_of) <= set(names) - {question.name}:
                raise ValueError(f"rated set {self.name!r}: {question.name} is the product of unknown questions")
        for file in self.files:
            if not set(file.questions or ()) <= set(names):
                raise ValueError(f"rated set {self.name!r}: {file.path} names unknown questions")

    def question(self, name: str) -> Question:
        """The question called ``name``."""
        return next(q for q in self.questions if q.name == name)

    def file_questions(self, file: RatingFile) -> tuple[Question, ...]:
        """The questions ``file`` holds."""
        return self.questions if file.questions is None else tuple(self.question(n) for n in file.questions)

    def scale_of(self, question: Question) -> tuple[float, float]:
        """``question``'s scale, else the set's."""
        return question.scale or self.scale

    @property
    def judged(self) -> tuple[Question, ...]:
        """The questions meta-evaluated and imported into studies."""
        return tuple(q for q in self.questions if q.is_judged)

    @property
    def has_raters(self) -> bool:
        """Whether each rater's own value is in the files (not only a per-output mean)."""
        return "rater" in self.fields or any(f.rater_fields for f in self.files)
