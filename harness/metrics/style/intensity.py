"""Style transfer intensity (STI): earth mover's distance between style-classifier distributions.

Mir et al. (2019) score a transfer x -> x' by the EMD between the classifier's distributions for x and x',
negated when x' gives the target style less probability than x did.  Reed & Beck (2022) normalise it by
the largest move possible from x on the same side.  Every function here takes a batch: ``P`` (inputs) and
``Q`` (outputs) are ``(n, k)`` arrays of class probabilities and ``target`` holds one class index per row.

The ground distance between classes is ``"nominal"`` (every pair of classes 1 apart: EMD is the total
variation distance), ``"ordinal"`` (classes on a line, ``|i - j| / (k - 1)``) or a ``(k, k)`` matrix.  The
named ones have closed forms and run vectorised; a matrix goes through POT's exact solver one pair at a
time, the slow path.

Rows that sum to 1 only within ``ROW_SUM_TOLERANCE`` (fastText rounds its outputs: Mir's stored rows sum to
0.998) are handled so that results never depend on that rounding more than it deserves: the nominal path
uses them as given with Pele & Werman's EMD-hat, ``max(sum (p - q)+, sum (q - p)+)`` (mass moved at cost 1,
the heavier row's surplus also at cost 1; this is what pyemd, and so Mir's code, computes), which equals
half the L1 distance whenever both rows sum to 1; the ordinal and matrix paths need equal masses and
renormalise the rows first.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from tsteval.core.errors import InputError

Ground = str | np.ndarray

GROUND_KINDS = ("nominal", "ordinal")

# Rows summing to 1 within this are renormalised: classifiers such as fastText round their outputs
# (Mir's stored fastText rows sum to 0.998).  Anything further off is a bug upstream and is refused.
ROW_SUM_TOLERANCE = 1e-2

# The normalised STI scores 2k candidate distributions per row; rows go in blocks of about this many
# candidate entries so memory stays bounded for large n and k.
_BLOCK_ENTRIES = 4_000_000


def ground_matrix(kind: str, k: int) -> np.ndarray:
    """The ``(k, k)`` ground distance of a named kind: ``nominal`` (1 off the diagonal) or ``ordinal``."""
    if kind not in GROUND_KINDS:
        raise InputError(f"unknown ground distance {kind!r}", fix=f"use one of {GROUND_KINDS} or a (k, k) matrix")
    if k < 2:
        raise InputError(f"a ground distance needs at least 2 classes, got k={k}")
    idx = np.arange(k)
    if kind == "nominal":
        return 1.0 - np.eye(k)
    return np.abs(idx[:, None] - idx[None, :]) / (k - 1)


def check_ground_matrix(M: ArrayLike, k: int) -> np.ndarray:
    """Validate a ground distance between ``k`` classes and return it as float64.

    Refuses non-square or non-finite matrices, a non-zero diagonal, negative or asymmetric entries and a
    zero off the diagonal (two distinct classes at distance 0).  Mir et al.'s all-ones matrix fails the
    diagonal check: with POT it gives EMD 1.0 for every pair of distributions, identical ones included.
    """
    M = np.asarray(M, dtype=float)
    if M.shape != (k, k):
        raise InputError(f"ground matrix has shape {M.shape}, expected ({k}, {k}) for {k} classes")
    if not np.all(np.isfinite(M)):
        raise InputError("ground matrix has non-finite entries")
    if np.any(np.diag(M) != 0):
        raise InputError("ground matrix has a non-zero diagonal: a class must be at distance 0 from itself",
                         fix="use ground_matrix('nominal', k) instead of an all-ones matrix")
    if np.any(M < 0):
        raise InputError("ground matrix has negative entries")
    if not np.allclose(M, M.T, rtol=0.0, atol=1e-12):
        raise InputError("ground matrix is not symmetric")
    if np.any(M[~np.eye(k, dtype=bool)] == 0):
        raise InputError("ground matrix has a zero off the diagonal: two distinct classes at distance 0")
    return M


def check_distributions(P: ArrayLike, name: str, renormalize: bool = True) -> np.ndarray:
    """Validate an ``(n, k)`` batch of distributions and return it as float64.

    Rows must be finite and non-negative and sum to 1 within ``ROW_SUM_TOLERANCE`` (classifiers round
    their outputs); any other row is an error naming the first one.  With ``renormalize`` the rows are
    scaled to sum to exactly 1.
    """
    P = np.asarray(P, dtype=float)
    if P.ndim != 2 or P.shape[1] < 2:
        raise InputError(f"{name} must be a 2-D (n, k) array with k >= 2 classes, got shape {P.shape}")
    bad = ~np.all(np.isfinite(P), axis=1)
    if bad.any():
        raise InputError(f"{name} row {int(np.argmax(bad))} has non-finite values")
    bad = np.any(P < 0, axis=1)
    if bad.any():
        row = int(np.argmax(bad))
        raise InputError(f"{name} row {row} has negative probabilities: {P[row].tolist()}")
    sums = P.sum(axis=1)
    bad = np.abs(sums - 1.0) > ROW_SUM_TOLERANCE
    if bad.any():
        row = int(np.argmax(bad))
        raise InputError(f"{name} row {row} sums to {sums[row]:.6g}, not 1 (tolerance {ROW_SUM_TOLERANCE})",
                         fix="pass class probabilities (e.g. softmax outputs), not scores or counts")
    return P / sums[:, None] if renormalize else P


def _check_pair(P: ArrayLike, Q: ArrayLike, ground: Ground) -> tuple[np.ndarray, np.ndarray]:
    """Validate inputs and outputs together: same shape, valid distributions (renormalised unless nominal)."""
    renormalize = not (isinstance(ground, str) and ground == "nominal")
    P = check_distributions(P, "P", renormalize)
    Q = check_distributions(Q, "Q", renormalize)
    if P.shape != Q.shape:
        raise InputError(f"P has shape {P.shape} but Q has shape {Q.shape}: need one output row per input row")
    return P, Q


def _check_target(target: ArrayLike, n: int, k: int) -> np.ndarray:
    """Target class indices as an ``(n,)`` int array; a scalar applies to every row."""
    t = np.asarray(target)
    if t.dtype.kind not in "iu":
        raise InputError(f"target must hold integer class indices, got dtype {t.dtype}")
    t = np.broadcast_to(t, (n,)) if t.ndim == 0 else t
    if t.shape != (n,):
        raise InputError(f"target has shape {t.shape}, expected ({n},): one target class per row")
    bad = (t < 0) | (t >= k)
    if bad.any():
        row = int(np.argmax(bad))
        raise InputError(f"target row {row} is {int(t[row])}, not a class index in 0..{k - 1}")
    return t.astype(np.intp)


def _resolve_ground(ground: Ground, k: int) -> str | np.ndarray:
    """A ground kind name, or a validated matrix."""
    if isinstance(ground, str):
        ground_matrix(ground, k)  # validates the name and k
        return ground
    return check_ground_matrix(ground, k)


def _emd_rows(P: np.ndarray, Q: np.ndarray, ground: str | np.ndarray) -> np.ndarray:
    """EMD of each row pair of already validated arrays; ``ground`` already resolved."""
    if isinstance(ground, str):
        if ground == "nominal":
            diff = P - Q
            return np.maximum(np.clip(diff, 0.0, None).sum(axis=1), np.clip(-diff, 0.0, None).sum(axis=1))
        k = P.shape[1]
        cdf_gap = np.cumsum(P - Q, axis=1)[:, :-1]
        return np.abs(cdf_gap).sum(axis=1) / (k - 1)
    import ot  # only a matrix ground needs POT (it imports torch): the named grounds are closed forms

    return np.array([ot.emd2(p, q, ground) for p, q in zip(P, Q, strict=True)], dtype=float)


def emd(P: ArrayLike, Q: ArrayLike, ground: Ground = "nominal") -> np.ndarray:
    """Earth mover's distance between each row of ``P`` and the same row of ``Q``, shape ``(n,)``.

    ``nominal``: half the L1 distance (EMD-hat for rows of slightly unequal mass, see the module);
    ``ordinal``: sum of absolute CDF differences over ``k - 1``; a
    matrix: POT's exact solver (``ot.emd2``) per pair, a Python loop and so the slow path.
    """
    P, Q = _check_pair(P, Q, ground)
    return _emd_rows(P, Q, _resolve_ground(ground, P.shape[1]))


def _signed(P: np.ndarray, Q: np.ndarray, t: np.ndarray, ground: str | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Signed EMD and the toward-target mask (``q_t >= p_t``) for validated arrays."""
    rows = np.arange(P.shape[0])
    toward = Q[rows, t] >= P[rows, t]
    return np.where(toward, 1.0, -1.0) * _emd_rows(P, Q, ground), toward


