"""The remote LM backend against a real llama-cpp-python server (``make llama-server``) serving the packaged SmolLM2
GGUF on 127.0.0.1: values beside the in-process model on DualRL pairs, faults injected by a proxy in front of the
server, the server killed and restarted, and each failure one line naming the fix; the key written nowhere."""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import numpy as np
import pytest

import tsteval
from tsteval.backends.client import ServerError
from tsteval.backends.llama_server import LlamaServer, free_port
from tsteval.backends.remote import RemoteLM
from tsteval.core.errors import TstevalError
from tsteval.metrics.judges.cond_lp import cond_lp_matrix, continuations
from tsteval.metrics.judges.logprop import logprop_scores
from tsteval.metrics.judges.prefix_scoring import continuation_log_probs
from tsteval.metrics.judges.prompts import chosen_templates, fill, render
from tsteval.metrics.judges.rating import expected_rating, judge_matrix
from tsteval.metrics.naturalness.causal_lm import CausalLM, smollm2_path
from tsteval.readers.dualrl import load_dualrl

ALIAS = "smollm2-q4"
START = "<|im_start|>"  # SmolLM2's BOS as text: what the in-process model reads before a scored text
KEY = "sk-test-0123456789abcdef"
# Pairs compared here: judge_fluency on the 200 of benchmarks/reproductions/remote_agreement.py took the server 47 min
# on two shared cores (llama-cpp-python 0.2.62 sorts the whole vocabulary in Python for every token it returns a
# value for), too long for the suite.
PAIRS = 6
# Above the largest differences measured (benchmarks/results/remote_agreement.md: judge_fluency 0.104 over 200
# pairs, lp_mean 0.235 over 200; 0.054 and 0.110 over these six): llama.cpp multiplies Q4_1 weights by activations
# quantised to 8 bits, the in-process model de-quantised weights by float32 activations.  The values are
# deterministic, so r over these six pairs (0.970 and 0.9995) is a fixed figure; SmolLM2's fluency ratings span a
# few tenths of a point, so the quantisation's noise leaves r = 0.849 over the 200 (lp_mean: 0.9996).
RATING_TOLERANCE, RATING_R = 0.15, 0.9
LP_TOLERANCE, LP_R = 0.3, 0.99
# cond_lp and LogProp (an echo request per prompt: llama-cpp-python 0.2.62 takes seconds for each, sorting the
# vocabulary in Python for every echoed token): tolerances above the largest differences of
# benchmarks/results/remote_agreement.md (the same quantisation as above).
CONTINUATION_TOLERANCE, LOGPROP_STYLE_TOLERANCE = 0.5, 0.05


@pytest.fixture(scope="module")
def server() -> Iterator[LlamaServer]:
    with LlamaServer(smollm2_path(), ALIAS, threads=2) as running:
        yield running


@pytest.fixture(scope="module")
def pairs(data_root: Path) -> tuple[list[str], list[str]]:
    """The first DualRL Yelp pairs of the DualRL system (inputs, outputs) restored to sentence case."""
    frame = load_dualrl("yelp", ["DualRL"]).frame.head(PAIRS)
    from tsteval.core.text_form import as_written

    return as_written(frame["input"].tolist(), "tokenised-lowercase")[0], \
        as_written(frame["output"].tolist(), "tokenised-lowercase")[0]


def remote(url: str, tmp_path: Path, **options: object) -> RemoteLM:
    return RemoteLM(url, ALIAS, start_text=START, cache_dir=tmp_path / "answers", **options)


class Proxy:
    """A proxy in front of the server on 127.0.0.1 that counts the requests the server answers (by path and body)
    and answers the next requests with the statuses of :attr:`faults` instead of forwarding them; a request the
    server does not take (it is down) is a 502.  With ``new_shape`` it rewrites chat answers into the
    ``logprobs.content[].top_logprobs`` shape."""

    def __init__(self, upstream: str, new_shape: bool = False) -> None:
        self.upstream, self.new_shape = upstream, new_shape
        self.answered: Counter[str] = Counter()
        self.usages: list[tuple[str, dict, dict]] = []  # (path, body, the server's usage) of each answer
        self.faults: list[int] = []
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _reply(self, status: int, body: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _forward(self, method: str) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with proxy.lock:
                    fault = proxy.faults.pop(0) if proxy.faults and method == "POST" else None
                if fault is not None:
                    self._reply(fault, b'{"error": {"message": "injected"}}', {"Retry-After": "0.1"})
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type")}
                try:
                    answer = httpx.request(method, proxy.upstream + self.path, content=body, headers=headers,
                                           timeout=300)
                except httpx.HTTPError:
                    self._reply(502, b'{"error": "upstream down"}', {})
                    return
                content = answer.content
                if method == "GET":
                    proxy.usages.append((self.path, {}, {}))
                if answer.status_code == 200 and method == "POST":
                    with proxy.lock:
                        proxy.answered[hashlib.sha256(self.path.encode() + body).hexdigest()] += 1
                        proxy.usages.append((self.path, json.loads(body), answer.json().get("usage") or {}))
                    if proxy.new_shape and self.path.endswith("/chat/completions"):
                        content = json.dumps(in_current_shape(answer.json())).encode()
                self._reply(answer.status_code, content, {"Content-Type": "application/json"})

            def do_GET(self) -> None:
                self._forward("GET")

            def do_POST(self) -> None:
                self._forward("POST")

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}/v1"

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


