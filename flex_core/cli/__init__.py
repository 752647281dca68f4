"""The command line: ``python -m flex_core`` and the ``flex`` command."""

from ._main import main

__all__ = ["main"]
