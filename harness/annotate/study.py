"""A rating study: a folder holding the blind sample of a scored run (``pairs.csv``), the questions
(``template.yaml``), ``study.json`` (the settings and the signature) and the ratings database (``ratings.sqlite``).

:func:`plan_study` samples ``items`` inputs of the run, stratified by direction (each direction gets its share of the
inputs, in proportion to its inputs in the run), and takes every chosen system's output of each: one *pair* per
(input, system).  Two quality controls are added, each a pair of its own:

* **repeats** (``r:ID``): a pair shown a second time, later in the annotator's order, to measure how consistently
  each annotator rates the same thing;
* **checks** (``c:ID``): the input itself as the output (an unchanged copy), whose content answer is known: the top
  of the scale.  An annotator who rates it low is not reading.

With ``overlap`` (a share, ``--overlap 0.2``), that share of the rated pairs gets an **overlap copy** (``o:ID``): the
same pair again, for a second annotator where each pair goes to one worker (a crowdsourcing platform's batch; invited
annotators rate every pair anyway and are not shown them).  A copy's rating is a second rating of its pair
(:meth:`Study.rated`), which makes the split-half reliability of a one-rater-per-item design measurable.

Where the run carries a human reference for its inputs (a ``reference`` column), each sampled input also gets its
reference as a pair (``h:ID``, system ``reference``): the ratings a human rewrite earns, beside the systems'.

An output identical to another chosen system's output for the same input is no pair of its own to rate (kind
``identical``, ``of`` the pair it equals): annotators rate the text once, and meta-evaluation counts that rating
for each system (:attr:`Study.rated_as`).

Annotators never see system names; each gets the pairs in an order of their own (seeded).  Texts are shown as a
person writes them: a run of tokenised, lower-cased text (``sir , the slip .``) is shown detokenised and
sentence-cased (``Sir, the slip.``; :meth:`Study.display`), while ``pairs.csv`` keeps the run's texts, which
meta-evaluation joins on.  Quality-control pairs are
left out of the ratings meta-evaluation reads.  :meth:`Study.open`, which every command reading a study goes
through, refuses a folder whose template or sample is not as planned (the signature no longer holds).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.annotate.store import Store
from tsteval.annotate.template import Template, load_template, parse_template
from tsteval.core.errors import InputError, TstevalError
from tsteval.core.records import DEFAULT_SETTING
from tsteval.core.signature import content_hash, package_version
from tsteval.core.text_form import TEXT_FORMS, as_written, restore

KIND = "study"
KEYS = ("system", "setting", "item", "source_style", "target_style")
DIRECTION = ("source_style", "target_style")
PAIR_COLUMNS = ["pair_id", "kind", "of", *KEYS, "target_name", "input", "output"]


@dataclass
class Study:
    """An opened study folder."""

    path: Path
    info: dict
    template: Template
    pairs: pd.DataFrame

    @classmethod
    def open(cls, path: str | Path) -> Study:
        """Open the study folder ``path`` (made by :func:`plan_study`)."""
        path = Path(path)
        if not (path / "study.json").is_file():
            raise InputError("not a study folder (no study.json)", path=path,
                             fix="make one with tsteval annotate plan RUN --out STUDY")
        from tsteval.core.errors import read_json

        info = read_json(path / "study.json", "study description")
        template = parse_template((path / "template.yaml").read_text(encoding="utf-8"), str(path / "template.yaml"))
        template = template.select(info["questions"])
        if template.hash != info["template"]:
            raise InputError(f"the questions are not those the study was planned with (template {template.hash}, "
                             f"planned {info['template']})", path=path / "template.yaml",
                             fix="restore the planned template.yaml (ratings answer its questions), or plan a new "
                                 "study")
        pairs = read_pairs(path)
        if signature(info, pairs) != info["signature"]:
            edited = _edited(info, pairs)
            what = {"pairs.csv": "the pairs are not the sample", "study.json": "the settings are not those"}
            raise InputError(f"{what.get(edited, 'the settings or the pairs are not those')} the study was planned "
                             f"with (its signature {info['signature']} no longer holds)",
                             path=path / edited if edited in what else path,
                             fix="restore the planned pairs.csv and study.json (ratings belong to the texts "
                                 "annotators saw), or plan a new study")
        return cls(path, info, template, pairs)

    def store(self) -> Store:
        """The ratings database."""
        return Store(self.path / "ratings.sqlite")

    @property
    def pair_ids(self) -> list[str]:
        """Every pair's id, quality controls and overlap copies included."""
        return self.pairs["pair_id"].tolist()

    def display(self, text: str) -> str:
        """``text`` as annotators are shown it: detokenised and sentence-cased where the study's texts are
        tokenised and lower-cased (``study.json``'s ``shown``, decided at planning:
        :func:`tsteval.core.text_form.as_written`), else as written in the run."""
        return restore(text) if self.info.get("shown") == "tokenised-lowercase" else text

    @property
    def shown_pairs(self) -> pd.DataFrame:
        """The pairs annotators are shown: every pair but those identical to another system's output for the same
        input (rated once, as that pair)."""
        return self.pairs[self.pairs["kind"] != "identical"]

    @property
    def invited_pair_ids(self) -> list[str]:
        """The pairs an invited annotator rates: every pair shown but the overlap copies (they rate every pair)."""
        return self.shown_pairs.loc[self.shown_pairs["kind"] != "overlap", "pair_id"].tolist()

    @property
    def rated_as(self) -> pd.Series:
        """Each pair meta-evaluation reads (``rated`` and ``identical``) -> the pair whose ratings it takes: itself,
        or for an output identical to another system's for the same input, that system's pair."""
        judged = self.pairs[self.pairs["kind"].isin(["rated", "identical"])].set_index("pair_id")
        return judged["of"].where(judged["kind"] == "identical", judged.index.to_series())

    def rated(self, ratings: pd.DataFrame) -> pd.DataFrame:
        """``ratings`` (annotator, pair_id, question, value) of the rated pairs, each rating of an overlap copy
        ``o:ID`` counted as a rating of ``ID`` unless its annotator rated ``ID`` too (then it repeats theirs)."""
        pairs = self.pairs.set_index("pair_id")
        kind = ratings["pair_id"].map(pairs["kind"])
        first = ratings[kind == "rated"]
        second = ratings[(kind == "overlap") & ~self.own(ratings)]
        return pd.concat([first, second.assign(pair_id=second["pair_id"].map(pairs["of"]))], ignore_index=True)

    def own(self, ratings: pd.DataFrame) -> pd.Series:
        """Per rating of ``ratings``: whether it is of a pair that copies another (a repeat ``r:ID``, an overlap copy
        ``o:ID``) and its annotator rated ``ID`` on that question too; a repeat's consistency rests on these, an
        overlap copy's second rating on the others."""
        of = ratings["pair_id"].map(self.pairs.set_index("pair_id")["of"]).fillna("")
        keys = ["annotator", "pair_id", "question"]
        firsts = pd.MultiIndex.from_frame(ratings[keys])
        return pd.Series(pd.MultiIndex.from_frame(ratings[keys].assign(pair_id=of)).isin(firsts) & (of != ""),
                         index=ratings.index)

    def check(self, question: str, pair_id: str, value: float | None) -> None:
        """Refuse a rating of an unknown ``question`` or off the scale (one line); None is the answer "can't judge",
        refused where the template offers none."""
        low, high = self.template.scale
        if question not in self.template.names:
            raise InputError(f"pair {pair_id}: no question {question!r} in this study ({self.template.names})")
        if value is None and self.template.cant_judge:
            return
        if value is None:
            raise InputError(f"pair {pair_id}: the {question} rating is missing, and this study's template offers no "
                             "\"can't judge\" (cant_judge)")
        if not (isinstance(value, (int, float)) and not isinstance(value, bool) and low <= value <= high
                and float(value).is_integer()):
            raise InputError(f"pair {pair_id}: the {question} rating {value!r} is not a whole number from {low} "
                             f"to {high}")


