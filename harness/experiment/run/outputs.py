"""What every scoring run writes, ``tsteval score`` and ``tsteval run`` alike: the scorecard and its summary, the
leaderboard when J was scored, the corpus-level scores against references, and the empty/OOV policy counts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from tsteval.experiment.run.execute import Run

POLICY_FILE = "policy.json"


def write_scored(folder: Path, result: Run, summary: pd.DataFrame, board: pd.DataFrame | None) -> None:
    """Write into ``folder`` (a run's temporary folder): ``scorecard.{csv,parquet}``, ``signatures.json``,
    ``summary.{csv,md}``; ``leaderboard.{csv,md}`` with ``board`` (with J's warnings and the copy sanity check);
    ``references.{csv,md}`` when content was scored against references; ``policy.json``: per content column, how
    many pairs the empty/OOV policy decided; ``leakage.json``: the leakage counts
    (:mod:`tsteval.experiment.run.leakage`)."""
    result.card.write(folder, summary)
    if board is not None:
        from tsteval.metrics.joint.score import write_leaderboard

        write_leaderboard(folder, board, result.joint, result.warnings)
    corpus = result.corpus_references
    if corpus is not None and not corpus.empty:
        from tsteval.metrics.content.references import corpus_markdown

        corpus.to_csv(folder / "references.csv", index=False)
        (folder / "references.md").write_text(corpus_markdown(corpus), encoding="utf-8")
    (folder / POLICY_FILE).write_text(json.dumps(result.policy, indent=2, sort_keys=True), encoding="utf-8")
    if result.leakage is not None:
        from tsteval.experiment.run.leakage import LEAKAGE_FILE

        (folder / LEAKAGE_FILE).write_text(json.dumps(result.leakage.counts, indent=2, sort_keys=True),
                                           encoding="utf-8")
