"""``--dry-run``: the requests a run would send to its LM server and their prompt tokens, per LM metric, sending none.

Each LM metric of the plan is scored through its real code path (:func:`~tsteval.metrics.judges.scorer.score_judges`,
the causal-LM scorer of ``ppl`` and ``lp_mean``) by a :class:`~tsteval.backends.remote.RemoteLM` in dry-run mode,
which asks the server nothing and keeps each request it would send; an answer already in the cache is counted as
cached (a rerun or a resumed run sends only the rest).  A request two metrics share (``ppl`` and ``lp_mean`` read the
same answers) is counted under the first.  Prompt tokens are counted by the served model's tokenizer
(``--lm-tokenizer``, else the served name) where it loads, else estimated at :data:`CHARS_PER_TOKEN` characters per
token; a chat prompt is counted in the tokenizer's chat template.  Not counted: the one or two tiny requests with
which a real run first probes what the server gives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from tsteval.core.errors import TstevalError
from tsteval.experiment.plan.plan import Plan
from tsteval.metrics.resources import Resources
from tsteval.scorecard import Scorecard

# Characters per token where no tokenizer counts them (English text under the usual BPE vocabularies).
CHARS_PER_TOKEN = 4


@dataclass
class Requests:
    """What a run would send: one row per LM metric (``metric``, ``requests``, ``cached``, ``prompt_tokens``) and how
    the tokens were counted."""

    model: str
    counted_by: str
    rows: list[dict[str, object]] = field(default_factory=list)

    def table(self) -> str:
        """The rows as a plain-text table with a total, and a line on how the tokens were counted.

        >>> print(Requests("remote:m", "estimated", [{"metric": "judge_style", "requests": 2, "cached": 1,
        ...     "prompt_tokens": 40}]).table())  # doctest: +NORMALIZE_WHITESPACE
        metric       requests  cached  prompt_tokens
        -----------  --------  ------  -------------
        judge_style         2       1             40
        total               2       1             40
        dry run for remote:m: nothing was sent; prompt tokens estimated
        """
        import pandas as pd

        from tsteval.core.texttable import text_table

        total = {"metric": "total", **{k: sum(int(r[k]) for r in self.rows)
                                       for k in ("requests", "cached", "prompt_tokens")}}
        return (text_table(pd.DataFrame([*self.rows, total])) +
                f"\ndry run for {self.model}: nothing was sent; prompt tokens {self.counted_by}")


def lm_requests(plan: Plan, card: Scorecard, resources: Resources) -> Requests:
    """The requests ``plan``'s LM metrics would send to its server (see the module)."""
    from tsteval.metrics.judges.scorer import score_judges
    from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS, REMOTE_SCORES
    from tsteval.metrics.selection import CAUSAL_LM_SCORER

    if plan.lm_endpoint is None:
        raise TstevalError("--dry-run counts the requests a run would send to an LM server: give --lm-endpoint URL "
                           "(metrics.lm.endpoint in a manifest, lm_endpoint= in evaluate)")
    remote = resources.get("language_model").value
    scorers = [CAUSAL_LM_SCORER] if CAUSAL_LM_SCORER in plan.naturalness else []
    remote.require([*plan.judges, *(REMOTE_SCORES if scorers else ())])
    count, counted_by = _counter(remote)
    result = Requests(remote.model_id, counted_by)
    client = remote.client
    for name in [*plan.judges, *scorers]:
        known, cached = set(client.planned), client.usage.cached
        if name in scorers:
            NATURALNESS_METRICS[name](card, None, plan.seed, plan.folds, resources=resources)
        else:
            score_judges(card, [name], resources, plan.params, plan.text_form, plan.style_name, plan.language_model)
        new = [body for key, body in client.planned.items() if key not in known]
        result.rows.append({"metric": ", ".join(REMOTE_SCORES) if name in scorers else name, "requests": len(new),
                            "cached": client.usage.cached - cached, "prompt_tokens": sum(count(b) for b in new)})
    return result


def _counter(remote: object) -> tuple[object, str]:
    """A function counting a request's prompt tokens, and how it counts them."""
    try:
        tokenizer = remote.tokenizer
    except TstevalError:
        def estimate(request: tuple[str, dict[str, object]]) -> int:
            _, body = request
            text = body.get("prompt") or "".join(str(m.get("content", "")) for m in body.get("messages", []))
            return math.ceil(len(str(text)) / CHARS_PER_TOKEN)

        return estimate, (f"estimated at {CHARS_PER_TOKEN} characters per token (give --lm-tokenizer for an exact "
                          "count)")

    def tokens(request: tuple[str, dict[str, object]]) -> int:
        _, body = request
        if "messages" in body and getattr(tokenizer, "chat_template", None):
            text = tokenizer.apply_chat_template(body["messages"], add_generation_prompt=True, tokenize=False)
        else:
            text = body.get("prompt") or "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        return len(tokenizer(str(text), add_special_tokens=False)["input_ids"])

    return tokens, f"counted by the tokenizer {remote.tokenizer_source!r}"
