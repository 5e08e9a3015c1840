"""The ``tsteval`` command line: one module per command, parsing only.
May import: every tsteval package; it calls them."""

from tsteval.cli.main import main

__all__ = ["main"]
