"""Fine-tuning a sentence encoder on human judgements: the recipe of ``tsteval train-metric``.

Three shapes, two for content and one for naturalness.  ``bi``: the encoder embeds input and output apart (mean
pooling, L2 norm, as ``sbert`` reads all-MiniLM-L6-v2) and the score is their cosine, so scoring costs what
``sbert`` costs and embeddings are cached.  ``cross``: the encoder reads input and output together, one ``[CLS]
input [SEP] output [SEP]`` sequence, and a linear head on the pooled output gives the score (one forward per pair,
nothing cached).  ``single``: the encoder reads the output alone and a linear head gives its score (naturalness, a
property of the output; the input is not read).  The naturalness shape is for the evidence
(``benchmarks/evidence/learned_naturalness.yaml``): out of set it is below Gemma 3's LM scores, so the command line
trains content only.

The target is scale-free: every batch holds pairs of one rated set only, and the loss is a pairwise ranking loss
over them (CoSENT, Su 2022: ``log(1 + sum exp(s_j - s_i))`` over the pairs with rating i > rating j, the scores
scaled by ``scale``), so only the order of the ratings within a set matters, never a set's scale (1-5, 0-1, 0-100)
or its mean.  A set weighs by its batches: each epoch draws at most ``per_set`` pairs of a set (seeded), so a set of
6,000 pairs does not outweigh one of 600 tenfold.

A tenth of each set's inputs (seeded; every output of an input goes with it) is held out; the model is evaluated
on them ``evaluations`` times an epoch (the mean over sets of the Spearman correlation with the ratings), and the
best state is kept: early stopping.  Seeded and deterministic for a given thread count (torch's CPU kernels
reduce in a fixed order per thread count); the thread count is recorded.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from tsteval.core.errors import TstevalError

SHAPES = ("bi", "cross", "single")
# aspect -> the shapes that score it (the first is the default)
ASPECT_SHAPES = {"content": ("bi", "cross"), "naturalness": ("single",)}
Log = Callable[[str], None]


@dataclass(frozen=True)
class Recipe:
    """The settings of one training run (all recorded in the saved model's manifest)."""

    shape: str = "bi"
    epochs: int = 1
    batch_size: int = 32
    learning_rate: float = 2e-5
    head_learning_rate: float = 1e-3
    scale: float = 20.0
    max_length: int = 128
    per_set: int = 600
    heldout: float = 0.1
    evaluations: int = 4
    seed: int = 0
    threads: int = 2

    def __post_init__(self) -> None:
        if self.shape not in SHAPES:
            raise TstevalError(f"shape must be one of {list(SHAPES)}, not {self.shape!r}")
        if self.epochs < 0 or self.per_set < 2 or self.batch_size < 2 or self.evaluations < 1:
            raise TstevalError("epochs must be at least 0 (0 saves the encoder as it came, with its held-out "
                               "figure), per_set and batch_size at least 2, evaluations at least 1")
        if self.has_head and self.epochs == 0:
            raise TstevalError(f"a {self.shape} model's head starts untrained: give it at least one epoch")
        if not 0 < self.heldout < 0.5:
            raise TstevalError(f"the held-out share must be in (0, 0.5), not {self.heldout}")

    @property
    def has_head(self) -> bool:
        """Whether the model scores through a new linear head (``cross``, ``single``), which starts untrained, so
        the encoder as it came is no state to keep."""
        return self.shape != "bi"

    def record(self) -> dict[str, object]:
        """The recipe as JSON."""
        return asdict(self)


def rank_loss(scores: object, ratings: object, scale: float) -> object:
    """CoSENT's pairwise ranking loss: ``log(1 + sum over rating_i > rating_j of exp(scale * (s_j - s_i)))``.

    >>> import torch
    >>> good = rank_loss(torch.tensor([0.9, 0.1]), torch.tensor([5.0, 1.0]), 20.0)
    >>> bad = rank_loss(torch.tensor([0.1, 0.9]), torch.tensor([5.0, 1.0]), 20.0)
    >>> bool(good < 0.01 < 15.9 < bad)
    True
    """
    import torch

    differences = scale * (scores[None, :] - scores[:, None])  # [i, j] = s_j - s_i
    ordered = ratings[:, None] > ratings[None, :]
    terms = torch.cat([torch.zeros(1, dtype=scores.dtype), differences[ordered]])
    return torch.logsumexp(terms, dim=0)


def heldout_split(pairs: pd.DataFrame, share: float, seed: int) -> np.ndarray:
    """Which rows are held out: in each set, ``share`` of its inputs (at least one), drawn with ``seed``."""
    held = np.zeros(len(pairs), dtype=bool)
    rng = np.random.default_rng(seed)
    for name in dict.fromkeys(pairs["set"]):
        rows = (pairs["set"] == name).to_numpy()
        items = np.unique(pairs["item"].to_numpy()[rows])
        chosen = rng.choice(items, size=max(1, round(share * len(items))), replace=False)
        held |= rows & pairs["item"].isin(chosen).to_numpy()
    return held


def batches(pairs: pd.DataFrame, recipe: Recipe, rng: np.random.Generator) -> list[np.ndarray]:
    """One epoch's batches: row numbers of one set each, at most ``per_set`` rows a set, in a seeded order."""
    out = []
    for name in dict.fromkeys(pairs["set"]):
        rows = np.flatnonzero((pairs["set"] == name).to_numpy())
        rows = rng.permutation(rows)[:recipe.per_set]
        out += [rows[i:i + recipe.batch_size] for i in range(0, len(rows), recipe.batch_size)
                if len(rows[i:i + recipe.batch_size]) > 1]
    return [out[i] for i in rng.permutation(len(out))]


class PairModel:
    """A sentence encoder in training as a scorer of (input, output) pairs, in one of the shapes."""

    def __init__(self, encoder: str, recipe: Recipe) -> None:
        from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer

        self.recipe = recipe
        self.tokenizer = AutoTokenizer.from_pretrained(encoder)
        if not recipe.has_head:
            self.model = AutoModel.from_pretrained(encoder)
        else:
            self.model = AutoModelForSequenceClassification.from_pretrained(encoder, num_labels=1)

    def parameter_groups(self) -> list[dict[str, object]]:
        """The encoder's parameters at the recipe's rate, a cross-encoder's new head at the head rate."""
        head = [p for n, p in self.model.named_parameters() if n.startswith("classifier.")]
        body = [p for n, p in self.model.named_parameters() if not n.startswith("classifier.")]
        groups = [{"params": body, "lr": self.recipe.learning_rate}]
        return groups + ([{"params": head, "lr": self.recipe.head_learning_rate}] if head else [])

    def _embed(self, texts: Sequence[str]) -> object:
        import torch

        batch = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.recipe.max_length,
                               return_tensors="pt")
        hidden = self.model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        return torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9), dim=-1)

    def scores(self, inputs: Sequence[str], outputs: Sequence[str]) -> object:
        """The scores of the pairs, as a tensor (with gradients while training)."""
        if self.recipe.shape == "bi":
            return (self._embed(inputs) * self._embed(outputs)).sum(-1)
        if self.recipe.shape == "single":
            batch = self.tokenizer(list(outputs), padding=True, truncation=True, max_length=self.recipe.max_length,
                                   return_tensors="pt")
        else:
            batch = self.tokenizer(list(inputs), list(outputs), padding=True, truncation="longest_first",
                                   max_length=2 * self.recipe.max_length, return_tensors="pt")
        return self.model(**batch).logits[:, 0]

    def predict(self, inputs: Sequence[str], outputs: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """The scores of the pairs, without gradients, in the model's evaluation mode."""
        import torch

        self.model.eval()
        with torch.inference_mode():
            parts = [self.scores(inputs[i:i + batch_size], outputs[i:i + batch_size]).float().numpy()
                     for i in range(0, len(inputs), batch_size)]
        self.model.train()
        return np.concatenate(parts) if parts else np.zeros(0)


def heldout_spearman(model: PairModel, pairs: pd.DataFrame) -> dict[str, float]:
    """The Spearman correlation of the model's scores with the ratings on each set of ``pairs``."""
    from scipy.stats import spearmanr

    scores = model.predict(pairs["input"].tolist(), pairs["output"].tolist())
    return {name: float(spearmanr(scores[rows], pairs["rating"].to_numpy()[rows]).statistic)
            for name in dict.fromkeys(pairs["set"]) for rows in [(pairs["set"] == name).to_numpy()]}


def fine_tune(pairs: pd.DataFrame, encoder: str, recipe: Recipe, log: Log) -> tuple[PairModel, dict[str, object]]:
    """Fine-tune ``encoder`` on ``pairs`` (set, item, input, output, rating) by ``recipe``: the model in its best
    held-out state and the report (held-out Spearman per set at each evaluation, the one kept, seconds)."""
    import torch

    from tsteval.core.progress import progress

    if len(pairs) < 10:
        raise TstevalError(f"too few rated pairs to train on ({len(pairs)})")
    torch.manual_seed(recipe.seed)
    previous = torch.get_num_threads()
    torch.set_num_threads(recipe.threads)
    try:
        model = PairModel(encoder, recipe)
        held = heldout_split(pairs, recipe.heldout, recipe.seed)
        train, heldout = pairs[~held].reset_index(drop=True), pairs[held].reset_index(drop=True)
        optimiser = torch.optim.AdamW(model.parameter_groups(), weight_decay=0.01)
        rng = np.random.default_rng(recipe.seed)
        ratings = torch.tensor(train["rating"].to_numpy(), dtype=torch.float32)
        history: list[dict[str, object]] = []
        started = time.perf_counter()

        def evaluate(at: float) -> float:
            per_set = heldout_spearman(model, heldout)
            mean = float(np.nanmean(list(per_set.values())))
            history.append({"epoch": at, "mean": mean, "sets": per_set})
            log(f"epoch {at:.2f}: held-out Spearman {mean:.3f} (mean over {len(per_set)} sets)")
            return mean

        base = evaluate(0.0)  # the encoder as it came (a new head untrained: no bar to beat)
        best, best_state = ((-np.inf, None) if recipe.has_head else
                            (base, copy.deepcopy(model.model.state_dict())))
        model.model.train()
        for epoch in range(recipe.epochs):
            order = batches(train, recipe, rng)
            marks = {round(len(order) * (k + 1) / recipe.evaluations) for k in range(recipe.evaluations)}
            for step, rows in enumerate(progress(order, f"train-metric epoch {epoch + 1}/{recipe.epochs}",
                                                 unit="batch"), start=1):
                scores = model.scores(train["input"].to_numpy()[rows].tolist(),
                                      train["output"].to_numpy()[rows].tolist())
                loss = rank_loss(scores, ratings[rows], recipe.scale)
                loss.backward()
                optimiser.step()
                optimiser.zero_grad()
                if step in marks and (mean := evaluate(epoch + step / len(order))) > best:
                    best, best_state = mean, copy.deepcopy(model.model.state_dict())
        model.model.load_state_dict(best_state)
        if best == base and not recipe.has_head:
            log("no held-out evaluation beat the encoder as it came: the learned metric is the base encoder")
        model.model.eval()
    finally:
        torch.set_num_threads(previous)
    kept = max(history[1:] if recipe.has_head else history, key=lambda h: h["mean"])
    report = {"rows": len(pairs), "train_rows": len(train), "heldout_rows": len(heldout), "history": history,
              "kept": kept, "seconds": round(time.perf_counter() - started, 1)}
    return model, report