def signed_emd(P: ArrayLike, Q: ArrayLike, target: ArrayLike, ground: Ground = "nominal") -> np.ndarray:
    """Mir et al.'s STI: EMD(P, Q), negative where the output's target probability is below the input's.

    An unchanged target probability (``q_t == p_t``) counts as the right direction, as in Mir's code.
    """
    P, Q = _check_pair(P, Q, ground)
    t = _check_target(target, *P.shape)
    return _signed(P, Q, t, _resolve_ground(ground, P.shape[1]))[0]


def _max_reachable(P: np.ndarray, t: np.ndarray, toward: np.ndarray, ground: str | np.ndarray) -> np.ndarray:
    """Largest EMD from each row of ``P`` to a distribution on the same side of ``p_t`` as the output.

    EMD(P, .) is convex, so its maximum over the feasible polytope is at a vertex.  Toward the target the
    set {q : q_t >= p_t} has vertices e_t and v_j = p_t e_t + (1 - p_t) e_j (j != t); away from it,
    {q : q_t <= p_t} has vertices e_j and v_j (j != t).  All 2k candidates of a block of rows are scored
    in one batch; blocks keep the ``(rows, 2k, k)`` candidate array near ``_BLOCK_ENTRIES`` entries.
    """
    n, k = P.shape
    block = max(1, _BLOCK_ENTRIES // (2 * k * k))
    return np.concatenate([_max_reachable_block(P[i:i + block], t[i:i + block], toward[i:i + block], ground)
                           for i in range(0, n, block)] or [np.zeros(0)])


def _max_reachable_block(P: np.ndarray, t: np.ndarray, toward: np.ndarray, ground: str | np.ndarray) -> np.ndarray:
    """:func:`_max_reachable` for one block of rows."""
    n, k = P.shape
    eye = np.eye(k)
    p_t = P[np.arange(n), t]
    corners = np.broadcast_to(eye, (n, k, k))  # e_j
    edges = p_t[:, None, None] * eye[t][:, None, :] + (1.0 - p_t)[:, None, None] * eye[None, :, :]  # v_j
    candidates = np.concatenate([corners, edges], axis=1).reshape(n * 2 * k, k)
    dist = _emd_rows(np.repeat(P, 2 * k, axis=0), candidates, ground).reshape(n, 2 * k)
    is_t = np.arange(k)[None, :] == t[:, None]
    # Toward: e_t and every v_j (v_t is e_t).  Away: e_j and v_j for j != t.
    feasible = np.concatenate([np.where(toward[:, None], is_t, ~is_t), np.where(toward[:, None], True, ~is_t)],
                              axis=1)
    return np.where(feasible, dist, -np.inf).max(axis=1)


def max_reachable_emd(P: ArrayLike, target: ArrayLike, toward: ArrayLike, ground: Ground = "nominal") -> np.ndarray:
    """Largest EMD from each row of ``P`` to a distribution with target probability ``>= p_t`` (``toward``
    True) or ``<= p_t`` (False), shape ``(n,)``: the denominator of :func:`normalized_sti`."""
    P = check_distributions(P, "P", renormalize=not (isinstance(ground, str) and ground == "nominal"))
    t = _check_target(target, *P.shape)
    side = np.asarray(toward, dtype=bool)
    side = np.broadcast_to(side, t.shape) if side.ndim == 0 else side
    if side.shape != t.shape:
        raise InputError(f"toward has shape {side.shape}, expected {t.shape}: one side per row")
    return _max_reachable(P, t, side, _resolve_ground(ground, P.shape[1]))


def normalized_sti(P: ArrayLike, Q: ArrayLike, target: ArrayLike, ground: Ground = "nominal") -> np.ndarray:
    """Reed & Beck's normalised STI in [-1, 1]: signed EMD over the largest EMD reachable on that side.

    Toward the target it is the share of the possible gain taken; away from it, the share of the possible
    loss.  With the nominal distance the denominators are ``1 - p_t`` (toward) and ``1 - min_{j != t} p_j``
    (away).  With a ground matrix this runs 2k POT solves per pair (slow path).  Where no move is
    possible (denominator 0, e.g. ``P`` one-hot on the target and the output toward it) the output equals
    the input and the score is 0.
    """
    P, Q = _check_pair(P, Q, ground)
    t = _check_target(target, *P.shape)
    g = _resolve_ground(ground, P.shape[1])
    signed, toward = _signed(P, Q, t, g)
    denom = _max_reachable(P, t, toward, g)
    ratio = np.divide(signed, denom, out=np.zeros_like(signed), where=denom > 0)
    return np.clip(ratio, -1.0, 1.0)  # rounding can push |signed| a hair above denom


def target_probability(Q: ArrayLike, target: ArrayLike) -> np.ndarray:
    """Probability of each row's target class, shape ``(n,)``, after validation and renormalisation."""
    Q = check_distributions(Q, "Q")
    t = _check_target(target, *Q.shape)
    return Q[np.arange(Q.shape[0]), t]


def target_log_odds(Q: ArrayLike, target: ArrayLike, clip: float = 1e-6) -> np.ndarray:
    """Log-odds of each row's target class, ``ln p_t - ln(1 - p_t)`` with ``p_t`` (:func:`target_probability`)
    clipped to ``[clip, 1 - clip]`` so that a one-hot row stays finite; shape ``(n,)``.

    With two classes it is ``ln(p_t / p_other)``; with more, the other classes are pooled.  A strictly increasing
    function of ``p_t``, so it ranks rows exactly as :func:`target_probability` does.

    >>> target_log_odds([[0.5, 0.5], [0.2, 0.8], [0.0, 1.0]], [1, 1, 1]).round(3).tolist()
    [0.0, 1.386, 13.816]
    """
    if not 0.0 < clip < 0.5:
        raise InputError(f"clip must be in (0, 0.5), got {clip}")
    p = np.clip(target_probability(Q, target), clip, 1.0 - clip)
    return np.log(p) - np.log1p(-p)


def target_accuracy(Q: ArrayLike, target: ArrayLike) -> np.ndarray:
    """1.0 where the target class is the classifier's unique top class, else 0.0; shape ``(n,)``.

    Ties for the top probability count as misses: an output the classifier cannot place is not a
    success, and ``argmax`` would otherwise favour the lowest class index.
    """
    Q = check_distributions(Q, "Q")
    t = _check_target(target, *Q.shape)
    q_t = Q[np.arange(Q.shape[0]), t]
    others = Q.copy()
    others[np.arange(Q.shape[0]), t] = -np.inf
    return (q_t > others.max(axis=1)).astype(float)
