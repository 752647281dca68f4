"""Datasets and tasks: loading, validating and describing the data FLEX explains."""

from ._datasets import (
    ACCIDENT_ORDERS,
    BUILTIN_DATASETS,
    DIRECTIONS,
    KINDS,
    MAX_FILE_BYTES,
    MISSING_MARKERS,
    SYNTHETIC_GROUND_TRUTH,
    Feature,
    TaskSpec,
    category_text,
    load_accidents,
    load_builtin,
    load_csv,
    load_dataset,
    load_loan,
    make_task,
    read_csv,
)
from ._export import formula_safe, to_safe_csv
from ._summary import class_balance, feature_table, parse_order, parse_range, peek_csv, table_constraints

__all__ = ["KINDS", "DIRECTIONS", "ACCIDENT_ORDERS", "MAX_FILE_BYTES", "MISSING_MARKERS", "BUILTIN_DATASETS", "SYNTHETIC_GROUND_TRUTH", "Feature", "TaskSpec", "category_text", "make_task", "read_csv", "load_csv", "load_loan", "load_accidents", "load_builtin", "load_dataset", "feature_table", "table_constraints", "parse_range", "parse_order", "class_balance", "peek_csv", "to_safe_csv", "formula_safe"]
