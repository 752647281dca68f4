"""Reproducing the paper's experiments and writing the report beside its published values."""

from ._paper import add_reproduce_parser, run_reproduce

__all__ = ["add_reproduce_parser", "run_reproduce"]
