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
LM_SERVER_FILE = "lm_server.json"


def write_scored(folder: Path, result: Run, summary: pd.DataFrame, board: pd.DataFrame | None) -> None:
    """Write into ``folder`` (a run's temporary folder): ``scorecard.{csv,parquet}``, ``signatures.json``,
    ``summary.{csv,md}`` (with the run's notices: :attr:`~tsteval.experiment.run.execute.Run.notices`);
    ``leaderboard.{csv,md}`` with ``board`` (with the notices and the copy sanity check); ``notices.json``: the
    notices, a list of lines;
    ``references.{csv,md}`` when content was scored against references; ``policy.json``: per content column, how
    many pairs the empty/OOV policy decided; ``leakage.json``: the leakage counts
    (:mod:`tsteval.experiment.run.leakage`); ``lm_server.json`` with an LM server: what it cost
    (:func:`server_cost`)."""
    result.card.write(folder, summary)
    if board is not None:
        from tsteval.metrics.joint.score import write_leaderboard

        write_leaderboard(folder, board, result.joint, result.notices)
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
    if result.lm_server is not None:
        (folder / LM_SERVER_FILE).write_text(json.dumps(result.lm_server, indent=2), encoding="utf-8")


def server_cost(lm: object) -> dict[str, object]:
    """What a run cost its LM server (``lm``: a :class:`~tsteval.backends.remote.RemoteLM`): the server, the model id
    of the signatures, the counts of :attr:`~tsteval.backends.client.Client.usage` in all and per metric (``probes``:
    the model list and the requests each run first sends to find what the server gives)."""
    return {"server": lm.client.server, "model": lm.model_id, **lm.usage, "metrics": lm.accounts}


def server_cost_table(cost: dict[str, object]) -> str:
    """:func:`server_cost` as a plain-text table, one row per metric and a total, and a line naming the server.

    >>> print(server_cost_table({"server": "http://h:80/v1", "model": "remote:m@http://h:80/v1", "requests": 3,
    ...     "retries": 1, "cached": 2, "prompt_tokens": 30, "completion_tokens": 3, "metrics": {"judge_style": {
    ...     "requests": 3, "retries": 1, "cached": 2, "prompt_tokens": 30, "completion_tokens": 3}}}))
    ... # doctest: +NORMALIZE_WHITESPACE
    metric       requests  retries  cached  prompt_tokens  completion_tokens
    -----------  --------  -------  ------  -------------  -----------------
    judge_style         3        1       2             30                  3
    total               3        1       2             30                  3
    LM server http://h:80/v1 (remote:m@http://h:80/v1): requests sent (retries included), answers from the cache,
    tokens as the server counted them
    """
    import pandas as pd

    from tsteval.backends.client import COUNTS
    from tsteval.core.texttable import text_table

    rows = [{"metric": name, **counts} for name, counts in cost["metrics"].items()]
    rows.append({"metric": "total", **{k: cost[k] for k in COUNTS}})
    return (text_table(pd.DataFrame(rows, columns=["metric", *COUNTS])) +
            f"\nLM server {cost['server']} ({cost['model']}): requests sent (retries included), answers from the "
            "cache, tokens as the server counted them")
