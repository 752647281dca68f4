"""Datasets and tasks: loading, validating and describing the data FLEX explains.

The language of constraints between features is the public module :mod:`flex_core.data.rules`.
"""

from ._catalogue import (
    BUILTIN_DATASETS,
    MAX_OUTCOME_LEVELS,
    identifier_columns,
    load_accidents,
    load_builtin,
    load_csv,
    load_dataset,
    load_loan,
    number_columns,
    outcome_columns,
)
from ._columns import KINDS
from ._export import to_safe_csv
from ._read import read_csv
from ._task import Feature, TaskSpec, make_task

__all__ = [
    "KINDS", "BUILTIN_DATASETS", "MAX_OUTCOME_LEVELS", "Feature", "TaskSpec", "make_task", "read_csv", "identifier_columns", "outcome_columns", "number_columns", "load_csv",
    "load_loan", "load_accidents", "load_builtin", "load_dataset", "to_safe_csv",
]
