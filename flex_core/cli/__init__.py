"""The command line: ``python -m flex_core`` and the ``flex`` command."""

from ._main import main, parse_tau

__all__ = ["main", "parse_tau"]
