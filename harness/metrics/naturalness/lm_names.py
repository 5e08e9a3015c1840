"""Names of causal language models: what ``--language-model`` accepts and the short name its columns carry.

A model is a packaged alias (``smollm2``, ``gemma3-270m``), a local folder or a Hugging Face id (``org/name``, read
from the local Hugging Face cache: nothing is fetched at run time), or with ``--lm-endpoint`` the name a server serves
it under (``accounts/lab/models/llama-8b``, ``llama3.1:8b``).  Its columns end in ``@ALIAS``: the alias itself, else
the folder's or id's last part with any character a column name may not hold replaced by ``-``.

>>> column_name("smollm2"), column_name("HuggingFaceTB/SmolLM2-360M-Instruct"), column_name("llama3.1:8b")
('smollm2', 'SmolLM2-360M-Instruct', 'llama3.1-8b')
>>> check_model_name("accounts/lab/models/llama-8b", "language_model")
'accounts/lab/models/llama-8b'
>>> check_model_name("no spaces please", "language_model")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
tsteval.core.errors.TstevalError: language_model must be a packaged model (...), a folder or ... not 'no spaces please'
"""

from __future__ import annotations

import re
from pathlib import Path

from tsteval.core.errors import TstevalError, quote
from tsteval.metrics.naturalness.causal_lm import PACKAGED_GGUF

PACKAGED_ALIASES = tuple(PACKAGED_GGUF)


def check_model_name(value: str, name: str) -> str:
    """``value`` when it can name a model (an alias, an existing folder, or an id without spaces)."""
    text = str(value).strip()
    if text in PACKAGED_ALIASES or Path(text).is_dir() or re.fullmatch(r"[\w.\-:]+(/[\w.\-:]+)*", text):
        return text
    raise TstevalError(f"{name} must be a packaged model ({', '.join(PACKAGED_ALIASES)}), a folder or a Hugging Face "
                       f"id, not {quote(text)}")


def column_name(model: str) -> str:
    """The ``@NAME`` of a model's columns."""
    if model in PACKAGED_ALIASES:
        return model
    return re.sub(r"[^\w.\-]", "-", Path(str(model).rstrip("/")).name) or "lm"
