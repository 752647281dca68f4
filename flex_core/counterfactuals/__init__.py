"""Counterfactuals: the set they live in, the generators that make them, the store, and quality measures."""

from ._batch import BatchGenerator
from ._dice import DiceGenerator
from ._quality import counterfactual_quality
from ._refine import REFINE_MODES, default_refine, refine_counterfactuals
from ._registry import DEFAULT_GENERATOR, GENERATORS, generator_defaults, make_generator, register_generator
from ._set import CounterfactualGenerator, CounterfactualSet, constraint_violations, decode_rows, encode_rows
from ._spread import connect_cluster
from ._store import CounterfactualStore, factual_rows, training_ranges
from ._whatif import WhatIf

__all__ = [
    "CounterfactualSet", "CounterfactualGenerator", "CounterfactualStore", "encode_rows", "decode_rows", "BatchGenerator",
    "DiceGenerator", "DEFAULT_GENERATOR", "GENERATORS", "register_generator", "make_generator", "generator_defaults",
    "factual_rows", "training_ranges", "counterfactual_quality", "constraint_violations", "REFINE_MODES", "default_refine",
    "refine_counterfactuals", "WhatIf", "connect_cluster",
]
