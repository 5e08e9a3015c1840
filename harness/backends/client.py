"""An OpenAI-compatible HTTP client a run can leave going on 10,000 pairs.

* **Cache.** Every answer is kept in one SQLite file per served model id under ``cache_root()/remote`` (the WAL
  journal: an answer is on disk once it arrives), keyed by the sha256 of the server's identity (:meth:`Client.identity`:
  the base URL's scheme, host, port and path, the served id, and what the server states about its weights where it
  does: its ``/models`` entry, its ``system_fingerprint``), the endpoint path and the request's canonical JSON, and
  never by the key: two servers never share an answer, an interrupted run resumes where it stopped (the same server
  restarted too), a rerun sends nothing but the probes.  A cached answer that does not parse as JSON is asked again;
  a ``fresh`` request (a probe of what the server gives) is neither read from nor written to the cache.
* **Concurrency.** At most ``max_concurrency`` requests in flight (a thread pool around one ``httpx.Client``).
* **Retries.** Every request, the first and ``GET /models`` included, is tried up to ``retries + 1`` times when it
  meets a 429, a 5xx, a timeout or a dropped or refused connection, with exponential backoff (``backoff`` s, doubled
  each time, at most :data:`MAX_WAIT`), waiting what ``Retry-After`` asks for where the server says; then one
  :class:`ServerError` line saying what the server answered and how many times.  Other answers are one line naming
  the fix.
* **Accounts.** :attr:`Client.usage` counts the requests sent, the answers read from the cache and the prompt and
  completion tokens the server reported (its ``usage``), in all and per metric (:meth:`Client.accounting`); the run
  writes them into its records.
* **Dry run.** With ``dry_run`` nothing is sent: a request not in the cache is kept in :attr:`Client.planned` (once
  per key) and answered by an empty object.

The API key is read from the environment variable named ``api_key_env`` when a request is sent and kept only in
the ``Authorization`` header: it is in no cache key, identity, log, record or error message.

>>> request_key("m", "/completions", {"b": 1, "a": [1, 2]}) == request_key("m", "/completions", {"a": [1, 2], "b": 1})
True
>>> retry_wait({"retry-after": "3"}, 0, 0.5), retry_wait({}, 2, 0.5), retry_wait({"retry-after": "soon"}, 0, 0.5)
(3.0, 2.0, 0.5)
>>> server_address("HTTPS://Lab.example:443/v1/?api-key=secret")
{'scheme': 'https', 'host': 'lab.example', 'port': 443, 'path': '/v1'}
>>> times(1), times(6), times(40)
('once', 'six times', '40 times')
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from tsteval.core.errors import TstevalError

# The longest wait between two tries of one request (s).
MAX_WAIT = 30.0
RETRIED = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


def canonical(value: object) -> str:
    """``value`` as canonical JSON (keys sorted, no spaces)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def request_key(identity: object, path: str, body: dict[str, object]) -> str:
    """The cache key of a request: sha256 of the server's identity (:meth:`Client.identity`), the endpoint path and
    the body's canonical JSON."""
    return hashlib.sha256(canonical([identity, path, body]).encode("utf-8")).hexdigest()


def server_address(endpoint: str) -> dict[str, object]:
    """The parts of a base URL that say which server it is: scheme, host, port (the scheme's default where none is
    given) and path; never a user, password or query (where a key might be)."""
    parts = urlsplit(endpoint)
    scheme = parts.scheme.lower()
    return {"scheme": scheme, "host": (parts.hostname or "").lower(),
            "port": parts.port or (443 if scheme == "https" else 80), "path": parts.path.rstrip("/")}


