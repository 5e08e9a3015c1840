"""A language model behind an OpenAI-compatible server (vLLM, llama.cpp's server, llama-cpp-python, a hosted API),
answering the two questions of :mod:`tsteval.backends`:

* **the next-token distribution over given answers** (the ``judge_*`` ratings): one chat completion per distinct
  question, one generated token at temperature 0 with ``logprobs`` and ``top_logprobs`` (:data:`TOP_LOGPROBS`); the
  answers' log-probabilities are read from the top list in either shape in use (``logprobs.content[0].top_logprobs``,
  a list of ``{token, logprob}``; or the older ``logprobs.top_logprobs[0]``, a dict).  An answer missing from the
  list has probability 0 in the renormalised rating; a question whose list holds none of them rates NaN.
* **the log-probabilities of a text's tokens** (``ppl``, ``lp_mean``): one completion per distinct text with
  ``echo`` and ``logprobs`` (OpenAI's legacy completions, llama-cpp-python, vLLM), or vLLM's ``prompt_logprobs``,
  reading the text after ``start_text`` (the model's start token as text, e.g. ``<|im_start|>`` for SmolLM2; empty:
  the server's own start).  The text's tokens are the echoed prompt tokens whose strings, read from the end, make up
  the text.  A token the echo leaves without a value (the first after the start, which llama-cpp-python 0.2 drops)
  is read from the next-token distribution after ``start_text`` (one request for the whole run).

What a server cannot give is refused in one line before any scoring request (:meth:`RemoteLM.require`), after a
probe of one tiny request per capability (cached like every answer).  ``cond_lp``, ``logprop_*`` and ``slor`` are
not read from a server yet: asking for them with ``--lm-endpoint`` is refused the same way.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from tsteval.backends.client import Client, ServerError
from tsteval.core.errors import TstevalError
from tsteval.metrics.naturalness.lm_scores import SentenceLogProbs
from tsteval.metrics.naturalness.packaged import SMOLLM2

# top_logprobs asked for with a rating (OpenAI's largest).
TOP_LOGPROBS = 20
# The distribution after the start text, for the token the echo leaves without a value: as many as the server gives.
FIRST_TOKEN_TOP = 1 << 17
# What each LM metric needs from a server, and the metrics a server cannot serve yet.
NEEDS = {"judge_style": "chat", "judge_content": "chat", "judge_fluency": "chat", "ppl": "prompt", "lp_mean": "prompt"}
NOT_YET = {"cond_lp": "the output's tokens after a chat-rendered prompt", "logprop_content": "the output's tokens "
           "after a chat-rendered prompt", "logprop_style": "the output's tokens after a chat-rendered prompt",
           "slor": "the server's vocabulary for its unigram model"}
LACKS = {"chat": "chat completions with logprobs and at least 5 top_logprobs (one per rating 1-5)",
         "prompt": "prompt log-probabilities (completions with echo and logprobs, or vLLM's prompt_logprobs)"}


def top_answers(answer: Mapping[str, object]) -> dict[str, float]:
    """The first generated token's top log-probabilities by token text, from a chat or completion answer in either
    shape (``content[0].top_logprobs`` list, or ``top_logprobs[0]`` dict); empty when the answer has none.

    >>> top_answers({"choices": [{"logprobs": {"content": [{"token": "1", "logprob": -0.5,
    ...     "top_logprobs": [{"token": "1", "logprob": -0.5}, {"token": "2", "logprob": -1.5}]}]}}]})
    {'1': -0.5, '2': -1.5}
    >>> top_answers({"choices": [{"logprobs": {"tokens": ["1"], "top_logprobs": [{"1": -0.5, "3": -2.0}]}}]})
    {'1': -0.5, '3': -2.0}
    """
    choices = answer.get("choices") or [{}]
    logprobs = choices[0].get("logprobs") or {}
    content = logprobs.get("content")
    if content:
        return {str(e["token"]): float(e["logprob"]) for e in content[0].get("top_logprobs") or []}
    tops = logprobs.get("top_logprobs") or [None]
    return {str(k): float(v) for k, v in (tops[0] or {}).items()}


def answer_row(tops: Mapping[str, float], answers: Sequence[str]) -> np.ndarray:
    """Each answer's log-probability in ``tops`` (the token as written, else with spaces around it), -inf where
    the list lacks it.

    >>> answer_row({"1": -0.1, " 2": -2.0}, ["1", "2", "3"]).tolist()
    [-0.1, -2.0, -inf]
    """
    stripped: dict[str, float] = {}
    for token, value in tops.items():
        stripped[token.strip()] = max(value, stripped.get(token.strip(), -math.inf))
    return np.array([tops.get(a, stripped.get(a, -math.inf)) for a in answers])


def echoed_tokens(answer: Mapping[str, object]) -> tuple[list[str], list[float | None]]:
    """The prompt's tokens and their log-probabilities (None where the server gives none) from a completion with
    ``echo`` and ``logprobs`` or with vLLM's ``prompt_logprobs``, the generated tokens left out."""
    choice = (answer.get("choices") or [{}])[0]
    generated = int((answer.get("usage") or {}).get("completion_tokens") or 0)
    if choice.get("prompt_logprobs") is not None:  # vLLM: [None, {id: {logprob, rank, decoded_token}}, ...]
        tokens, values = [], []
        for entry in choice["prompt_logprobs"]:
            if entry is None:
                tokens.append("")
                values.append(None)
                continue
            best = next(iter(entry.values()))  # the prompt's own token comes first, before any top ones
            tokens.append(str(best.get("decoded_token", "")))
            values.append(float(best["logprob"]))
        return tokens, values
    logprobs = choice.get("logprobs") or {}
    tokens, values = list(logprobs.get("tokens") or []), list(logprobs.get("token_logprobs") or [])
    keep = len(tokens) - generated
    return tokens[:keep], values[:keep]


