"""Counterfactuals: the set they live in, the generators that make them, the store, and quality measures."""

from ._batch import BatchGenerator
from ._dice import DiceGenerator
from ._quality import counterfactual_quality, diversity, feature_mad, mixed_distances, plausibility, proximity, sparsity
from ._refine import REFINE_MODES, RELATIVE_TOLERANCE, default_refine, refine_counterfactuals
from ._registry import DEFAULT_GENERATOR, GENERATORS, generator_defaults, generator_key, make_generator, register_generator
from ._revert import necessary_changes, revert_single_features
from ._set import (
    CounterfactualGenerator,
    CounterfactualSet,
    GeneratorParams,
    Progress,
    assemble_counterfactual_set,
    check_request,
    constraint_violations,
    copy_tolerance,
    decode_rows,
    encode_rows,
    query_seed,
    resolve_permitted_range,
)
from ._store import CounterfactualStore, factual_rows, training_ranges
from ._tables import counterfactual_table
from ._whatif import WhatIf

__all__ = ["WhatIf", "CounterfactualSet", "CounterfactualGenerator", "GeneratorParams", "Progress", "encode_rows", "decode_rows", "query_seed", "resolve_permitted_range", "assemble_counterfactual_set", "check_request", "revert_single_features", "necessary_changes", "BatchGenerator", "DiceGenerator", "DEFAULT_GENERATOR", "GENERATORS", "register_generator", "make_generator", "generator_key", "generator_defaults", "CounterfactualStore", "factual_rows", "training_ranges", "counterfactual_quality", "diversity", "feature_mad", "mixed_distances", "plausibility", "proximity", "sparsity", "counterfactual_table", "REFINE_MODES", "RELATIVE_TOLERANCE", "default_refine", "refine_counterfactuals", "constraint_violations", "copy_tolerance"]