def times(count: int) -> str:
    """``count`` times in words, for an error line."""
    words = ("once", "twice", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
    return words[count - 1] + (" times" if count > 2 else "") if 0 < count <= len(words) else f"{count} times"


def retry_wait(headers: object, attempt: int, backoff: float) -> float:
    """Seconds before the next try: the ``Retry-After`` seconds when the server gives them, else ``backoff``
    doubled per earlier try, at most :data:`MAX_WAIT`."""
    asked = headers.get("retry-after") if headers is not None else None
    try:
        return min(max(float(asked), 0.0), MAX_WAIT)
    except (TypeError, ValueError):
        return min(backoff * 2 ** attempt, MAX_WAIT)


# What :class:`Usage` counts, in the order every record and table of a server's cost lists them.
COUNTS = ("requests", "retries", "cached", "prompt_tokens", "completion_tokens")


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
        return {name: getattr(self, name) for name in COUNTS}


class AnswerCache:
    """Answers by request key in one SQLite file, written as each arrives (safe from the client's threads), and what
    the server last stated about each model's weights (which a dry run, asking nothing, assumes)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.lock = threading.Lock()
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)")
        self.db.execute("CREATE TABLE IF NOT EXISTS stated (server TEXT PRIMARY KEY, stated TEXT NOT NULL)")

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

    def last_stated(self, server: str) -> dict[str, object]:
        """What ``server`` (a server and model) last stated about the weights (empty when it stated nothing or never
        answered)."""
        with self.lock:
            row = self.db.execute("SELECT stated FROM stated WHERE server = ?", (server,)).fetchone()
        return json.loads(row[0]) if row else {}

    def remember(self, server: str, stated: Mapping[str, object]) -> None:
        """Keep what ``server`` (a server and model) now states about the weights."""
        with self.lock:
            self.db.execute("INSERT OR REPLACE INTO stated VALUES (?, ?)", (server, canonical(stated)))

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
    """Requests to the OpenAI-compatible server at ``endpoint`` (its base URL, e.g. ``http://127.0.0.1:8000/v1``);
    see the module docstring.  :attr:`stated` holds, per served model, what the server states about its weights
    (set by its user, :class:`~tsteval.backends.remote.RemoteLM`), part of :meth:`identity`."""

    def __init__(self, endpoint: str, *, api_key_env: str = "OPENAI_API_KEY", max_concurrency: int = 4,
                 retries: int = 5, backoff: float = 0.5, timeout: float = 120.0, cache_dir: Path | None = None,
                 dry_run: bool = False) -> None:
        import httpx

        self.endpoint = endpoint.rstrip("/")
        self.address = server_address(self.endpoint)
        self.api_key_env = api_key_env
        self.max_concurrency, self.retries, self.backoff = max_concurrency, retries, backoff
        self.http = httpx.Client(timeout=timeout, limits=httpx.Limits(max_connections=max_concurrency))
        self.cache_dir = cache_dir
        self.caches: dict[str, AnswerCache] = {}
        self.opening = threading.Lock()
        self.stated: dict[str, dict[str, object]] = {}
        self.usage = Usage()
        self.accounts: dict[str, Usage] = {}  # per metric (accounting)
        self.account: str | None = None
        self.dry_run = dry_run
        self.planned: dict[str, tuple[str, dict[str, object]]] = {}  # the dry run's requests by key

    @property
    def server(self) -> str:
        """The server as the records name it: the base URL's scheme, host, port and path (never a key)."""
        address = self.address
        return f"{address['scheme']}://{address['host']}:{address['port']}{address['path']}"

    def identity(self, model: str) -> dict[str, object]:
        """Which server and weights answer for ``model``: the base URL's parts, the served id, and what the server
        states about the weights (:attr:`stated`); the cache key of every answer holds it."""
        return {**self.address, "model": model, **self.stated.get(model, {})}

    @contextmanager
    def accounting(self, name: str) -> Iterator[None]:
        """Count the requests sent inside the block under ``name`` too (a metric: they are scored one at a time)."""
        before, self.account = self.account, name
        self.accounts.setdefault(name, Usage())
        try:
            yield
        finally:
            self.account = before

    def _count(self, **counts: int) -> None:
        self.usage.add(**counts)
        if self.account is not None:
            self.accounts[self.account].add(**counts)

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
        """``GET path``, retried as the module says and uncached (the server's model list)."""
        return self._send("GET", path, None, "")

    def _cache(self, model: str) -> AnswerCache:
        """The answer cache of ``model`` (one file per served id, whatever the server: the keys tell servers apart),
        opened once: the pool's threads asking for it together (a dry run's first requests) share one connection,
        where several would lock each other out of the new file."""
        with self.opening:
            if model not in self.caches:
                from tsteval.core.cache import cache_root

                root = self.cache_dir or cache_root() / "remote"
                self.caches[model] = AnswerCache(root / f"{hashlib.sha256(model.encode()).hexdigest()[:24]}.sqlite")
            return self.caches[model]

    def last_stated(self, model: str) -> dict[str, object]:
        """What this server last stated about ``model``'s weights (a dry run, which asks nothing, assumes it)."""
        return self._cache(model).last_stated(canonical([self.address, model]))

    def remember(self, model: str) -> None:
        """Keep what this server now states about ``model``'s weights (:attr:`stated`)."""
        self._cache(model).remember(canonical([self.address, model]), self.stated.get(model, {}))

    def post(self, path: str, body: dict[str, object], fresh: bool = False) -> dict[str, object]:
        """The answer to ``POST path`` with ``body`` (whose ``model`` names the model): from the cache, else asked
        (retried as the module says) and cached; with ``fresh`` always asked and never cached (a probe)."""
        model = str(body["model"])
        cache, key = self._cache(model), request_key(self.identity(model), path, body)
        known = None if fresh else cache.get(key)
        if known is not None:
            self._count(cached=1)
            return known
        if self.dry_run:
            self.planned.setdefault(key, (path, body))
            return {}
        parsed = self._send("POST", path, body, model)
        if not fresh:
            cache.put(key, parsed)
        return parsed

    def _send(self, method: str, path: str, body: dict[str, object] | None, model: str) -> dict[str, object]:
        """The server's JSON answer to ``method path`` (``body``: the JSON sent), tried as the module says."""
        import httpx

        where = f"{self.endpoint}{path}"
        status, detail, problem = 0, "", ""
        for attempt in range(self.retries + 1):
            headers = None
            try:
                self._count(requests=1)
                answer = self.http.request(method, where, json=body, headers=self._headers())
            except (httpx.TimeoutException, httpx.TransportError) as error:
                status, problem = 0, type(error).__name__
            else:
                if answer.status_code == 200:
                    parsed = _json(answer, where)
                    used = parsed.get("usage") or {}
                    self._count(prompt_tokens=int(used.get("prompt_tokens") or 0),
                                completion_tokens=int(used.get("completion_tokens") or 0))
                    return parsed
                status, detail, headers = answer.status_code, _detail(answer), answer.headers
                if status not in RETRIED:
                    raise ServerError(self._fix(status, path, model), status, detail)
            if attempt == self.retries:
                break
            self._count(retries=1)
            time.sleep(retry_wait(headers, attempt, self.backoff))
        tried, resumes = times(self.retries + 1), "answers so far are cached, so running again resumes"
        if not status:
            raise ServerError(f"cannot reach the LM server at {self.endpoint} ({problem}, tried {tried}): start it or "
                              "check that it is up, or give its base URL with --lm-endpoint (e.g. "
                              f"http://127.0.0.1:8000/v1); {resumes}")
        raise ServerError(f"the LM server {where} answered {status} {tried}" + (f" ({detail})" if detail else "") +
                          f": a server error; check the server (its log), or lower --max-concurrency; {resumes}",
                          status, detail)

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
