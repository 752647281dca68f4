"""Datasets and tasks: loading, validating and describing the data FLEX explains."""

from ._datasets import (
    BUILTIN_DATASETS,
    KINDS,
    Feature,
    TaskSpec,
    identifier_columns,
    load_accidents,
    load_builtin,
    load_csv,
    load_dataset,
    load_loan,
    make_task,
)
from ._export import to_safe_csv
from ._read import read_csv, read_notes

__all__ = [
    "KINDS", "BUILTIN_DATASETS", "Feature", "TaskSpec", "make_task", "read_csv", "read_notes", "identifier_columns", "load_csv",
    "load_loan", "load_accidents", "load_builtin", "load_dataset", "to_safe_csv",
]
