"""FLEX importance: the metrics of Algorithm 1, regions (Hamming and rule-defined), the mode shift, τ sweeps and runs."""

from .._uncertainty import bootstrap_counts, bootstrap_means
from ._flex import DEFAULT_TAU, flex_importance, run_global, run_local, sample_factuals
from ._necessity import NecessitySufficiency, necessity_sufficiency, with_necessity_sufficiency
from ._region_runs import compare_with_global, mode_shift, regional_importance
from ._rules import Condition, check_rule, rule_mask, rule_text
from ._runs import rows_meeting, run_regional, with_extras
from ._sensitivity import generator_sensitivity
from ._sweep import tau_sweep

__all__ = [
    "DEFAULT_TAU", "flex_importance", "regional_importance", "mode_shift", "compare_with_global", "tau_sweep",
    "sample_factuals", "run_local", "run_global", "with_extras", "run_regional", "Condition", "check_rule", "rule_mask",
    "rule_text", "rows_meeting", "bootstrap_counts", "bootstrap_means", "generator_sensitivity",
    "NecessitySufficiency", "necessity_sufficiency", "with_necessity_sufficiency",
]