def in_current_shape(answer: dict) -> dict:
    """A chat answer in llama-cpp-python's shape (``tokens``, ``top_logprobs`` dicts) in OpenAI's current one."""
    choice = answer["choices"][0]
    old = choice["logprobs"]
    choice["logprobs"] = {"content": [
        {"token": token, "logprob": value, "top_logprobs": [{"token": t, "logprob": v} for t, v in tops.items()]}
        for token, value, tops in zip(old["tokens"], old["token_logprobs"], old["top_logprobs"], strict=True)]}
    return answer


def pearson(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(a, b)[0, 1])


def test_values_match_in_process(server: LlamaServer, pairs: tuple[list[str], list[str]], tmp_path: Path) -> None:
    """judge_fluency (its first template) and lp_mean through the server beside the in-process model on the same
    GGUF, on DualRL pairs: within the tolerance measured on 200 pairs, and correlated almost perfectly."""
    inputs, outputs = pairs
    lm, local = remote(server.url, tmp_path, max_concurrency=2), CausalLM("smollm2", threads=1)
    targets = ["positive"] * len(inputs)
    far = judge_matrix("judge_fluency", inputs, outputs, targets, lm, which=[1])[:, 0]
    near = judge_matrix("judge_fluency", inputs, outputs, targets, local, which=[1])[:, 0]
    rating_gap = float(np.max(np.abs(far - near)))
    far_lp = np.array([v.mean() for v in lm.token_log_probs(outputs)])
    near_lp = np.array([v.mean() for v in local.token_log_probs(outputs)])
    lp_gap = float(np.max(np.abs(far_lp - near_lp)))
    print(f"judge_fluency: max |diff| {rating_gap:.4f}, r {pearson(far, near):.5f}; lp_mean: max |diff| "
          f"{lp_gap:.4f}, r {pearson(far_lp, near_lp):.5f}; {lm.usage}")
    assert len(far) == PAIRS and not np.isnan(far).any() and not np.isnan(far_lp).any()
    assert rating_gap < RATING_TOLERANCE and pearson(far, near) > RATING_R
    assert lp_gap < LP_TOLERANCE and pearson(far_lp, near_lp) > LP_R
    # the same token counts: the server reads the texts as the in-process tokenizer cuts them
    assert [len(v) for v in lm.token_log_probs(outputs)] == [len(v) for v in local.token_log_probs(outputs)]
    lm.close()


def test_continuations_match_in_process(server: LlamaServer, pairs: tuple[list[str], list[str]],
                                        tmp_path: Path) -> None:
    """cond_lp (a plain template) and LogProp (in the chat template) through the server, their prompts rendered by
    the packaged SmolLM2 tokenizer and decoded to text: the same number of continuation tokens as in process, values
    within the tolerance measured on DualRL pairs (benchmarks/results/remote_agreement.md).  An empty output is
    scored too (its end token only).  LogProp on one pair: its three chat prompts are the longest echoes here."""
    inputs, outputs = [pairs[0][0], pairs[0][2]], [pairs[1][0], ""]
    targets = ["positive"] * len(inputs)
    lm, local = remote(server.url, tmp_path, max_concurrency=2, tokenizer="smollm2"), CausalLM("smollm2", threads=1)
    prompts, conts = [render(local, f"Text: {x}", False) for x in inputs], continuations(local, outputs, False)
    far_tokens, near_tokens = lm.continuation_log_probs(prompts, conts), continuation_log_probs(local, prompts, conts)
    assert [len(v) for v in far_tokens] == [len(c) for c in conts] == [len(v) for v in near_tokens]
    far = {"cond_lp": cond_lp_matrix(inputs, outputs, targets, lm, which=[2]),
           **logprop_scores(inputs[:1], outputs[:1], targets[:1], lm)}
    near = {"cond_lp": cond_lp_matrix(inputs, outputs, targets, local, which=[2]),
            **logprop_scores(inputs[:1], outputs[:1], targets[:1], local)}
    gaps = {name: float(np.max(np.abs(far[name] - near[name]))) for name in far}
    print(f"continuations: max |diff| {gaps}; {lm.usage}")
    assert all(np.isfinite(v).all() for v in far.values())
    assert gaps["cond_lp"] < CONTINUATION_TOLERANCE and gaps["logprop_content"] < CONTINUATION_TOLERANCE
    assert gaps["logprop_style"] < LOGPROP_STYLE_TOLERANCE
    lm.close()