def text_tokens(text: str, tokens: Sequence[str], values: Sequence[float | None]) -> list[float | None]:
    """The log-probabilities of the last echoed tokens whose strings make up ``text`` (read from the end).

    >>> text_tokens("a b", ["<s>", "a", " b"], [None, -1.0, -2.0])
    [-1.0, -2.0]
    """
    joined, count = "", 0
    for token in reversed(tokens):
        if len(joined) >= len(text):
            break
        joined, count = token + joined, count + 1
    if not joined.endswith(text):
        raise TstevalError(f"the LM server's echoed tokens do not spell the scored text {text[:60]!r}: the server "
                           "changes the text it reads (normalisation?); drop --lm-endpoint for ppl/lp_mean")
    return list(values[len(values) - count:]) if count else []


class RemoteLM:
    """The model ``model`` of the OpenAI-compatible server at ``endpoint`` (see the module docstring); with the
    default model name and a server listing one model, that one.  ``max_concurrency`` bounds the requests in flight;
    the key is read from the environment variable ``api_key_env``."""

    def __init__(self, endpoint: str, model: str = SMOLLM2, *, api_key_env: str = "OPENAI_API_KEY",
                 max_concurrency: int = 4, start_text: str = "", cache_dir: Path | None = None,
                 retries: int = 6, backoff: float = 0.5) -> None:
        self.client = Client(endpoint, api_key_env=api_key_env, max_concurrency=max_concurrency, retries=retries,
                             backoff=backoff, cache_dir=cache_dir)
        listed = [str(m.get("id")) for m in self.client.get("/models").get("data") or [] if isinstance(m, dict)]
        if model not in listed and model == SMOLLM2 and len(listed) == 1:
            model = listed[0]
        elif listed and model not in listed:
            raise TstevalError(f"the LM server at {self.client.endpoint} serves {listed}, not {model!r}: give "
                               f"--language-model {listed[0]} (metrics.language_model in a manifest, language_model= "
                               "in evaluate)")
        self.model, self.start_text = model, start_text
        self.served_name = model  # the columns' @NAME (tsteval.metrics.naturalness.lm_names.column_name of it)
        self.fingerprint = ""
        self.capabilities: dict[str, str | None] = {}  # "chat"/"prompt" -> how it is read, None when not given
        self.unigram = None

    @property
    def model_id(self) -> str:
        """The model's name in signatures: ``remote:ID`` as the server reports it (``#FINGERPRINT`` where it gives
        one); never the endpoint's address or key."""
        return f"remote:{self.model}" + (f"#{self.fingerprint}" if self.fingerprint else "")

    @property
    def usage(self) -> dict[str, int]:
        """The requests sent and answers read from the cache, and the tokens the server counted."""
        return self.client.usage.as_dict()

    def _body(self, **fields: object) -> dict[str, object]:
        return {"model": self.model, "temperature": 0, **fields}

    def _probe(self, kind: str) -> str | None:
        """How the server gives ``kind`` (``chat``: ratings; ``prompt``: prompt log-probabilities), or None."""
        try:
            if kind == "chat":
                answer = self.client.post("/chat/completions", self._chat_body("Answer with a single digit: 1"),
                                          retries=0)
                return "chat" if len(top_answers(answer)) >= 5 else None
            for how, body in (("echo", self._echo_body("Hello world")), ("prompt_logprobs", self._body(
                    prompt=self.start_text + "Hello world", max_tokens=1, prompt_logprobs=0))):
                try:
                    answer = self.client.post("/completions", body, retries=0)
                except ServerError as error:
                    if error.status in (401, 403):
                        raise
                    continue
                if any(v is not None for v in echoed_tokens(answer)[1]):
                    return how
            return None
        except ServerError as error:
            if error.status in (401, 403) or error.status == 0:
                raise
            return None

    def require(self, metrics: Iterable[str]) -> None:
        """Refuse, in one line before any scoring request, an LM metric this server cannot give."""
        for metric in metrics:
            if metric in NOT_YET:
                raise TstevalError(f"{metric} is not read from an LM server yet (it needs {NOT_YET[metric]}): score "
                                   f"it with the in-process model (a run without --lm-endpoint)")
            kind = NEEDS.get(metric)
            if kind is None:
                continue
            if kind not in self.capabilities:
                self.capabilities[kind] = self._probe(kind)
            if self.capabilities[kind] is None:
                raise TstevalError(f"{metric} needs {LACKS[kind]}, which the LM server at {self.client.endpoint} does "
                                   f"not give for {self.model!r}: score {metric} in process (a run without "
                                   "--lm-endpoint), or serve the model with vLLM or llama.cpp's server")

    def _chat_body(self, question: str) -> dict[str, object]:
        return self._body(messages=[{"role": "user", "content": question}], max_tokens=1, logprobs=True,
                          top_logprobs=TOP_LOGPROBS)

    def _echo_body(self, text: str) -> dict[str, object]:
        return self._body(prompt=self.start_text + text, max_tokens=1, echo=True, logprobs=0)

    def answer_log_probs(self, questions: Sequence[str], answers: Sequence[str]) -> np.ndarray:
        """(questions x answers): each answer's log-probability as the first token of the model's reply to the user
        turn ``question`` (-inf where the server's top list lacks it); each distinct question asked once."""
        self.require(["judge_content"])
        distinct = list(dict.fromkeys(questions))
        replies = self.client.post_many("/chat/completions", [self._chat_body(q) for q in distinct], "LM ratings")
        self._fingerprint(replies)
        rows = {q: answer_row(top_answers(a), answers) for q, a in zip(distinct, replies, strict=True)}
        return np.array([rows[q] for q in questions]).reshape(len(questions), len(answers))

    def token_log_probs(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Natural-log probability of each of the server's tokens of each text, after ``start_text``."""
        self.require(["lp_mean"])
        distinct = list(dict.fromkeys(texts))
        if self.capabilities["prompt"] == "echo":
            bodies = [self._echo_body(t) for t in distinct]
        else:
            bodies = [self._body(prompt=self.start_text + t, max_tokens=1, prompt_logprobs=0) for t in distinct]
        replies = self.client.post_many("/completions", bodies, "LM log-probabilities")
        self._fingerprint(replies)
        first: dict[str, float] | None = None
        by_text = {}
        for text, reply in zip(distinct, replies, strict=True):
            tokens, values = echoed_tokens(reply)
            scored = text_tokens(text, tokens, values)
            if scored and scored[0] is None:  # the first token after the start: from the distribution there
                if first is None:
                    first = top_answers(self.client.post("/completions", self._body(
                        prompt=self.start_text, max_tokens=1, logprobs=FIRST_TOKEN_TOP)))
                scored[0] = first.get(tokens[len(tokens) - len(scored)], math.nan)
            by_text[text] = np.array([math.nan if v is None else v for v in scored], dtype=float)
        return [by_text[t] for t in texts]

    def _fingerprint(self, replies: Sequence[Mapping[str, object]]) -> None:
        prints = {str(r["system_fingerprint"]) for r in replies if r.get("system_fingerprint")}
        if len(prints) == 1 and not self.fingerprint:
            self.fingerprint = prints.pop()

    def sentence_log_probs(self, texts: Sequence[str]) -> SentenceLogProbs:
        """Summed log-probabilities of each text's tokens and their number (no unigram side: ``slor`` is not read
        from a server)."""
        per_token = self.token_log_probs(texts)
        return SentenceLogProbs(np.array([float(lp.sum()) for lp in per_token]), np.full(len(texts), np.nan),
                                np.array([len(lp) for lp in per_token]))

    def signatures(self, text_form: str | None = None) -> dict[str, str]:
        """How ``ppl`` and ``lp_mean`` were computed (``text_form``: the form the texts were given in)."""
        from tsteval.metrics.naturalness.causal_lm import DECLARED

        fields = {"lm": self.model_id, "start": f"text:{self.start_text}" if self.start_text else "server",
                  "unit": "server-token", **({"text": text_form} if text_form else {})}
        return {name: str(DECLARED[name].signature(("numpy", "httpx"), **fields)) for name in ("ppl", "lp_mean")}

    def close(self) -> None:
        """Close the connections and the answer cache."""
        self.client.close()