def read_pairs(folder: Path) -> pd.DataFrame:
    """The sample of the study folder ``folder`` (``pairs.csv``), every cell as written."""
    return pd.read_csv(folder / "pairs.csv", dtype=str, keep_default_na=False)


def sample_hash(pairs: pd.DataFrame) -> str:
    """The hash of a study's sample as :func:`read_pairs` reads it (``study.json``'s ``sample``)."""
    return content_hash(pairs.to_dict("list"))


def _edited(info: dict, pairs: pd.DataFrame) -> str:
    """Which file of a study whose signature no longer holds was edited: ``pairs.csv`` when the sample no longer
    hashes to the ``sample`` recorded in ``study.json``, else ``study.json``; both names where the study predates
    that record."""
    if "sample" not in info:
        return "study.json or pairs.csv"
    return "pairs.csv" if sample_hash(pairs) != info["sample"] else "study.json"


def signature(info: dict, pairs: pd.DataFrame) -> str:
    """A study's signature: the hash of its settings (``study.json`` but the signature, with the template's hash)
    and of its sample as :func:`read_pairs` reads it, so that it holds exactly while both are as planned."""
    return content_hash({k: v for k, v in info.items() if k != "signature"}, pairs.to_dict("list"))


def _sample_inputs(frame: pd.DataFrame, items: int, seed: int) -> pd.DataFrame:
    """``items`` inputs (distinct direction x item x input), stratified by direction."""
    inputs = frame.drop_duplicates([*DIRECTION, "item", "input"])[[*DIRECTION, "item", "input"]]
    if items > len(inputs):
        raise TstevalError(f"--items {items}: the run has only {len(inputs)} inputs")
    sizes = inputs.groupby(list(DIRECTION), sort=True).size()
    share = sizes / sizes.sum() * items
    take = np.floor(share).astype(int)
    for direction in (share - take).sort_values(ascending=False, kind="stable").index[:items - int(take.sum())]:
        take[direction] += 1
    rng = np.random.default_rng(seed)
    chosen = [group.iloc[np.sort(rng.choice(len(group), int(take[key]), replace=False))]
              for key, group in inputs.groupby(list(DIRECTION), sort=True)]
    return pd.concat(chosen, ignore_index=True)