def test_a_dry_run_sends_nothing_and_counts_what_the_run_sends(server: LlamaServer, tmp_path: Path, fresh_cache: Path,
                                                              capsys: pytest.CaptureFixture) -> None:
    """``tsteval score --dry-run`` asks the server nothing (counted at a proxy), writes nothing, and prints per
    metric the requests that the real run then sends (counted at the proxy) and their prompt tokens (counted again
    here by the tokenizer); after the run, a dry run finds every request cached."""
    from tsteval.cli import main

    (tmp_path / "in.txt").write_text("the food was cold .\nthe staff was rude .\n", encoding="utf-8")
    (tmp_path / "out.txt").write_text("the food was warm .\nthe staff was kind .\n", encoding="utf-8")
    proxy = Proxy(server.url.removesuffix("/v1"))
    command = ["score", "--pairs", str(tmp_path / "in.txt"), str(tmp_path / "out.txt"), "--source-style",
               "negative", "--target-style", "positive", "--metrics",
               "judge_content:template=1,cond_lp,lp_mean@smollm2", "--lm-endpoint", proxy.url, "--language-model",
               ALIAS, "--lm-start-text", START, "--lm-tokenizer", "smollm2", "--quiet"]
    try:
        assert main([*command, "--dry-run", "--out", str(tmp_path / "dry")]) == 0
        printed = capsys.readouterr().out
        assert sum(proxy.answered.values()) == 0 and not (tmp_path / "dry").exists()
        rows = {line.split()[0].rstrip(","): [int(v) for v in line.split()[-3:]] for line in printed.splitlines()
                if line.startswith(("judge_content", "cond_lp", "ppl", "total"))}
        assert rows["judge_content"][:2] == [2, 0] and rows["cond_lp"][:2] == [3 * 2 * 2, 0]  # 3 templates x 2
        assert rows["ppl"][:2] == [2, 0] and "nothing was sent" in printed
        tokenizer = CausalLM("smollm2", threads=1).tokenizer
        chat = [tokenizer.apply_chat_template([{"role": "user", "content": fill(
            str(chosen_templates("judge_content", [1])[0]["prompt"]), input=x, output=y, style="positive",
            source="negative")}], add_generation_prompt=True, tokenize=False)
            for x, y in (("The food was cold.", "The food was warm."), ("The staff was rude.", "The staff was kind."))]
        assert rows["judge_content"][2] == sum(len(tokenizer(t, add_special_tokens=False)["input_ids"]) for t in chat)
        assert rows["ppl"][2] == sum(len(tokenizer(START + t, add_special_tokens=False)["input_ids"])
                                     for t in ("The food was warm.", "The staff was kind."))
        command[command.index("judge_content:template=1,cond_lp,lp_mean@smollm2")] = "judge_content:template=1," \
            "lp_mean@smollm2"
        assert main([*command, "--out", str(tmp_path / "run")]) == 0
        ran = capsys.readouterr().out
        scoring = sum(proxy.answered.values()) - 3  # less the two probes and the first token's distribution
        assert scoring == rows["judge_content"][0] + rows["ppl"][0]
        check_recorded_cost(json.loads((tmp_path / "run" / "lm_server.json").read_text()), proxy, ran)
        assert main([*command, "--dry-run", "--out", str(tmp_path / "again")]) == 0
        again = capsys.readouterr().out
    finally:
        proxy.close()
    total = next(line for line in again.splitlines() if line.startswith("total")).split()
    assert total[1:3] == ["0", str(scoring)]  # nothing new to send, every request cached


