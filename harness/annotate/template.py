"""A study's questions, scale and instructions: a YAML file (default: ``template.yaml`` beside this module, after
Mir et al. 2019's three aspects on Li et al. 2018's 1-5 scales), checked once and hashed into the study's signature.

>>> t = load_template()
>>> [q.name for q in t.questions], t.scale, [q.aspect for q in t.questions]
(['style', 'content', 'fluency'], (1, 5), ['style', 'content', 'naturalness'])
>>> t.select(["fluency", "content"]).names
['content', 'fluency']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from tsteval.core.errors import InputError, quote
from tsteval.core.signature import content_hash

DEFAULT = Path(__file__).with_name("template.yaml")
ASPECTS = ("style", "content", "naturalness")
MAX_SCALE_POINTS = 101  # 0-100 (Lai et al.'s) is the widest scale a study takes


@dataclass(frozen=True)
class Question:
    """One question: its ``name`` (a ratings column), the meta-evaluation ``aspect`` it judges, its ``prompt``
    (``{target}`` is replaced by the target style's name) and labels of some scale points."""

    name: str
    aspect: str
    prompt: str
    anchors: dict[int, str]


@dataclass(frozen=True)
class Template:
    """The questions of a study, the integer ``scale`` (low, high) they share, the page's title and
    instructions, ``text``: the file as read (its hash is :attr:`hash`), and ``cant_judge``: the label of the answer
    "can't judge" that every question then offers beside the scale (stored as no value: not rated), or "" for
    none."""

    title: str
    instructions: str
    scale: tuple[int, int]
    questions: tuple[Question, ...]
    text: str
    cant_judge: str = ""

    @property
    def names(self) -> list[str]:
        """The question names in page order."""
        return [q.name for q in self.questions]

    @property
    def hash(self) -> str:
        """The content hash of the template's text and the questions asked."""
        return content_hash(self.text, self.names)

    def select(self, names: Sequence[str]) -> Template:
        """The template with only the questions ``names`` (kept in the template's order)."""
        unknown = [n for n in names if n not in self.names]
        if unknown:
            raise InputError(f"no question {unknown[0]!r} in the template; its questions are {self.names}",
                             fix="name template questions with --aspects, or give --template FILE")
        return replace(self, questions=tuple(q for q in self.questions if q.name in names))

    def question(self, name: str) -> Question:
        """The question called ``name``."""
        return next(q for q in self.questions if q.name == name)


def _scale(value: object, path: str) -> tuple[int, int]:
    if (not isinstance(value, list) or len(value) != 2 or not all(type(v) is int for v in value)
            or not 1 < value[1] - value[0] + 1 <= MAX_SCALE_POINTS):
        raise InputError(f"scale {quote(value)} is not [LOW, HIGH] of 2 to {MAX_SCALE_POINTS} integer points",
                         path=path, fix="write e.g. scale: [1, 5]")
    return value[0], value[1]


def parse_template(text: str, path: str = "<template>") -> Template:
    """The template written in ``text`` (YAML), every field checked; a bad one is one line naming ``path``."""
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        raise InputError(f"not valid YAML: {getattr(error, 'problem', None) or error}", path=path,
                         line=None if mark is None else mark.line + 1) from None
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list) or not data["questions"]:
        raise InputError("a template is a mapping with a non-empty list 'questions'", path=path,
                         fix=f"start from {DEFAULT}")
    scale = _scale(data.get("scale", [1, 5]), path)
    questions, seen = [], set()
    for number, q in enumerate(data["questions"], 1):
        if not isinstance(q, dict) or not all(isinstance(q.get(k), str) and q[k] for k in ("name", "aspect", "prompt")):
            raise InputError(f"question {number} needs the text fields name, aspect and prompt", path=path)
        if q["aspect"] not in ASPECTS or not q["name"].isidentifier() or q["name"] in seen:
            raise InputError(f"question {number} ({quote(q['name'])}): the name must be a new identifier and the "
                             f"aspect one of {list(ASPECTS)}, not {quote(q['aspect'])}", path=path)
        anchors = q.get("anchors") or {}
        if not isinstance(anchors, dict) or not all(type(k) is int and scale[0] <= k <= scale[1]
                                                    and isinstance(v, str) for k, v in anchors.items()):
            raise InputError(f"question {number}: anchors map points of the scale {list(scale)} to labels",
                             path=path)
        seen.add(q["name"])
        questions.append(Question(q["name"], q["aspect"], q["prompt"], dict(anchors)))
    cant_judge = data.get("cant_judge", "")
    if not isinstance(cant_judge, str):
        raise InputError(f"cant_judge {quote(cant_judge)} is not a label", path=path,
                         fix='write e.g. cant_judge: "can\'t judge", or leave it out')
    return Template(str(data.get("title", "Rate rewritten sentences")), str(data.get("instructions", "")), scale,
                    tuple(questions), text, cant_judge.strip())


def load_template(path: str | Path | None = None) -> Template:
    """The template in ``path`` (default :data:`DEFAULT`)."""
    path = Path(path) if path is not None else DEFAULT
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read the template: {getattr(error, 'strerror', None) or error}", path=path,
                         fix="give a readable UTF-8 YAML file to --template") from None
    return parse_template(text, str(path))
