"""Datasets and tasks: loading, validating and describing the data FLEX explains."""

from ._catalogue import (
    BUILTIN_DATASETS,
    MAX_OUTCOME_LEVELS,
    identifier_columns,
    load_accidents,
    load_builtin,
    load_csv,
    load_dataset,
    load_loan,
    outcome_columns,
)
from ._columns import KINDS
from ._export import to_safe_csv
from ._read import read_csv, read_notes
from ._task import Feature, TaskSpec, make_task

__all__ = [
    "KINDS", "BUILTIN_DATASETS", "MAX_OUTCOME_LEVELS", "Feature", "TaskSpec", "make_task", "read_csv", "read_notes", "identifier_columns", "outcome_columns", "load_csv",
    "load_loan", "load_accidents", "load_builtin", "load_dataset", "to_safe_csv",
]