def check_recorded_cost(cost: dict, proxy: Proxy, printed: str) -> None:
    """``lm_server.json`` of a ``score`` run of ``judge_content`` and ``lp_mean`` against what the proxy saw the
    server answer: per metric the requests and the tokens of the server's ``usage``, the probes apart; printed."""
    probes = {"Answer with a single digit: 1", START + "Hello world"}
    seen: dict[str, Counter] = {}
    for path, body, usage in proxy.usages:
        text = body.get("prompt") or body["messages"][0]["content"] if body else ""
        name = "probes" if text in probes or not body else "judge_content" if path.endswith("/chat/completions") else \
            "ppl, lp_mean, slor"
        seen.setdefault(name, Counter()).update(requests=1, prompt_tokens=usage.get("prompt_tokens", 0),
                                                completion_tokens=usage.get("completion_tokens", 0))
    assert {name: {k: counts[k] for k in seen[name]} for name, counts in cost["metrics"].items()} == seen
    assert cost["requests"] == sum(c["requests"] for c in seen.values()) and cost["cached"] == cost["retries"] == 0
    assert cost["prompt_tokens"] == sum(c["prompt_tokens"] for c in seen.values()) > 0
    assert cost["server"] == proxy.url and KEY not in json.dumps(cost)  # scheme, host, port and path: no key
    total = next(line for line in printed.splitlines() if line.startswith("total")).split()
    assert total[1:] == [str(cost[k]) for k in ("requests", "retries", "cached", "prompt_tokens", "completion_tokens")]
    assert f"LM server {cost['server']} (remote:{ALIAS}@{cost['server']}" in printed


