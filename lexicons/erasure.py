"""Style erasure in embedding space: LEACE (Belrose et al. 2023) from the ``concept-erasure`` package.

A :class:`StyleEraser` is the affine map ``r(x) = x - L R (x - b)`` that LEACE fits on embeddings ``x`` of
style-labelled sentences (one-hot style ``z``): after it, no linear classifier predicts the style better than a
constant one on the fitting data (the class-conditional means coincide), while ``x`` moves as little as possible
in the least-squares sense.  ``L`` (d x k), ``R`` (k x d) and ``b`` (d) are ``LeaceEraser.proj_left``,
``proj_right`` and ``bias``; they are kept as float64 NumPy arrays and saved as safetensors with a JSON record
(no pickle).  The package's defaults are kept (``affine=True``, ``shrinkage=True``: the covariance of ``x`` is
shrunk toward a scaled identity, ``constrain_cov_trace=True``); the paper's estimator is the unshrunk one
(``shrinkage=False``), which is identical when there are many more sentences than dimensions.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> labels = ["a", "b"] * 200
>>> x = rng.normal(size=(400, 3)) + np.outer([1.0 if s == "a" else -1.0 for s in labels], [3.0, 0.0, 0.0])
>>> eraser = fit_eraser(x, labels)
>>> erased = eraser(x)
>>> a = np.array(labels) == "a"
>>> bool(np.allclose(erased[a].mean(0), erased[~a].mean(0), atol=1e-6))
True
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tsteval.core.errors import InputError, read_json
from tsteval.core.signature import content_hash, package_version

WEIGHTS_FILE = "eraser.safetensors"
META_FILE = "eraser.json"


@dataclass(frozen=True)
class StyleEraser:
    """A fitted LEACE eraser ``x - (x - bias) @ right.T @ left.T`` for the styles ``styles``."""

    left: np.ndarray
    right: np.ndarray
    bias: np.ndarray
    styles: tuple[str, ...]
    n: int

    @property
    def identity(self) -> str:
        """A content hash of the fitted map (what signatures record)."""
        return content_hash(self.styles, self.n, self.left.round(10).tobytes().hex(),
                            self.right.round(10).tobytes().hex(), self.bias.round(10).tobytes().hex())

    @property
    def dim(self) -> int:
        """The dimension of the embeddings it erases."""
        return int(self.bias.shape[0])

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """The erased rows of ``x`` (n x d), float64."""
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise InputError(f"the eraser was fitted on {self.dim}-dimensional embeddings, not shape {x.shape}")
        return x - ((x - self.bias) @ self.right.T) @ self.left.T

    def save(self, directory: Path) -> None:
        """Write ``eraser.safetensors`` and ``eraser.json`` into ``directory``."""
        from safetensors.numpy import save_file

        save_file({"left": self.left, "right": self.right, "bias": self.bias}, str(directory / WEIGHTS_FILE))
        (directory / META_FILE).write_text(json.dumps({"styles": list(self.styles), "n": self.n}))

    @classmethod
    def load(cls, directory: str | Path) -> StyleEraser:
        """Read what :meth:`save` wrote; a missing or malformed file is an :class:`InputError` naming it."""
        from safetensors.numpy import load_file

        directory = Path(directory)
        meta = read_json(directory / META_FILE, "eraser record", fix="fit the eraser again")
        try:
            arrays = load_file(str(directory / WEIGHTS_FILE))
            eraser = cls(arrays["left"], arrays["right"], arrays["bias"], tuple(meta["styles"]), int(meta["n"]))
        except (OSError, KeyError, TypeError, ValueError) as error:
            raise InputError(f"not a saved style eraser ({error})", path=directory / WEIGHTS_FILE,
                             fix="fit the eraser again") from error
        d = eraser.bias.shape[0]
        if eraser.left.shape[0] != d or eraser.right.shape[1] != d or eraser.left.shape[1] != eraser.right.shape[0]:
            raise InputError("the eraser's matrices have inconsistent shapes", path=directory / WEIGHTS_FILE,
                             fix="fit the eraser again")
        return eraser


def fit_eraser(features: np.ndarray, labels: Sequence[str]) -> StyleEraser:
    """LEACE fitted on ``features`` (n x d) with one-hot style ``labels`` (``LeaceFitter.fit``, float64)."""
    import torch
    from concept_erasure import LeaceFitter

    x = np.asarray(features, dtype=np.float64)
    if x.ndim != 2 or len(x) != len(labels):
        raise InputError(f"{len(labels)} style labels for embeddings of shape {x.shape}")
    if not np.isfinite(x).all():
        raise InputError("the embeddings to fit the style eraser on hold NaN or infinite values")
    styles, codes = np.unique(np.asarray([str(s) for s in labels]), return_inverse=True)
    if len(styles) < 2:
        raise InputError(f"erasing style needs sentences of at least 2 styles, got {list(styles)}",
                         fix="give the eraser's corpus sentences of every style")
    z = np.eye(len(styles))[codes]
    eraser = LeaceFitter.fit(torch.from_numpy(x), torch.from_numpy(z)).eraser
    return StyleEraser(eraser.proj_left.numpy().copy(), eraser.proj_right.numpy().copy(),
                       eraser.bias.numpy().copy(), tuple(str(s) for s in styles), len(x))


def method_identity() -> str:
    """The erasure method and library version, for cache keys."""
    return f"leace-defaults@concept-erasure-{package_version('concept-erasure')}"
