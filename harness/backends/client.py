"""An OpenAI-compatible HTTP client a run can leave going on 10,000 pairs.

* **Cache.** Every answer is kept in one SQLite file per server model under ``cache_root()/remote`` (the WAL journal:
  an answer is on disk once it arrives), keyed by the sha256 of the model id, the endpoint path and the request's
  canonical JSON, and never by the key: an interrupted run resumes where it stopped, a rerun sends nothing.  A cached
  answer that does not parse as JSON is asked again.
* **Concurrency.** At most ``max_concurrency`` requests in flight (a thread pool around one ``httpx.Client``).
* **Retries.** A 429, a 5xx, a timeout or a dropped or refused connection is retried up to ``retries`` times with
  exponential backoff (``backoff`` s, doubled each time, at most :data:`MAX_WAIT`), waiting what ``Retry-After``
  asks for where the server says; other answers are one :class:`TstevalError` line naming the fix.
* **Accounts.** :attr:`Client.usage` counts the requests sent, the answers read from the cache and the prompt and
  completion tokens the server reported; the run writes them into its records.
* **Dry run.** With ``dry_run`` nothing is sent: a request not in the cache is kept in :attr:`Client.planned` (once
  per key) and answered by an empty object.

The API key is read from the environment variable named ``api_key_env`` when a request is sent and kept only in
the ``Authorization`` header: it is in no cache key, log, record or error message.

>>> request_key("m", "/completions", {"b": 1, "a": [1, 2]}) == request_key("m", "/completions", {"a": [1, 2], "b": 1})
True
>>> retry_wait({"retry-after": "3"}, 0, 0.5), retry_wait({}, 2, 0.5), retry_wait({"retry-after": "soon"}, 0, 0.5)
(3.0, 2.0, 0.5)
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from tsteval.core.errors import TstevalError

# The longest wait between two tries of one request (s).
MAX_WAIT = 30.0
RETRIED = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


def request_key(model: str, path: str, body: dict[str, object]) -> str:
    """The cache key of a request: sha256 of the model id, the endpoint path and the body's canonical JSON."""
    text = json.dumps([model, path, body], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def retry_wait(headers: object, attempt: int, backoff: float) -> float:
    """Seconds before the next try: the ``Retry-After`` seconds when the server gives them, else ``backoff``
    doubled per earlier try, at most :data:`MAX_WAIT`."""
    asked = headers.get("retry-after") if headers is not None else None
    try:
        return min(max(float(asked), 0.0), MAX_WAIT)
    except (TypeError, ValueError):
        return min(backoff * 2 ** attempt, MAX_WAIT)


@dataclass
class Usage:
    """What a client spent: requests sent (retries included), answers from the cache, tokens the server counted."""

    requests: int = 0
    retries: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: int) -> None:
        """Add ``counts`` to the fields of the same names."""
        with self.lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)

    def as_dict(self) -> dict[str, int]:
        """The counts by name."""
        return {name: getattr(self, name) for name in ("requests", "retries", "cached", "prompt_tokens",
                                                       "completion_tokens")}