def test_a_manifest_dry_run_asks_no_server_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                              fresh_cache: Path) -> None:
    """``metrics.lm.dry_run`` in a manifest: nothing listens at the endpoint and nothing is needed there; no run
    folder; without a tokenizer the prompt tokens are estimated at 4 characters per token (recomputed here)."""
    from tsteval.cli import main

    rows = [("the food was cold .", "the food was warm ."), ("rude staff !", "kind staff !"),
            ("the food was cold .", "the food was hot .")]
    (tmp_path / "t.csv").write_text("input,output,source_style,target_style\n" +
                                    "".join(f"{x},{y},negative,positive\n" for x, y in rows), encoding="utf-8")
    manifest = {"transfers": {"table": str(tmp_path / "t.csv")}, "output": str(tmp_path / "run"),
                "metrics": {"names": ["judge_style:template=1"], "language_model": "lab/served-model",
                            "lm": {"endpoint": f"http://127.0.0.1:{free_port()}/v1", "dry_run": True}}}
    (tmp_path / "m.yaml").write_text(json.dumps(manifest), encoding="utf-8")
    assert main(["run", str(tmp_path / "m.yaml"), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert not (tmp_path / "run").exists() and "estimated at 4 characters per token" in printed
    line = next(line for line in printed.splitlines() if line.startswith("judge_style")).split()
    from tsteval.core.text_form import as_written

    written = as_written([t for pair in rows for t in pair], "tokenised-lowercase")[0]
    template = str(chosen_templates("judge_style", [1])[0]["prompt"])
    questions = {fill(template, input=written[2 * i], output=written[2 * i + 1], style="positive",
                      source="negative") for i in range(len(rows))}
    assert line[1:] == [str(len(questions)), "0", str(sum(math.ceil(len(q) / 4) for q in questions))]
    card = tsteval.evaluate([x for x, _ in rows], [y for _, y in rows], source_style="negative",
                            target_style="positive", metrics=["judge_style:template=1"], language_model="lab/x",
                            lm_endpoint=manifest["metrics"]["lm"]["endpoint"], dry_run=True)
    assert card.metrics == [] and "judge_style" in capsys.readouterr().out  # evaluate: printed, nothing scored


def test_the_pools_threads_open_one_answer_cache(tmp_path: Path) -> None:
    """Threads asking for a model's new answer cache at once get one connection (several locked each other out of
    the new SQLite file: a dry run's first requests come from the pool)."""
    from tsteval.backends.client import Client

    client = Client("http://127.0.0.1:9/v1", cache_dir=tmp_path, dry_run=True)
    start = threading.Barrier(8)

    def first() -> object:
        start.wait()
        return client._cache("m")

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8) as pool:
        opened = list(pool.map(lambda _: first(), range(8)))
    assert len({id(cache) for cache in opened}) == 1 and len(client.caches) == 1
    assert client.post_many("/completions", [{"model": "m", "prompt": str(i)} for i in range(16)], "dry") == [{}] * 16
    assert len(client.planned) == 16
    client.close()


def test_both_response_shapes_give_the_same_ratings(server: LlamaServer, pairs: tuple[list[str], list[str]],
                                                    tmp_path: Path) -> None:
    """The server's own shape (top_logprobs dicts) and OpenAI's current one (content[].top_logprobs lists, rewritten
    by the proxy from the server's answers) give the same ratings."""
    questions = [fill(str(chosen_templates("judge_fluency", [1])[0]["prompt"]), input="", output=y, style="", source="")
                 for y in pairs[1][:3]]
    proxy = Proxy(server.url.removesuffix("/v1"), new_shape=True)
    try:
        old = remote(server.url, tmp_path / "old").answer_log_probs(questions, list("12345"))
        new = remote(proxy.url, tmp_path / "new").answer_log_probs(questions, list("12345"))
    finally:
        proxy.close()
    assert np.isfinite(old).all() and np.array_equal(old, new)
    assert ((expected_rating(new) >= 1) & (expected_rating(new) <= 5)).all()


def test_killed_server_resumes_from_the_cache_without_repeating_a_request(
        pairs: tuple[list[str], list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server killed mid-run: the run stops with one line; restarted, the rerun reads every earlier answer from
    the cache (the restarted server is the same server), and the server answers no scoring request twice (counted
    by the proxy in front of it); a third run asks only for the model list and its probe.  The key is in no cache
    file, error, signature or record."""
    monkeypatch.setenv("TEST_LM_KEY", KEY)
    texts = list(dict.fromkeys(pairs[1][:8]))
    port = free_port()
    server = LlamaServer(smollm2_path(), ALIAS, port=port, threads=2, api_key=KEY).start()
    proxy = Proxy(f"http://127.0.0.1:{port}")
    try:
        first = remote(proxy.url, tmp_path, api_key_env="TEST_LM_KEY", max_concurrency=1, retries=1, backoff=0.05)
        first.require(["lp_mean"])
        done = threading.Event()

        def kill_after_ten() -> None:
            while sum(proxy.answered.values()) < 4 and not done.is_set():  # the probe, then three texts
                threading.Event().wait(0.05)
            server.stop()

        killer = threading.Thread(target=kill_after_ten)
        killer.start()
        with pytest.raises(ServerError) as stopped:
            first.token_log_probs(texts)
        done.set()
        killer.join()
        message = str(stopped.value)
        assert "\n" not in message and "running again resumes" in message and KEY not in message
        answered_before = sum(proxy.answered.values())  # by the server, before it was killed: the probe, texts
        first.close()
        server = LlamaServer(smollm2_path(), ALIAS, port=port, threads=2, api_key=KEY).start()
        second = remote(proxy.url, tmp_path, api_key_env="TEST_LM_KEY")
        values = second.token_log_probs(texts)
        third = remote(proxy.url, tmp_path, api_key_env="TEST_LM_KEY")
        assert all(np.array_equal(a, b) for a, b in zip(third.token_log_probs(texts), values, strict=True))
    finally:
        proxy.close()
        server.stop()
    probe = first._echo_body("Hello world")
    scoring = Counter(json.dumps(body, sort_keys=True) for _, body, _ in proxy.usages if body and body != probe)
    assert sum(body == probe for _, body, _ in proxy.usages) == 3  # each run probes afresh (never from the cache)
    assert second.usage["cached"] == answered_before - 1 >= 3 and answered_before - 1 < len(texts)
    assert max(scoring.values()) == 1  # no scoring request answered twice
    assert third.usage["requests"] == 2 and third.usage["cached"] == len(texts) + 1  # the model list, the probe
    assert sum(scoring.values()) == len(texts) + 1  # the texts, the first-token distribution
    records = json.dumps([second.usage, third.usage, second.signatures("as-is"), second.model_id])
    stored = b"".join(p.read_bytes() for p in (tmp_path / "answers").iterdir())
    assert KEY not in records and KEY.encode() not in stored and "TEST_LM_KEY" not in records


def one_line(error: pytest.ExceptionInfo) -> str:
    message = str(error.value)
    assert "\n" not in message and KEY not in message
    return message


def test_failures_are_one_line_naming_the_fix(server: LlamaServer, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A wrong model name, a refused connection (tried six times), a bad key and a server error on the probes (read
    as a server error, with the server's own message, not as a capability missing)."""
    with pytest.raises(TstevalError) as wrong:
        RemoteLM(server.url, "llama-70b", cache_dir=tmp_path)
    assert f"--language-model {ALIAS}" in one_line(wrong)
    with pytest.raises(TstevalError) as refused:
        RemoteLM(f"http://127.0.0.1:{free_port()}/v1", ALIAS, cache_dir=tmp_path, backoff=0.01)
    assert "cannot reach" in one_line(refused) and "tried six times" in one_line(refused)
    assert "--lm-endpoint" in one_line(refused)
    monkeypatch.setenv("TEST_LM_KEY", "sk-wrong-key")
    with LlamaServer(smollm2_path(), ALIAS, threads=1, api_key=KEY, logits_all=False) as locked:
        with pytest.raises(TstevalError) as bad_key:
            RemoteLM(locked.url, ALIAS, api_key_env="TEST_LM_KEY", cache_dir=tmp_path)
        assert "TEST_LM_KEY" in one_line(bad_key) and "sk-wrong-key" not in str(bad_key.value)
        monkeypatch.setenv("TEST_LM_KEY", KEY)
        lm = RemoteLM(locked.url, ALIAS, api_key_env="TEST_LM_KEY", cache_dir=tmp_path, backoff=0.01)
        for metric in ("judge_content", "lp_mean"):  # llama-cpp-python answers 500 for logprobs without logits_all
            with pytest.raises(TstevalError) as lacking:
                lm.require([metric])
            assert "answered 500 six times (logprobs is not supported for models created with logits_all=False)" \
                in one_line(lacking) and "needs" not in one_line(lacking)
        assert lm.usage["requests"] == 1 + 2 * 6  # the model list, each probe six times: nothing was scored
    with pytest.raises(TstevalError) as no_tokenizer:  # the served name is no tokenizer this machine can load
        remote(server.url, tmp_path).require(["cond_lp"])
    assert "cond_lp" in one_line(no_tokenizer) and "--lm-tokenizer" in one_line(no_tokenizer)


def test_evaluate_scores_through_the_server(server: LlamaServer, tmp_path: Path, fresh_cache: Path) -> None:
    """evaluate(..., lm_endpoint=...) without a model name: the one the server lists, the columns under the served
    name (``lp_mean`` named alone too: the served model scores it, not the Kneser-Ney default), signatures naming the
    server and the model; an explicit ``smollm2`` the server does not serve is refused, not swapped for its model; a
    metric the server cannot give is refused before anything is sent."""
    with pytest.raises(TstevalError, match=f"serves \\['{ALIAS}'\\], not 'smollm2': give --language-model {ALIAS}"):
        tsteval.evaluate(["a"], ["b"], source_style="negative", target_style="positive", metrics=["lp_mean"],
                         lm_endpoint=server.url, language_model="smollm2")
    card = tsteval.evaluate(["the food was cold ."], ["the food was warm ."], source_style="negative",
                            target_style="positive", metrics=["judge_fluency:template=1", "lp_mean"],
                            lm_endpoint=server.url, lm_start_text=START)
    assert {"judge_fluency@smollm2-q4", "lp_mean@smollm2-q4", "ppl@smollm2-q4"} <= set(card.frame.columns)
    assert not any(c.endswith("@kn3") for c in card.frame.columns)
    assert f"lm:remote:smollm2-q4@http://127.0.0.1:{server.port}/v1/models:" in card.signatures[
        "judge_fluency@smollm2-q4"]  # the server and the model, and a hash of what its model list states
    value = float(card.frame["lp_mean@smollm2-q4"].iloc[0])
    assert -15 < value < 0 and not math.isnan(float(card.frame["judge_fluency@smollm2-q4"].iloc[0]))
    assert "slor@smollm2-q4" not in card.frame.columns  # its unigram model needs the served model's tokenizer
    # with the tokenizer, slor too: recomputed here from lp_mean and an add-one unigram model of the inputs
    card = tsteval.evaluate(["the food was cold ."], ["the food was warm ."], source_style="negative",
                            target_style="positive", metrics=["lp_mean@smollm2"], lm_endpoint=server.url,
                            language_model=ALIAS, lm_start_text=START, lm_tokenizer="smollm2")
    tokenizer = CausalLM("smollm2", threads=1).tokenizer
    counts = Counter(tokenizer("The food was cold.", add_special_tokens=False)["input_ids"])
    ids = tokenizer("The food was warm.", add_special_tokens=False)["input_ids"]
    unigram = sum(math.log(counts[t] + 1) - math.log(sum(counts.values()) + len(tokenizer)) for t in ids)
    assert float(card.frame["slor@smollm2-q4"].iloc[0]) == pytest.approx(value - unigram / len(ids), abs=1e-9)
    assert "unigram_corpus" in card.signatures["slor@smollm2-q4"]
    with pytest.raises(TstevalError, match="give --lm-tokenizer"):
        tsteval.evaluate(["a"], ["b"], source_style="negative", target_style="positive", metrics=["cond_lp"],
                         lm_endpoint=server.url, language_model=ALIAS)


class StandIn:
    """A stand-in OpenAI-compatible server on 127.0.0.1 for what llama-cpp-python's cannot be made to do: it serves
    ``model`` chat answers whose first token's top log-probabilities are ``ratings`` (none with ``logprobs`` False,
    as a server without them), states ``listed`` in its ``/models`` entry and ``fingerprint`` in its answers, and
    answers the next requests by :attr:`faults` instead (a status, or ``"drop"``: the connection closed unanswered).
    :attr:`requests` counts what it was sent by path."""

    def __init__(self, ratings: dict[str, float], *, model: str = "default", port: int = 0, logprobs: bool = True,
                 listed: dict | None = None, fingerprint: str | None = None) -> None:
        self.ratings, self.model, self.logprobs = ratings, model, logprobs
        self.listed, self.fingerprint = listed or {}, fingerprint
        self.requests: Counter[str] = Counter()
        self.faults: list[int | str] = []
        self.keys: list[str] = []  # the Authorization headers received
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _reply(self, status: int, answer: dict) -> None:
                body = json.dumps(answer).encode()
                self.send_response(status)
                if status == 429:
                    self.send_header("Retry-After", "0.2")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                sent = json.loads(self.rfile.read(length)) if length else {}
                stand_in.requests[self.path] += 1
                stand_in.keys.append(self.headers.get("Authorization", ""))
                fault = stand_in.faults.pop(0) if stand_in.faults else None
                if fault == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if fault is not None:
                    self._reply(int(fault), {"error": {"message": "injected"}})
                    return
                if self.path.endswith("/models"):
                    self._reply(200, {"object": "list", "data": [{"id": stand_in.model, "object": "model",
                                                                  **stand_in.listed}]})
                    return
                question = sent["messages"][0]["content"]
                tops = [{"token": t, "logprob": v} for t, v in stand_in.ratings.items()]
                logprobs = {"content": [{**tops[0], "top_logprobs": tops}]} if stand_in.logprobs else None
                self._reply(200, {"object": "chat.completion", "model": stand_in.model,
                                  **({"system_fingerprint": stand_in.fingerprint} if stand_in.fingerprint else {}),
                                  "choices": [{"index": 0, "logprobs": logprobs, "finish_reason": "length",
                                               "message": {"role": "assistant", "content": tops[0]["token"]}}],
                                  "usage": {"prompt_tokens": len(question.split()), "completion_tokens": 1}})

            do_GET = do_POST = _answer

        self.http = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.http.server_address[1]
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def scoring(self) -> int:
        """The chat requests it answered (probes and ratings)."""
        return self.requests["/v1/chat/completions"]

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


HIGH = {"5": -0.1, "4": -2.5, "3": -4.0, "2": -5.0, "1": -6.0}  # rates about 5
LOW = {"1": -0.1, "2": -2.5, "3": -4.0, "4": -5.0, "5": -6.0}  # rates about 1
QUESTIONS = ["Rate: the food was warm.", "Rate: the staff was kind.", "Rate: the food was warm."]


def ratings(url: str, cache: Path, **options: object) -> tuple[RemoteLM, np.ndarray]:
    lm = RemoteLM(url, cache_dir=cache, backoff=0.01, **options)
    return lm, expected_rating(lm.answer_log_probs(QUESTIONS, list("12345")))


def test_two_servers_under_one_name_never_share_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two servers serving different weights under the name ``default``, one cache: the second is asked and gives
    its own ratings under its own signature; the first restarted on its port resumes from the cache (its probe
    only); the same port and name with other weights (its model list or fingerprint says so) is asked again.  The
    key, sent to the servers, is in no cache key, file or signature."""
    monkeypatch.setenv("TEST_LM_KEY", KEY)
    cache = tmp_path / "answers"
    first, second = StandIn(HIGH), StandIn(LOW)
    try:
        lm_first, high = ratings(first.url, cache, api_key_env="TEST_LM_KEY")
        lm_second, low = ratings(second.url, cache, api_key_env="TEST_LM_KEY")
        assert second.scoring == 1 + 2  # the probe and the two distinct questions: nothing from the first's answers
        assert high == pytest.approx([4.9] * 3, abs=0.1) and low == pytest.approx([1.1] * 3, abs=0.1)
        assert [lm_first.model_id, lm_second.model_id] == [f"remote:default@{u}" for u in (first.url, second.url)]
        port = first.port
        first.close()
        first = StandIn(HIGH, port=port)  # restarted
        again = ratings(first.url, cache)[1]
        assert first.scoring == 1 and np.array_equal(again, high)  # the probe; every answer from the cache
        first.close()
        for changed in ({"listed": {"owned_by": "lab", "meta": {"n_params": 8_030_261_248}}},
                        {"fingerprint": "fp_requantised"}):
            first = StandIn(LOW, port=port, **changed)  # other weights behind the same address and name
            lm, values = ratings(first.url, cache)
            assert first.scoring == 1 + 2 and values == pytest.approx(low)
            assert lm.model_id.startswith(f"remote:default@{first.url}") and lm.model_id != lm_first.model_id
            first.close()
        assert second.keys[0] == f"Bearer {KEY}"
    finally:
        first.close()
        second.close()
    stored = b"".join(path.read_bytes() for path in cache.iterdir())
    assert KEY.encode() not in stored and KEY not in lm_first.model_id + lm_second.model_id


def test_server_errors_are_retried_and_reported_as_server_errors(tmp_path: Path) -> None:
    """A 500 and a dropped connection on the first requests (the model list, the probe) are retried and the run
    goes on, as are two 429s (waiting the Retry-After asked) and a 500 among the ratings, which come out as without
    them; a 500 on every try is one line saying the server answered 500 six times, never a capability missing; a 400
    on the probe is the capability missing."""
    server = StandIn(HIGH)
    try:
        server.faults = ["drop", 500]  # the model list: dropped, then a 500
        lm = RemoteLM(server.url, cache_dir=tmp_path, backoff=0.01, max_concurrency=1)
        assert lm.usage["retries"] == 2
        server.faults = ["drop", 503]  # the probe
        lm.require(["judge_style"])
        server.faults = [429, 429, 500]  # the ratings: twice Retry-After 0.2 s (the backoff is 0.01 s), a 500
        start = time.perf_counter()
        values = expected_rating(lm.answer_log_probs(QUESTIONS, list("12345")))
        assert time.perf_counter() - start >= 0.4 and lm.usage["retries"] == 2 + 2 + 3 and not server.faults
        assert np.array_equal(values, ratings(server.url, tmp_path / "clean")[1])  # as without the faults
        for fault in (500, 400):
            lm = RemoteLM(server.url, cache_dir=tmp_path / "other", backoff=0.01)
            server.faults = [fault] * 6
            with pytest.raises(TstevalError) as failed:
                lm.require(["judge_style"])
            message = one_line(failed)
            if fault == 500:
                assert isinstance(failed.value, ServerError) and not server.faults
                assert f"the LM server {server.url}/chat/completions answered 500 six times (injected)" in message
                assert "needs" not in message and "running again resumes" in message
            else:  # the server does not take the request: the capability is missing
                assert "judge_style needs chat completions with logprobs" in message and len(server.faults) == 5
    finally:
        server.close()


def test_a_refusal_is_not_cached(tmp_path: Path) -> None:
    """A server without logprobs is refused; fixed (a newer build), the next run probes again and scores."""
    server = StandIn(HIGH, logprobs=False)
    try:
        with pytest.raises(TstevalError) as refused:
            ratings(server.url, tmp_path)
        assert "judge_content needs chat completions with logprobs" in one_line(refused) and server.scoring == 1
        server.logprobs = True
        assert ratings(server.url, tmp_path)[1] == pytest.approx([4.9] * 3, abs=0.1)
        assert server.scoring == 1 + 1 + 2  # the refused probe, the new one, the two questions
    finally:
        server.close()


def test_what_a_metric_needs_from_a_server_is_declared_on_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new LM metric declares what it needs from a server on its Metric (``server``), and the server is probed for
    that, with no table of the backend to edit; an LM metric declaring nothing is refused when declared."""
    from dataclasses import replace

    from tsteval.metrics import registry
    from tsteval.metrics.base import Metric

    with pytest.raises(ValueError, match="an LM metric declares what it needs from an LM server"):
        Metric("judge_new", "style", True, (1.0, 5.0), "a new judge", frozenset({"language_model"}))
    new = replace(registry.METRICS["judge_style"], name="judge_new", server=frozenset({"chat"}))
    monkeypatch.setattr(registry, "METRICS", {**registry.METRICS, "judge_new": new})
    server = StandIn(HIGH, logprobs=False)
    try:
        lm = RemoteLM(server.url, cache_dir=tmp_path, backoff=0.01)
        with pytest.raises(TstevalError, match="judge_new needs chat completions with logprobs"):
            lm.require(["judge_new"])
        assert server.scoring == 1  # its probe
    finally:
        server.close()
