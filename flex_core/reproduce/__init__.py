"""Reproducing the paper's experiments and writing the report beside its published values: ``flex reproduce``.

Nothing here is called from Python directly; the command line (:mod:`flex_core.cli`) runs it.
"""

__all__: list[str] = []
