"""De Mattei et al.'s (2020) compliancy score: classifier-based consistency checks on every transfer.

A transfer ``x -> x'`` is *compliant* when all three hold:

* HH: the pair classifier says ``x'`` matches ``x`` in content;
* AH: the pair classifier says ``x'`` matches the source document of ``x`` (skipped, and reported as missing,
  when there are no documents: the score is then HH and Main only);
* Main: the style classifier's decision is reversed: the predicted style of ``x'`` is the target style and
  differs from the predicted style of ``x``.

Beside them, BLEU and ROUGE-L against the input (and against references, when the frame has reference columns).
:func:`compliancy_table` shapes the result like De Mattei et al.'s Table 2: one row per system and direction
plus an ``avg`` row, the mean of the directions (their ``avg`` rows are that mean).  BLEU there is corpus BLEU
on a 0-1 scale, as in their table; ROUGE is the mean sentence ROUGE-L F.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from sacrebleu.metrics import BLEU

from tsteval.classifiers.pairs import MATCH, PairClassifier
from tsteval.core import markdown as md
from tsteval.core.errors import InputError, LabelMismatchError
from tsteval.core.records import Transfers
from tsteval.core.tokenize import tokens_of
from tsteval.metrics.content.overlap import corpus_bleu, rouge_l, sentence_bleu
from tsteval.metrics.style.scorer import class_indices, predict_unique

TABLE_COLUMNS = ("HH", "AH", "Main", "Compl.")


def compliancy_decisions(hh: Sequence[bool], ah: Sequence[bool] | None, style_input: Sequence[str],
                         style_output: Sequence[str], target: Sequence[str]) -> pd.DataFrame:
    """The three checks and their conjunction per transfer; ``ah=None`` leaves AH out (column all missing)."""
    hh = np.asarray(hh, dtype=bool)
    style_input, style_output = np.asarray(style_input, dtype=object), np.asarray(style_output, dtype=object)
    main = (style_output == np.asarray(target, dtype=object)) & (style_output != style_input)
    compliant = hh & main
    frame = pd.DataFrame({"hh": hh, "ah": np.nan, "main": main})
    if ah is not None:
        ah = np.asarray(ah, dtype=bool)
        compliant &= ah
        frame["ah"] = ah
    frame["compliant"] = compliant
    return frame


# The two texts of each check's pairs, in the order its pair classifier reads them: HH the input then the output, AH
# the output then its source document (a cross-encoder cuts the first text at half its budget and reads a long
# second one in windows, so the document goes second).
PAIR_TEXTS = {"hh": ("input", "output"), "ah": ("output", "document")}


def pair_rows(frame: pd.DataFrame, check: str, document_column: str = "document") -> list[tuple[str, str]]:
    """The pairs the ``check`` (``hh`` or ``ah``: :data:`PAIR_TEXTS`) reads, one per row of ``frame``.

    >>> frame = pd.DataFrame({"input": ["a"], "output": ["b"], "document": ["a c"]})
    >>> pair_rows(frame, "hh"), pair_rows(frame, "ah")
    ([('a', 'b')], [('b', 'a c')])
    """
    first, second = (document_column if c == "document" else c for c in PAIR_TEXTS[check])
    return list(zip(frame[first], frame[second], strict=True))


def match_probability(classifier: PairClassifier, pairs: Sequence[tuple[str, str]], match_label: str = MATCH
                      ) -> np.ndarray:
    """P(``match_label``) of each pair, computing each distinct pair once."""
    classes = [str(c) for c in classifier.classes_]
    if match_label not in classes:
        raise LabelMismatchError(f"the pair classifier's labels are {classes}, without {match_label!r}; train it "
                                 f"with {match_label!r} for matching pairs or name the label")
    unique = list(dict.fromkeys(pairs))
    index = {pair: i for i, pair in enumerate(unique)}
    proba = classifier.predict_proba(unique)[:, classes.index(match_label)]
    return proba[[index[pair] for pair in pairs]]


def score_compliancy(transfers: Transfers, style_classifier: object, hh: PairClassifier,
                     ah: PairClassifier | None = None, *, document_column: str = "document",
                     reference_columns: Sequence[str] = (), match_label: str = MATCH) -> pd.DataFrame:
    """Per-transfer checks and overlap metrics: the transfers' columns plus ``hh_prob, hh, ah_prob, ah,
    style_input, style_output, main, compliant, bleu_input, rouge_input`` (and ``bleu_ref, rouge_ref``:
    best over ``reference_columns``).  AH needs ``ah`` and a ``document_column`` in the frame.
    """
    frame = transfers.frame.copy()
    if ah is not None and document_column not in frame:
        raise InputError(f"the AH check needs a {document_column!r} column with each input's source document",
                         path=transfers.origin, fix="give the documents, or leave out the AH classifier")
    for column in reference_columns:
        if column not in frame:
            raise InputError(f"no reference column {column!r}", path=transfers.origin)
    class_indices(style_classifier, frame["target_style"].tolist(), "target_style")
    classes = np.asarray([str(c) for c in style_classifier.classes_], dtype=object)
    frame["style_input"] = classes[predict_unique(style_classifier, frame["input"].tolist()).argmax(axis=1)]
    frame["style_output"] = classes[predict_unique(style_classifier, frame["output"].tolist()).argmax(axis=1)]
    frame["hh_prob"] = match_probability(hh, pair_rows(frame, "hh"), match_label)
    ah_match = None
    frame["ah_prob"] = np.nan
    if ah is not None:
        frame["ah_prob"] = match_probability(ah, pair_rows(frame, "ah", document_column), match_label)
        ah_match = frame["ah_prob"].to_numpy() > 0.5
    checks = compliancy_decisions(frame["hh_prob"].to_numpy() > 0.5, ah_match, frame["style_input"],
                                  frame["style_output"], frame["target_style"])
    for column in checks:
        frame[column] = checks[column].to_numpy()
    frame["bleu_input"] = sentence_bleu(frame["input"].tolist(), frame["output"].tolist()).values / 100
    frame["rouge_input"] = rouge_l(frame["input"].tolist(), frame["output"].tolist()).values
    if reference_columns:
        outputs = frame["output"].tolist()
        frame["bleu_ref"] = np.max([sentence_bleu(frame[c].tolist(), outputs).values / 100
                                    for c in reference_columns], axis=0)
        frame["rouge_ref"] = np.max([rouge_l(frame[c].tolist(), outputs).values for c in reference_columns], axis=0)
    return frame


def multi_reference_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """Corpus BLEU (0-1) against several reference streams, on our tokens (sacreBLEU, no extra tokenization)."""
    hyps = [" ".join(t) for t in tokens_of(hypotheses)]
    refs = [[" ".join(t) for t in tokens_of(stream)] for stream in references]
    return BLEU(tokenize="none", force=True).corpus_score(hyps, refs).score / 100


def compliancy_table(scored: pd.DataFrame, reference_columns: Sequence[str] = (),
                     direction_names: dict[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """Table 2 of De Mattei et al.: per system, one row per direction and an ``avg`` row (mean of directions).

    Columns: HH, AH, Main, Compl. (shares of transfers), BLEU-in and ROUGE-in against the input and, with
    ``reference_columns``, BLEU-ref (corpus, multi-reference) and ROUGE-ref (best reference per sentence).
    ``direction_names`` maps (source, target) to a label such as ``kjv2bbe`` (default ``source->target``).
    """
    rows = []
    for system, group in scored.groupby("system", sort=False):
        directions = []
        for (source, target), part in group.groupby(["source_style", "target_style"], sort=True):
            name = (direction_names or {}).get((source, target), f"{source}->{target}")
            row = {"system": system, "direction": name, "n": len(part),
                   "HH": part["hh"].mean(), "AH": part["ah"].astype(float).mean(), "Main": part["main"].mean(),
                   "Compl.": part["compliant"].mean(),
                   "BLEU-in": corpus_bleu(part["input"].tolist(), part["output"].tolist()) / 100,
                   "ROUGE-in": part["rouge_input"].mean()}
            if reference_columns:
                row["BLEU-ref"] = multi_reference_bleu(part["output"].tolist(),
                                                       [part[c].tolist() for c in reference_columns])
                row["ROUGE-ref"] = part["rouge_ref"].mean()
            directions.append(row)
        rows += directions
        metrics = [k for k in directions[0] if k not in ("system", "direction", "n")]
        rows.append({"system": system, "direction": "avg", "n": sum(r["n"] for r in directions),
                     **{k: float(np.mean([r[k] for r in directions])) for k in metrics}})
    return pd.DataFrame(rows)


def table_markdown(table: pd.DataFrame, digits: int = 3) -> str:
    """The table as GitHub markdown, numbers with ``digits`` decimals and missing values as ``-``."""
    def cell(value: object) -> str:
        if isinstance(value, float):
            return "-" if np.isnan(value) else f"{value:.{digits}f}"
        return str(value)

    return md.table(table, cell) + "\n"  # system names are the user's: escaped, never HTML
