"""The bad-input catalogue's runner: a command line through ``tsteval``'s ``main``, its exit code and output.

Every catalogue case runs the CLI exactly as docs/scoring.md and docs/policies.md document it and asserts the exact
outcome: the first line of the error (exit 2) or the documented policy.  An exception escaping ``main`` is a traceback
a user would see, so it fails the case.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from tsteval.cli.main import main

PREFIX = "tsteval: error: "


@dataclass
class Outcome:
    """What a user sees: the exit code and the two streams."""

    code: int
    out: str
    err: str

    @property
    def error(self) -> str:
        """The first line of the error message, without the ``tsteval: error:`` prefix."""
        lines = [line for line in self.err.splitlines() if line.startswith(PREFIX)]
        assert lines, f"no error line in stderr: {self.err!r}"
        return lines[0][len(PREFIX):]


def run_cli(argv: list[str], capsys: pytest.CaptureFixture) -> Outcome:
    """Run ``tsteval ARGV`` in-process; an escaping exception is reported as the traceback it would be."""
    capsys.readouterr()
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exit_:  # argparse's own usage errors
        code = exit_.code if isinstance(exit_.code, int) else 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err, captured.err
    return Outcome(code, captured.out, captured.err)


def expect_error(argv: list[str], capsys: pytest.CaptureFixture, *fragments: str) -> Outcome:
    """Run ``argv``; it must exit 2 with one error line containing every fragment."""
    outcome = run_cli(argv, capsys)
    assert outcome.code == 2, (outcome.code, outcome.out, outcome.err)
    for fragment in fragments:
        assert fragment in outcome.error, (fragment, outcome.error)
    return outcome


NOUNS = ("food", "service", "staff", "pizza", "place", "coffee", "room", "waiter")
NEGATIVE = ("bad", "awful", "terrible", "rude", "cold", "slow", "dirty", "bland")
POSITIVE = ("good", "great", "tasty", "friendly", "warm", "fast", "clean", "lovely")


def sentences(adjectives: tuple[str, ...], seed: int, n: int = 60) -> list[str]:
    """``n`` synthetic review sentences whose sentiment is carried by ``adjectives`` (seeded)."""
    rng = random.Random(seed)
    return [f"the {rng.choice(NOUNS)} was {rng.choice(adjectives)} and the {rng.choice(NOUNS)} was "
            f"{rng.choice(adjectives)} ." for _ in range(n)]

