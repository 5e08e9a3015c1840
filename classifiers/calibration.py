"""Temperature scaling (Guo et al. 2017) and the expected calibration error of class probabilities.

A classifier's probabilities ``p`` become ``softmax(log p / T)``: ``T > 1`` softens an over-confident model,
``T < 1`` sharpens an under-confident one, and the predicted class never changes.  One ``T`` per model is fitted
on held-out texts by minimising the negative log-likelihood (NLL) with :func:`scipy.optimize.minimize_scalar`
over ``log(1/T)``; the NLL is convex in ``1/T``, so the minimum is unique.

>>> import numpy as np
>>> proba = np.array([[0.1, 0.9]] * 4)      # the model says 0.9 for class 1 ...
>>> y = np.array([1, 1, 1, 0])              # ... but 3 in 4 are class 1: T = 2 gives exactly 0.75
>>> round(fit_temperature(proba, y), 6)
2.0
>>> apply_temperature(proba, 2.0)[0].round(6).tolist()
[0.25, 0.75]
>>> round(expected_calibration_error(proba, y), 6)    # confidence 0.9, accuracy 0.75
0.15
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp, softmax

from tsteval.core.errors import InputError

# Probabilities are clipped here before the logarithm (a model may give exactly 0).
EPS = 1e-12
# log(1/T) is searched in [-10, 10], as scikit-learn's temperature scaling does: T from e^-10 to e^10.
LOG_BETA_BOUNDS = (-10.0, 10.0)
# Guo et al. (2017) measure the expected calibration error with 15 equal-width confidence bins.
ECE_BINS = 15


def _log_proba(proba: np.ndarray) -> np.ndarray:
    proba = np.asarray(proba, dtype=np.float64)
    if proba.ndim != 2 or proba.shape[1] < 2:
        raise InputError(f"probabilities must be an (n, k) array with k >= 2, not shape {proba.shape}")
    return np.log(np.clip(proba, EPS, 1.0))


def _labels(y: np.ndarray, n: int, k: int) -> np.ndarray:
    y = np.asarray(y)
    if y.shape != (n,) or not np.issubdtype(y.dtype, np.integer) or (n and (y.min() < 0 or y.max() >= k)):
        raise InputError(f"labels must be {n} class indices in [0, {k}), one per row of probabilities")
    return y


def _nll(logits: np.ndarray, y: np.ndarray, beta: float) -> float:
    scaled = beta * logits
    return float(np.mean(logsumexp(scaled, axis=1) - scaled[np.arange(len(y)), y]))


def temperature_nll(proba: np.ndarray, y: np.ndarray, temperature: float) -> float:
    """Mean negative log-likelihood of the class indices ``y`` under ``softmax(log proba / temperature)``."""
    logits = _log_proba(proba)
    return _nll(logits, _labels(y, len(logits), logits.shape[1]), 1.0 / temperature)


def fit_temperature(proba: np.ndarray, y: np.ndarray) -> float:
    """The temperature ``T`` minimising :func:`temperature_nll` of held-out probabilities and class indices."""
    logits = _log_proba(proba)
    y = _labels(y, len(logits), logits.shape[1])
    if not len(y):
        raise InputError("cannot fit a temperature on zero held-out texts")
    result = minimize_scalar(lambda log_beta: _nll(logits, y, np.exp(log_beta)), bounds=LOG_BETA_BOUNDS,
                             method="bounded", options={"xatol": 1e-10})
    return float(np.exp(-result.x))


def apply_temperature(proba: np.ndarray, temperature: float) -> np.ndarray:
    """``softmax(log proba / temperature)`` row by row: the calibrated probabilities, rows summing to 1."""
    return softmax(_log_proba(proba) / temperature, axis=1)


def expected_calibration_error(proba: np.ndarray, y: np.ndarray, bins: int = ECE_BINS) -> float:
    """Top-label expected calibration error: ``sum_b (n_b / n) |accuracy_b - confidence_b|`` over ``bins``
    equal-width bins ``(lo, hi]`` of the largest probability of each row (Guo et al. 2017)."""
    _log_proba(proba)  # checks the shape
    proba = np.asarray(proba, dtype=np.float64)
    y = _labels(y, len(proba), proba.shape[1])
    confidence = proba.max(axis=1)
    correct = (proba.argmax(axis=1) == y).astype(np.float64)
    which = np.clip(np.ceil(confidence * bins).astype(int) - 1, 0, bins - 1)
    gap = np.bincount(which, weights=correct - confidence, minlength=bins)
    return float(np.abs(gap).sum() / max(len(y), 1))