def plan_study(run: str | Path, out: str | Path, *, items: int = 50, questions: Sequence[str] | None = None,
               systems: Sequence[str] | None = None, seed: int = 0, repeats: int | None = None,
               checks: int | None = None, overlap: float = 0.0, template: str | Path | None = None,
               text_form: str = "auto", overwrite: bool = False) -> Study:
    """Sample a study from the scored run ``run`` into the new folder ``out`` (see the module notes).

    ``repeats`` and ``checks`` default to 5% of the pairs each (at least 1, at most 10); ``overlap`` is the share of
    the rated pairs that get an overlap copy (none by default).  ``text_form`` says how the run's texts are written
    (:data:`tsteval.core.text_form.TEXT_FORMS`; ``auto``: detected): tokenised, lower-cased text is shown to
    annotators detokenised and sentence-cased (:meth:`Study.display`).
    """
    from tsteval.core.atomic import check_output_directory, output_directory
    from tsteval.metaeval.tables import load_card

    check_output_directory(out, KIND, overwrite)
    card, origin = load_card(run)
    chosen = load_template(template)
    chosen = chosen.select(questions) if questions else chosen
    frame = card.frame.copy()
    frame["setting"] = frame["setting"].astype(str) if "setting" in frame else DEFAULT_SETTING
    available = sorted(frame["system"].astype(str).unique())
    systems = list(systems) if systems else available
    unknown = [s for s in systems if s not in available]
    if unknown:
        raise InputError(f"no system {unknown[0]!r} in the run; its systems are {available}", path=origin,
                         fix="name systems of the run with --systems")
    if items < 1:
        raise TstevalError(f"--items must be at least 1, not {items}")
    if not 0 <= overlap <= 1:
        raise TstevalError(f"--overlap must be a share of the pairs from 0 to 1 (0.2: a fifth), not {overlap}")
    frame = frame[frame["system"].astype(str).isin(systems)]
    inputs = _sample_inputs(frame, items, seed)
    keys = [*DIRECTION, "item", "input"]
    rows = frame.merge(inputs, on=keys).sort_values([*DIRECTION, "item", "system", "setting"], kind="stable")
    rows = rows.astype({k: str for k in KEYS}).reset_index(drop=True)
    if "target_name" not in rows:
        rows["target_name"] = rows["target_style"]
    rows.insert(0, "pair_id", [f"p{i + 1:04d}" for i in range(len(rows))])
    first = rows.groupby([*keys, "output"], sort=False)["pair_id"].transform("first")
    rows["kind"], rows["of"] = np.where(first != rows["pair_id"], "identical", "rated"), first.where(
        first != rows["pair_id"], "")
    judged = rows[rows["kind"] == "rated"]
    default = int(min(10, max(1, round(0.05 * len(judged)))))
    rng = np.random.default_rng([seed, 1])
    again = judged.iloc[np.sort(rng.choice(len(judged), min(len(judged), default if repeats is None else repeats),
                                           replace=False))]
    again = again.assign(kind="repeat", of=again["pair_id"], pair_id="r:" + again["pair_id"])
    firsts = rows.drop_duplicates(keys)
    copies = firsts.iloc[np.sort(rng.choice(len(firsts), min(len(firsts), default if checks is None else checks),
                                            replace=False))]
    copies = copies.assign(kind="check", of="", pair_id="c:" + copies["pair_id"], output=copies["input"],
                           system="check:copy")
    references = firsts.iloc[0:0]
    if "reference" in firsts and firsts["reference"].notna().all() and (firsts["reference"] != "").all():
        references = firsts.assign(kind="reference", of="", pair_id="h:" + firsts["pair_id"],
                                   output=firsts["reference"], system="reference")
    second = judged.iloc[np.sort(np.random.default_rng([seed, 2]).choice(len(judged), round(overlap * len(judged)),
                                                                          replace=False))]
    second = second.assign(kind="overlap", of=second["pair_id"], pair_id="o:" + second["pair_id"])
    pairs = pd.concat([rows, again, copies, references, second], ignore_index=True)[PAIR_COLUMNS]
    if text_form not in TEXT_FORMS:
        raise TstevalError(f"--text-form {text_form!r}: choose from {list(TEXT_FORMS)}")
    _, shown = as_written([*pairs["input"].unique(), *pairs["output"].unique()], text_form)
    info = {"run": str(run), "run_rows": len(card.frame), "items": items, "systems": systems, "seed": seed,
            "questions": chosen.names, "aspects": {q.name: q.aspect for q in chosen.questions},
            "scale": list(chosen.scale), "pairs": len(judged), "identical": int((rows["kind"] == "identical").sum()),
            "repeats": len(again), "checks": len(copies), "references": len(references), "overlap": overlap,
            "overlaps": len(second), "template": chosen.hash,
            "check_answers": {"content": chosen.scale[1]}, "shown": shown, "tsteval": package_version("tsteval")}
    with output_directory(out, KIND, overwrite) as tmp:
        pairs.to_csv(tmp / "pairs.csv", index=False)
        info["sample"] = sample_hash(read_pairs(tmp))
        info["signature"] = signature(info, read_pairs(tmp))
        (tmp / "template.yaml").write_text(chosen.text, encoding="utf-8")
        (tmp / "study.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
        Store(tmp / "ratings.sqlite", create=True).close()
    return Study.open(out)

