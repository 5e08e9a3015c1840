"""An ensemble of style classifiers: the mean of the members' temperature-scaled probabilities.

``fit`` holds out a stratified share (``calibration``, default 20 %) of the training texts, trains every member
(another backend: ``fasttext`` and ``tfidf-lr`` by default) on the rest, and fits one temperature per member on
the held-out share by minimising the negative log-likelihood (:mod:`tsteval.classifiers.calibration`).  The
members are **kept as trained on the rest**, not refitted on all texts: a temperature is only valid for the
model whose probabilities it was fitted on.  ``predict_proba`` is the mean over members of
``softmax(log p_member / T_member)``.

The ensemble's ``seed`` is every member's seed; ``threads``, ``device`` and ``verbose`` go to the members that
take them (fastText's ``threads``; the neural backends' ``device`` and ``verbose``) unless ``member_params``
sets them.  ``member_params`` maps a member to its own parameters, checked by that backend's rules.

Saved as one directory: ``members/NAME/`` holds each member exactly as that backend saves itself (with its own
manifest), and ``temperatures.json`` the temperatures and the calibration split's NLL before and after.  The
ensemble's manifest records the size and sha256 of every one of those files, so its integrity hash (and the
signature of every score computed with it) identifies all members' weights; loading verifies the ensemble's
manifest and then each member's before any library reads a file.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from numbers import Real
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.utils._param_validation import Interval

from tsteval.classifiers.base import (
    AT_LEAST_ONE,
    BACKENDS,
    SEED,
    ParameterError,
    TextClassifier,
    backend_class,
    load_classifier,
)
from tsteval.classifiers.calibration import apply_temperature, fit_temperature, temperature_nll
from tsteval.core.errors import InputError, TstevalError, did_you_mean

MEMBERS_DIR = "members"
TEMPERATURES_FILE = "temperatures.json"
# Ensemble parameters handed to every member that has a parameter of the same name.
SHARED = ("seed", "threads", "device", "verbose")


class MemberList:
    """A constraint: backend names as a list or as one comma-separated string (``fasttext,tfidf-lr``)."""

    hidden = False

    def is_satisfied_by(self, value: object) -> bool:
        """Whether ``value`` is a non-empty list of strings or a string."""
        return isinstance(value, str) or (isinstance(value, list | tuple) and len(value) > 0
                                          and all(isinstance(v, str) for v in value))

    def __str__(self) -> str:
        return "a list of backend names or one comma-separated string of them"


def member_names(members: str | Sequence[str]) -> list[str]:
    """The member backends of a ``members`` parameter, in order.

    >>> member_names("fasttext, tfidf-lr")
    ['fasttext', 'tfidf-lr']
    """
    names = members.split(",") if isinstance(members, str) else list(members)
    return [name.strip() for name in names]


class EnsembleClassifier(TextClassifier):
    """The mean of temperature-scaled probabilities of several backends (see the module docstring)."""

    backend = "ensemble"
    libraries = ("scipy", "scikit-learn", "numpy")
    _parameter_constraints = {
        "members": [MemberList()],
        "member_params": [dict, None],
        "calibration": [Interval(Real, 0, 1, closed="neither")],
        "seed": [SEED],
        "threads": [AT_LEAST_ONE],
        "device": [str, None],
        "verbose": [bool],
    }

    def __init__(self, members: str | Sequence[str] = ("fasttext", "tfidf-lr"),
                 member_params: Mapping[str, Mapping[str, object]] | None = None, calibration: float = 0.2,
                 seed: int = 0, threads: int = 1, device: str | None = None, verbose: bool = False) -> None:
        self.members = members
        self.member_params = member_params
        self.calibration = calibration
        self.seed = seed
        self.threads = threads
        self.device = device
        self.verbose = verbose

    def _check_params(self) -> None:
        names = member_names(self.members)
        choices = sorted(set(BACKENDS) - {self.backend})
        for name in names:
            if name not in choices:
                raise ParameterError(self.backend, "members", self.members,
                                     f"names {name!r}, which is not one of the backends {choices}"
                                     f"{did_you_mean(name, choices, '; ')}",
                                     ",".join(n for n in names if n in choices) or "fasttext,tfidf-lr")
        if len(set(names)) != len(names):
            raise ParameterError(self.backend, "members", self.members, "names a backend twice; give each once "
                                 "(one member per backend)", ",".join(dict.fromkeys(names)))
        extra = sorted(set(self.member_params or {}) - set(names))
        if extra:
            raise ParameterError(self.backend, "member_params", self.member_params,
                                 f"gives parameters for {extra}, which are not members {names}")
        for name in names:
            given = (self.member_params or {}).get(name, {})
            if not isinstance(given, dict):
                raise ParameterError(self.backend, "member_params", self.member_params,
                                     f"must map each member to a mapping of its parameters, and {name!r} maps to "
                                     f"{type(given).__name__}")
            if "seed" in given:
                raise ParameterError(self.backend, "member_params", self.member_params,
                                     f"sets {name}'s seed; the ensemble's seed is every member's seed")
            try:
                self._new_member(name)
            except ParameterError as error:
                raise ParameterError(self.backend, "member_params", self.member_params,
                                     f"has a bad parameter for member {name!r}: {error.problem}") from error

    def _new_member(self, name: str) -> TextClassifier:
        """An unfitted member ``name`` with its ``member_params`` and the shared ensemble parameters."""
        cls = backend_class(name)
        params = dict((self.member_params or {}).get(name, {}))
        accepted = cls._get_param_names()
        for shared in SHARED:
            if shared in accepted:
                params.setdefault(shared, getattr(self, shared))
        return cls.from_params(params)

    def _fit(self, texts: list[str], y: np.ndarray) -> None:
        try:
            fit_x, cal_x, fit_y, cal_y = train_test_split(texts, y, test_size=self.calibration,
                                                          random_state=self.seed, stratify=y)
        except ValueError as error:
            raise InputError(f"cannot hold out {self.calibration:.0%} of {len(texts)} training texts, stratified by "
                             f"style, to calibrate the ensemble: {error}",
                             fix="give every style more texts, or change --param calibration") from error
        labels = self.classes_[fit_y]
        members, temperatures, report = {}, {}, {}
        for name in member_names(self.members):
            self._say(f"ensemble: training member {name} on {len(fit_x):,} texts")
            model = self._new_member(name).fit(fit_x, labels)
            if list(model.classes_) != list(self.classes_):
                raise TstevalError(f"ensemble member {name} learnt the classes {list(model.classes_)}, not "
                                   f"{list(self.classes_)}")
            self._say(f"ensemble: calibrating member {name} on the {len(cal_x):,} held-out calibration texts")
            raw = model.predict_proba(cal_x)
            temperatures[name] = fit_temperature(raw, cal_y)
            report[name] = {"nll_before": temperature_nll(raw, cal_y, 1.0),
                            "nll_after": temperature_nll(raw, cal_y, temperatures[name])}
            members[name] = model
        self.members_, self.temperatures_ = members, temperatures
        self.calibration_report_ = {"n_fit": len(fit_x), "n_calibration": len(cal_x), "members": report}

    def _say(self, line: str) -> None:
        """One progress line on standard error when verbose (off under ``--quiet``)."""
        if self.verbose:
            print(line, file=sys.stderr)

    def member_probabilities(self, texts: Sequence[str], calibrated: bool = True) -> dict[str, np.ndarray]:
        """Each member's ``(n, k)`` probabilities of ``texts``, temperature-scaled unless ``calibrated=False``."""
        self._check_fitted()
        out = {}
        for name, model in self.members_.items():
            if hasattr(model, "verbose"):
                model.verbose = self.verbose
            proba = model.predict_proba(texts)
            out[name] = apply_temperature(proba, self.temperatures_[name]) if calibrated else proba
        return out

    @property
    def length_limit(self) -> int | None:
        """The shortest limit of a member (None: every member reads every text whole)."""
        limits = [m.length_limit for m in self.members_.values() if m.length_limit is not None]
        return min(limits) if limits else None

    def _truncated(self, texts: list[str]) -> np.ndarray:
        """Whether any member reads only the text's start."""
        return np.any([m.truncated(texts) for m in self.members_.values()], axis=0)

    def _predict_proba(self, texts: list[str]) -> np.ndarray:
        return np.mean(list(self.member_probabilities(texts).values()), axis=0)

    def _save_state(self, directory: Path) -> None:
        for name, model in self.members_.items():
            model.save(directory / MEMBERS_DIR / name)
        state = {"temperatures": self.temperatures_, "calibration": self.calibration_report_}
        (directory / TEMPERATURES_FILE).write_text(json.dumps(state, indent=2))

    def _load_state(self, directory: Path) -> None:
        state = json.loads((directory / TEMPERATURES_FILE).read_text())
        names = member_names(self.members)
        temperatures = state.get("temperatures") if isinstance(state, dict) else None
        if (not isinstance(temperatures, dict) or sorted(temperatures) != sorted(names)
                or not all(isinstance(t, float) and np.isfinite(t) and t > 0 for t in temperatures.values())):
            raise InputError(f"it does not give one positive temperature for each member {names}",
                             path=directory / TEMPERATURES_FILE, fix="retrain the ensemble")
        members = {}
        for name in names:
            model = load_classifier(directory / MEMBERS_DIR / name, expected_classes=self.classes_)
            if model.backend != name:
                raise InputError(f"member {name!r} holds a {model.backend} model", path=directory / MEMBERS_DIR / name,
                                 fix="retrain the ensemble")
            members[name] = model
        self.members_, self.temperatures_ = members, temperatures
        self.calibration_report_ = state.get("calibration", {})
