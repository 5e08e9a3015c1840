"""Checks of the remote-LM run options (``--lm-endpoint``, ``--api-key-env``), one line each naming the fix.

>>> check_endpoint("lm_endpoint", "http://127.0.0.1:8000/v1/")
'http://127.0.0.1:8000/v1'
>>> check_endpoint("lm_endpoint", "127.0.0.1:8000")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
tsteval.core.errors.TstevalError: lm_endpoint must be an http(s) base URL such as ... not '127.0.0.1:8000'
>>> check_variable("api_key_env", "sk-abc 123")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
tsteval.core.errors.TstevalError: api_key_env names the environment variable that holds the key ... not the key itself
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from tsteval.core.errors import TstevalError, quote


def check_endpoint(name: str, value: object) -> str:
    """``value`` without a trailing slash when it is an http(s) URL with a host (and no user:password in it)."""
    text = str(value).strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TstevalError(f"{name} must be an http(s) base URL such as http://127.0.0.1:8000/v1, not {quote(text)}")
    if parts.username or parts.password:
        raise TstevalError(f"{name} must not hold a user or password: put the key in an environment variable and "
                           "name it with --api-key-env")
    return text.rstrip("/")


def check_variable(name: str, value: object) -> str:
    """``value`` when it can name an environment variable (never echoed: it might be a key given by mistake)."""
    text = str(value).strip()
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
        raise TstevalError(f"{name} names the environment variable that holds the key (e.g. OPENAI_API_KEY), not the "
                           "key itself")
    return text
