"""The ``tsteval`` command line."""

from tsteval.cli.main import main

__all__ = ["main"]
