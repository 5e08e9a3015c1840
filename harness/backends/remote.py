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
* **the log-probabilities of a continuation after a prompt** (``cond_lp``, ``logprop_content``, ``logprop_style``):
  the prompts are rendered as in process, by the served model's own tokenizer and chat template (``tokenizer``:
  ``--lm-tokenizer``, a Hugging Face id or folder or a packaged model's name; by default the served name where it
  loads as one), decoded to text with the continuation after them, and sent as one echo completion per distinct
  (prompt, continuation).  The continuation's values are those of the last echoed tokens that spell it, special
  tokens (the end of the turn) read as empty (llama-cpp-python) or as written (vLLM), so a server that cuts the
  boundary differently still scores the same text.

* **SLOR** (``slor``): ``lp_mean``'s sums from the server, less an add-one unigram model of the human texts counted
  in the served model's tokenizer (:meth:`RemoteLM.fit_unigram`), as in process.

What a server cannot give is refused in one line before any scoring request (:meth:`RemoteLM.require`: what each LM
metric needs is declared on its :class:`~tsteval.metrics.base.Metric`), after a probe of one tiny request per
capability, sent afresh by every run (a refusal is never cached; the first probe's ``system_fingerprint`` joins the
server's identity, :meth:`tsteval.backends.client.Client.identity`, before any answer is read from the cache).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Self

import numpy as np

from tsteval.backends.client import RETRIED, Client, ServerError
from tsteval.core.errors import TstevalError
from tsteval.metrics.naturalness.lm_scores import SentenceLogProbs, UnigramLM
from tsteval.metrics.naturalness.packaged import SMOLLM2

# top_logprobs asked for with a rating (OpenAI's largest).
TOP_LOGPROBS = 20
# The distribution after the start text, for the token the echo leaves without a value: as many as the server gives.
FIRST_TOKEN_TOP = 1 << 17
# A /models ``created`` time this close to the time of asking (s) is the time of asking, not of the weights.
NOW_SECONDS = 600
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


def echoed_tokens(answer: Mapping[str, object]) -> tuple[list[str], list[float | None], int]:
    """The echoed tokens and their log-probabilities (None where the server gives none) from a completion with
    ``echo`` and ``logprobs`` or with vLLM's ``prompt_logprobs``, and how many generated tokens the answer counts
    (the echo may hold them at its end)."""
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
        return tokens, values, 0
    logprobs = choice.get("logprobs") or {}
    return list(logprobs.get("tokens") or []), list(logprobs.get("token_logprobs") or []), generated


def scored_tokens(text: str, answer: Mapping[str, object],
                  special: Sequence[str] = ()) -> tuple[list[str], list[float | None]]:
    """The strings and log-probabilities of the last echoed prompt tokens of ``answer`` that spell ``text``
    (:func:`text_tokens`), the generated tokens left out where the echo holds them: llama-cpp-python 0.2 counts a
    generated token but leaves it out of the echo when it is the BOS token (it skips every BOS token).

    >>> def answer(*tokens):  # one generated token counted; the last echoed one is -9.0
    ...     values = [None, -1.0, -2.0, -9.0][:len(tokens)]
    ...     return {"usage": {"completion_tokens": 1}, "choices": [{"logprobs": {"tokens": list(tokens),
    ...                                                                          "token_logprobs": values}}]}
    >>> scored_tokens(" b<e>", answer("a", " b", "", "\\n"), ["<e>"])[1]  # the generated "\\n" echoed
    [-1.0, -2.0]
    >>> scored_tokens(" b<e>", answer("a", " b", ""), ["<e>"])[1]  # a generated BOS left out of the echo
    [-1.0, -2.0]
    """
    tokens, values, generated = echoed_tokens(answer)
    problem = None
    for cut in dict.fromkeys((generated, 0)):
        try:
            return text_tokens(text, tokens[:len(tokens) - cut], values[:len(values) - cut], special)
        except TstevalError as error:
            problem = error
    raise problem


def text_tokens(text: str, tokens: Sequence[str], values: Sequence[float | None],
                special: Sequence[str] = ()) -> tuple[list[str], list[float | None]]:
    """The strings and log-probabilities of the last tokens whose strings make up ``text`` (read from the end; a
    token that also holds text before it counts with it); the ``special`` tokens that close ``text`` are one token
    each, echoed as ``""`` or as written.

    >>> text_tokens("a b", ["<s>", "a", " b"], [None, -1.0, -2.0])
    (['a', ' b'], [-1.0, -2.0])
    >>> text_tokens("a b<e>", ["<s>", "a", " b", ""], [None, -1.0, -2.0, -3.0], ["<e>"])[1]
    [-1.0, -2.0, -3.0]
    >>> text_tokens("<e>", ["<s>", "\\n", "<e>"], [None, -1.0, -3.0], ["<e>"])[1]
    [-3.0]
    """
    closing = 0
    while (end := next((t for t in special if t and text.endswith(t)), None)) is not None:
        text, closing = text[:-len(end)], closing + 1
    joined, count = "", closing
    for token in reversed(tokens[:len(tokens) - closing]):
        if len(joined) >= len(text):
            break
        joined, count = _without(token, special) + joined, count + 1
    ends = tokens[len(tokens) - closing:] if closing else []
    # endswith: a token the server merged across the boundary counts with the text
    if closing > len(tokens) or not joined.endswith(_without(text, special)) or any(_without(t, special) for t in ends):
        raise TstevalError(f"the LM server's echoed tokens do not spell the scored text {text[:60]!r}: the server "
                           "changes the text it reads (normalisation?); score this metric in process (a run without "
                           "--lm-endpoint)")
    return (list(tokens[len(tokens) - count:]), list(values[len(values) - count:])) if count else ([], [])


def _without(text: str, special: Sequence[str]) -> str:
    for token in special:
        text = text.replace(token, "")
    return text


def stated_weights(entry: Mapping[str, object], now: float) -> dict[str, object]:
    """What a server's ``/models`` entry states about the model's weights: the entry less its id, its object type, its
    access permissions (vLLM gives each a new random id) and a ``created`` time within :data:`NOW_SECONDS` of ``now``
    (vLLM and llama.cpp's server stamp the time of asking; Ollama gives the time the weights were made).

    >>> stated_weights({"id": "m", "object": "model", "created": 1000, "owned_by": "vllm", "root": "org/m",
    ...                 "permission": [{"id": "modelperm-1"}]}, now=1001.5)
    {'owned_by': 'vllm', 'root': 'org/m'}
    >>> stated_weights({"id": "m", "created": 1000, "owned_by": "library"}, now=90000.0)
    {'created': 1000, 'owned_by': 'library'}
    """
    kept = {}
    for name, value in entry.items():
        if name in ("id", "object", "permission", "permissions") or value in (None, "", [], {}):
            continue
        if name == "created" and isinstance(value, int | float) and abs(value - now) < NOW_SECONDS:
            continue
        kept[name] = value
    return kept


class RemoteLM:
    """The model ``model`` of the OpenAI-compatible server at ``endpoint`` (see the module docstring); without one
    (None), the model the server lists when it lists one.  ``max_concurrency`` bounds the requests in flight; the key
    is read from the environment variable ``api_key_env``; ``tokenizer``: the served model's tokenizer (a Hugging Face
    id or folder, or a packaged model's name; default ``model``), which renders the prompts of ``cond_lp`` and
    ``logprop_*``.  With ``dry_run`` the server is not asked anything (not even its models): the requests a run
    would send are kept in ``client.planned`` (the server assumed to give what each metric needs, and to be as it
    stated at its last run), and the values are NaN."""

    def __init__(self, endpoint: str, model: str | None = None, *, api_key_env: str = "OPENAI_API_KEY",
                 max_concurrency: int = 4, start_text: str = "", tokenizer: str | None = None,
                 cache_dir: Path | None = None, retries: int = 5, backoff: float = 0.5, dry_run: bool = False) -> None:
        import time

        self.client = Client(endpoint, api_key_env=api_key_env, max_concurrency=max_concurrency, retries=retries,
                             backoff=backoff, cache_dir=cache_dir, dry_run=dry_run)
        with self.client.accounting("probes"):
            entries = {} if dry_run else {str(m.get("id")): m for m in self.client.get("/models").get("data") or []
                                          if isinstance(m, dict)}
        listed = list(entries)
        if model is None and len(listed) == 1:
            model = listed[0]
        elif listed and model not in listed:
            raise TstevalError(f"the LM server at {self.client.endpoint} serves {listed}"
                               + (f", not {model!r}" if model else "") + f": give --language-model {listed[0]} "
                               "(metrics.language_model in a manifest, language_model= in evaluate)")
        model = model or SMOLLM2  # a dry run asks nothing: the packaged model's name
        self.model, self.start_text = model, start_text
        weights = {} if dry_run else stated_weights(entries.get(model, {}), time.time())
        self.client.stated[model] = self.client.last_stated(model) if dry_run else (
            {"models": weights} if weights else {})
        self.tokenizer_source = tokenizer or model
        self._tokenizer: object = None
        self.served_name = model  # the columns' @NAME (tsteval.metrics.naturalness.lm_names.column_name of it)
        self.capabilities: dict[str, str | None] = {}  # "chat"/"prompt" -> how it is read, None when not given
        self.unigram: UnigramLM | None = None
        self.unigram_corpus = "none"

    @property
    def model_id(self) -> str:
        """The model's name in signatures: ``remote:ID@SERVER`` (the id the server serves it under, the base URL's
        scheme, host, port and path), ``#FINGERPRINT`` where the server gives one, and ``/models:HASH`` where its
        model list states something about the weights; never the key."""
        from tsteval.core.signature import content_hash

        stated = self.client.stated.get(self.model, {})
        fingerprint, weights = stated.get("fingerprint"), stated.get("models")
        return (f"remote:{self.model}@{self.client.server}" + (f"#{fingerprint}" if fingerprint else "")
                + (f"/models:{content_hash(weights, length=8)}" if weights else ""))

    @property
    def usage(self) -> dict[str, int]:
        """The requests sent and answers read from the cache, and the tokens the server counted."""
        return self.client.usage.as_dict()

    @property
    def accounts(self) -> dict[str, dict[str, int]]:
        """:attr:`usage` per metric as the scorers named them, and ``probes``: what each run asks first (the model
        list, one request per capability)."""
        return {name: usage.as_dict() for name, usage in self.client.accounts.items()}

    def _body(self, **fields: object) -> dict[str, object]:
        return {"model": self.model, "temperature": 0, **fields}

    def _probe(self, kind: str) -> str | None:
        """How the server gives ``kind`` (``chat``: ratings; ``prompt``: prompt log-probabilities), or None, from
        fresh requests (never cached: a refusal is probed again by the next run); a server error (retried first)
        or an unreachable server is raised as one, never read as a capability missing."""
        if self.client.dry_run:
            return "chat" if kind == "chat" else "echo"
        tries = [("chat", "/chat/completions", self._chat_body("Answer with a single digit: 1"))] if kind == "chat" \
            else [("echo", "/completions", self._echo_body("Hello world")), ("prompt_logprobs", "/completions",
                  self._body(prompt=self.start_text + "Hello world", max_tokens=1, prompt_logprobs=0))]
        with self.client.accounting("probes"):
            for how, path, body in tries:
                try:
                    answer = self.client.post(path, body, fresh=True)
                except ServerError as error:
                    if error.status in (0, 401, 403, *RETRIED):
                        raise
                    continue  # the server does not take the request: the capability is missing
                self._state(answer)
                given = len(top_answers(answer)) >= 5 if how == "chat" else any(
                    v is not None for v in echoed_tokens(answer)[1])
                if given:
                    return how
        return None

    def _state(self, answer: Mapping[str, object]) -> None:
        """Add the ``system_fingerprint`` of the run's first live answer to what the server states, and keep it
        (for a dry run's identity); the probes come before any answer read from the cache."""
        stated = self.client.stated[self.model]
        fingerprint = answer.get("system_fingerprint")
        if fingerprint and "fingerprint" not in stated:
            stated["fingerprint"] = str(fingerprint)
        self.client.remember(self.model)

    @property
    def tokenizer(self) -> object:
        """The served model's tokenizer (see the class), loaded once; one line naming ``--lm-tokenizer`` when it
        cannot be loaded (tried once)."""
        if self._tokenizer is None:
            from transformers import AutoTokenizer

            from tsteval.metrics.naturalness.causal_lm import PACKAGED_GGUF
            from tsteval.metrics.naturalness.gguf_conversion import converted_gguf

            source = self.tokenizer_source
            try:
                self._tokenizer = AutoTokenizer.from_pretrained(
                    converted_gguf(PACKAGED_GGUF[source]()) if source in PACKAGED_GGUF else source)
            except (OSError, ValueError, ImportError) as error:
                self._tokenizer = TstevalError(
                    f"cond_lp, logprop_* and slor need the served model's tokenizer (its chat template, its tokens), "
                    f"which cannot be loaded from {source!r} ({type(error).__name__}): give --lm-tokenizer "
                    "HF_ID_OR_DIR (metrics.lm.tokenizer in a manifest, lm_tokenizer= in evaluate)")
        if isinstance(self._tokenizer, TstevalError):
            raise self._tokenizer
        return self._tokenizer

    @property
    def start_id(self) -> int:
        """The tokenizer's BOS (else EOS) token, which starts a prompt without a chat template."""
        start = self.tokenizer.bos_token_id
        return start if start is not None else self.tokenizer.eos_token_id

    def require(self, metrics: Iterable[str]) -> None:
        """Refuse, in one line before any scoring request, an LM metric this server cannot give: what it needs is
        declared on the metric (:attr:`tsteval.metrics.base.Metric.server`)."""
        from tsteval.metrics.registry import METRICS

        for metric in metrics:
            needs = METRICS[metric].server
            if "tokenizer" in needs:
                _ = self.tokenizer
            for kind in sorted(needs - {"tokenizer"}):
                self._require(metric, kind)

    def _require(self, metric: str, kind: str) -> None:
        """Refuse ``metric`` where the server does not give ``kind`` (probed once per run)."""
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
        if self.client.dry_run:
            return np.full((len(questions), len(answers)), math.nan)
        rows = {q: answer_row(top_answers(a), answers) for q, a in zip(distinct, replies, strict=True)}
        return np.array([rows[q] for q in questions]).reshape(len(questions), len(answers))

    def token_log_probs(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Natural-log probability of each of the server's tokens of each text, after ``start_text``."""
        self.require(["lp_mean"])
        distinct = list(dict.fromkeys(texts))
        bodies = [self._scored_body(self.start_text + t) for t in distinct]
        replies = self.client.post_many("/completions", bodies, "LM log-probabilities")
        if self.client.dry_run:
            return [np.full(1, math.nan) for _ in texts]
        first: dict[str, float] | None = None
        by_text = {}
        for text, reply in zip(distinct, replies, strict=True):
            tokens, scored = scored_tokens(text, reply)
            if scored and scored[0] is None:  # the first token after the start: from the distribution there
                if first is None:
                    first = top_answers(self.client.post("/completions", self._body(
                        prompt=self.start_text, max_tokens=1, logprobs=FIRST_TOKEN_TOP)))
                scored[0] = first.get(tokens[0], math.nan)
            by_text[text] = np.array([math.nan if v is None else v for v in scored], dtype=float)
        return [by_text[t] for t in texts]

    def continuation_log_probs(self, prompts: Sequence[Sequence[int]],
                               continuations: Sequence[Sequence[int]]) -> list[np.ndarray]:
        """Natural-log probability of each continuation token given its prompt (token ids of :attr:`tokenizer`),
        one echo completion per distinct (prompt, continuation), read as the module says."""
        self.require(["cond_lp"])
        tokenizer = self.tokenizer
        special = sorted({str(t) for t in tokenizer.all_special_tokens} | {
            str(t) for t in tokenizer.added_tokens_decoder.values() if getattr(t, "special", False)}, key=len,
            reverse=True)
        keys = [(tuple(p), tuple(c)) for p, c in zip(prompts, continuations, strict=True)]
        distinct = list(dict.fromkeys(keys))
        texts = tokenizer.batch_decode([[*p, *c] for p, c in distinct], clean_up_tokenization_spaces=False)
        ends = tokenizer.batch_decode([list(c) for _, c in distinct], clean_up_tokenization_spaces=False)
        replies = self.client.post_many("/completions", [self._scored_body(t) for t in texts], "LM continuations")
        if self.client.dry_run:
            return [np.full(len(c), math.nan) for c in continuations]
        values = {}
        for key, end, reply in zip(distinct, ends, replies, strict=True):
            scored = scored_tokens(end, reply, special)[1]
            values[key] = np.array([math.nan if v is None else v for v in scored], dtype=float)
        return [values[key] for key in keys]

    def _scored_body(self, prompt: str) -> dict[str, object]:
        """The request for ``prompt``'s echoed token log-probabilities, as the server gives them."""
        if self.capabilities["prompt"] == "echo":
            return self._body(prompt=prompt, max_tokens=1, echo=True, logprobs=0)
        return self._body(prompt=prompt, max_tokens=1, prompt_logprobs=0)

    @property
    def has_tokenizer(self) -> bool:
        """Whether :attr:`tokenizer` loads (``slor`` needs it)."""
        try:
            return self.tokenizer is not None
        except TstevalError:
            return False

    def fit_unigram(self, texts: Sequence[str]) -> Self:
        """Estimate SLOR's add-one unigram model on the human ``texts`` counted in the served model's tokens (no
        request: :attr:`tokenizer` counts them)."""
        from tsteval.core.signature import texts_hash

        counts: Counter[int] = Counter()
        for ids in self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]:
            counts.update(ids)
        self.unigram, self.unigram_corpus = UnigramLM(counts, len(self.tokenizer)), texts_hash(texts)
        return self

    def sentence_log_probs(self, texts: Sequence[str]) -> SentenceLogProbs:
        """Summed log-probabilities of each text's tokens (from the server), their number, and once
        :meth:`fit_unigram` ran the unigram model's sums over the tokenizer's tokens of each text."""
        per_token = self.token_log_probs(texts)
        unigram = np.full(len(texts), np.nan) if self.unigram is None else np.array(
            [self.unigram.log_prob_sum(ids) for ids in self.tokenizer(list(texts), add_special_tokens=False)[
                "input_ids"]])
        return SentenceLogProbs(np.array([float(lp.sum()) for lp in per_token]), unigram,
                                np.array([len(lp) for lp in per_token]))

    def signatures(self, text_form: str | None = None) -> dict[str, str]:
        """How ``ppl``, ``lp_mean`` and (once :meth:`fit_unigram` ran) ``slor`` were computed (``text_form``: the
        form the texts were given in)."""
        from tsteval.metrics.naturalness.causal_lm import DECLARED

        fields = {"lm": self.model_id, "start": f"text:{self.start_text}" if self.start_text else "server",
                  "unit": "server-token", **({"text": text_form} if text_form else {})}
        unigram = {"unigram": "add-one", "unigram_corpus": self.unigram_corpus, "tokenizer": self.tokenizer_source}
        return {name: str(DECLARED[name].signature(("numpy", "httpx"), **fields, **(unigram if name == "slor" else {})))
                for name in ("ppl", "lp_mean", *(("slor",) if self.unigram is not None else ()))}

    def close(self) -> None:
        """Close the connections and the answer cache."""
        self.client.close()