class AnswerCache:
    """Answers by request key in one SQLite file, written as each arrives (safe from the client's threads)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.lock = threading.Lock()
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)")

    def get(self, key: str) -> dict[str, object] | None:
        """The cached answer of ``key``, or None (also for an entry that does not parse)."""
        with self.lock:
            row = self.db.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            answer = json.loads(row[0])
        except json.JSONDecodeError:
            return None
        return answer if isinstance(answer, dict) else None

    def put(self, key: str, answer: dict[str, object]) -> None:
        """Keep ``answer`` for ``key``."""
        with self.lock:
            self.db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?)", (key, json.dumps(answer)))

    def close(self) -> None:
        """Close the database."""
        with self.lock:
            self.db.close()


class ServerError(TstevalError):
    """An answer that is not retried (or no longer): its one line, and the HTTP status (0: none came)."""

    def __init__(self, message: str, status: int = 0, detail: str = "") -> None:
        super().__init__(message)
        self.status, self.detail = status, detail


class Client:
    """Requests to the OpenAI-compatible server at ``endpoint`` (its base URL, e.g. ``http://127.0.0.1:8000/v1``)
    for the model ``model``; see the module docstring."""

    def __init__(self, endpoint: str, *, api_key_env: str = "OPENAI_API_KEY", max_concurrency: int = 4,
                 retries: int = 6, backoff: float = 0.5, timeout: float = 120.0, cache_dir: Path | None = None,
                 dry_run: bool = False) -> None:
        import httpx

        self.endpoint = endpoint.rstrip("/")
        self.api_key_env = api_key_env
        self.max_concurrency, self.retries, self.backoff = max_concurrency, retries, backoff
        self.http = httpx.Client(timeout=timeout, limits=httpx.Limits(max_connections=max_concurrency))
        self.cache_dir = cache_dir
        self.caches: dict[str, AnswerCache] = {}
        self.opening = threading.Lock()
        self.usage = Usage()
        self.dry_run = dry_run
        self.planned: dict[str, tuple[str, dict[str, object]]] = {}  # the dry run's requests by key

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.api_key_env, "")
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _fix(self, status: int, path: str, model: str) -> str:
        """The one line a non-retried answer gets."""
        where = f"{self.endpoint}{path}"
        if status in (401, 403):
            return (f"the LM server {where} refused the API key ({status}): set the environment variable "
                    f"{self.api_key_env} to a valid key (--api-key-env names another variable)")
        if status == 404:
            return (f"the LM server has no {where} (404) for the model {model!r}: check --lm-endpoint (the base URL, "
                    "usually ending in /v1) and --language-model")
        return f"the LM server {where} answered {status} for the model {model!r}"

    def get(self, path: str) -> dict[str, object]:
        """``GET path`` once, unretried and uncached (the server's model list): one line when unreachable."""
        import httpx

        try:
            answer = self.http.get(f"{self.endpoint}{path}", headers=self._headers())
        except httpx.HTTPError as error:
            raise TstevalError(f"cannot reach the LM server at {self.endpoint} ({type(error).__name__}): start it, or "
                               "give its base URL with --lm-endpoint (e.g. http://127.0.0.1:8000/v1)") from None
        if answer.status_code != 200:
            raise TstevalError(self._fix(answer.status_code, path, ""))
        return _json(answer, f"{self.endpoint}{path}")

    def _cache(self, model: str) -> AnswerCache:
        """``model``'s answer cache, opened once: the pool's threads asking for it together (a dry run's first
        requests) share one connection, where several would lock each other out of the new file."""
        with self.opening:
            if model not in self.caches:
                from tsteval.core.cache import cache_root

                root = self.cache_dir or cache_root() / "remote"
                self.caches[model] = AnswerCache(root / f"{hashlib.sha256(model.encode()).hexdigest()[:24]}.sqlite")
            return self.caches[model]

    def post(self, path: str, body: dict[str, object], retries: int | None = None) -> dict[str, object]:
        """The answer to ``POST path`` with ``body`` (whose ``model`` names the model): from the cache, else asked
        (retried as the module says, ``retries`` times when given) and cached."""
        import httpx

        model = str(body["model"])
        cache, key = self._cache(model), request_key(model, path, body)
        known = cache.get(key)
        if known is not None:
            self.usage.add(cached=1)
            return known
        if self.dry_run:
            self.planned.setdefault(key, (path, body))
            return {}
        retries = self.retries if retries is None else retries
        for attempt in range(retries + 1):
            headers = None
            try:
                self.usage.add(requests=1)
                answer = self.http.post(f"{self.endpoint}{path}", json=body, headers=self._headers())
            except (httpx.TimeoutException, httpx.TransportError) as error:
                problem = type(error).__name__
            else:
                if answer.status_code == 200:
                    parsed = _json(answer, f"{self.endpoint}{path}")
                    used = parsed.get("usage") or {}
                    self.usage.add(prompt_tokens=int(used.get("prompt_tokens") or 0),
                                   completion_tokens=int(used.get("completion_tokens") or 0))
                    cache.put(key, parsed)
                    return parsed
                status, detail = answer.status_code, _detail(answer)
                if status not in RETRIED:
                    raise ServerError(self._fix(status, path, model), status, detail)
                problem, headers = f"HTTP {status}", answer.headers
            if attempt == retries:
                raise ServerError(f"the LM server {self.endpoint}{path} failed {retries + 1} times (last: {problem}): "
                                  "check that it is up, or lower --max-concurrency; answers so far are cached, so "
                                  "running again resumes", 0 if headers is None else status,
                                  "" if headers is None else detail)
            self.usage.add(retries=1)
            time.sleep(retry_wait(headers, attempt, self.backoff))
        raise AssertionError("unreachable")

    def post_many(self, path: str, bodies: Sequence[dict[str, object]], what: str) -> list[dict[str, object]]:
        """:meth:`post` of every body, at most ``max_concurrency`` at a time, answers in order, with a progress bar
        ``what``; the first failure stops the rest (those not yet sent are not)."""
        from tsteval.core.progress import progress

        with ThreadPoolExecutor(self.max_concurrency) as pool:
            futures = [pool.submit(self.post, path, body) for body in bodies]
            try:
                for future in progress(as_completed(futures), what, total=len(futures), unit="request"):
                    future.result()
            finally:
                for future in futures:
                    future.cancel()
            return [future.result() for future in futures]

    def close(self) -> None:
        """Close the connections and the caches."""
        self.http.close()
        for cache in self.caches.values():
            cache.close()


def _detail(answer: object) -> str:
    """The first line of the server's own error message (its JSON ``message`` or ``detail`` where it gives one)."""
    try:
        parsed = answer.json()
    except ValueError:
        return answer.text.strip().splitlines()[0][:200] if answer.text.strip() else ""
    error = parsed.get("error", parsed) if isinstance(parsed, dict) else parsed
    message = error.get("message", error.get("detail", error)) if isinstance(error, dict) else error
    return str(message).strip().splitlines()[0][:200] if str(message).strip() else ""


def _json(answer: object, where: str) -> dict[str, object]:
    try:
        parsed = answer.json()
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise TstevalError(f"the LM server {where} answered something that is not a JSON object: is --lm-endpoint an "
                           "OpenAI-compatible base URL?")
    return parsed
