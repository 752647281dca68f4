"""Datasets and tasks: loading, validating and describing the data FLEX explains."""

from ._catalogue import (
    ACCIDENT_ORDERS,
    BUILTIN_DATASETS,
    MIN_ROWS_FOR_IDENTIFIER,
    SYNTHETIC_GROUND_TRUTH,
    identifier_columns,
    load_accidents,
    load_builtin,
    load_csv,
    load_dataset,
    load_loan,
)
from ._columns import KINDS, NUMERIC_SHARE, category_text
from ._export import formula_safe, to_safe_csv
from ._read import DELIMITERS, MAX_FILE_BYTES, MISSING_MARKERS, read_csv, read_notes
from ._summary import class_balance, feature_table, parse_order, parse_range, peek_csv, table_constraints
from ._task import DIRECTIONS, Feature, TaskSpec, make_task

__all__ = [
    "KINDS", "DIRECTIONS", "ACCIDENT_ORDERS", "MAX_FILE_BYTES", "MISSING_MARKERS", "DELIMITERS", "NUMERIC_SHARE", "MIN_ROWS_FOR_IDENTIFIER",
    "BUILTIN_DATASETS", "SYNTHETIC_GROUND_TRUTH", "Feature", "TaskSpec", "category_text", "make_task",
    "read_csv", "read_notes", "identifier_columns", "load_csv", "load_loan", "load_accidents", "load_builtin",
    "load_dataset", "feature_table", "table_constraints", "parse_range", "parse_order", "class_balance", "peek_csv", "to_safe_csv", "formula_safe",
]
