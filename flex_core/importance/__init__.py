"""FLEX importance: the metrics of Algorithm 1, regions, the mode shift, τ sweeps and runs."""

from .._uncertainty import (
    BOOTSTRAP_LEVEL,
    BOOTSTRAP_RESAMPLES,
    INTERVAL_LEVEL,
    INTERVAL_METHOD,
    bootstrap_counts,
    bootstrap_means,
    frequency_intervals,
    pearson_interval,
    rank_intervals,
    wilson_interval,
)
from ._flex import (
    compare_with_global,
    flex_importance,
    hamming_distances,
    interval_config,
    mode_shift,
    parse_criterion,
    regional_importance,
    select_region,
)
from ._metrics import (
    DEFAULT_TAU,
    DICE_EPSILON,
    aggregate,
    change_matrix,
    dice_importance,
    local_frequencies,
    local_magnitudes,
    resolve_tau,
)
from ._necessity import NecessitySufficiency, necessity_sufficiency, seed_spread, with_necessity_sufficiency
from ._rules import OPS, check_rule, condition_text, parse_condition, rule_mask, rule_text
from ._runs import (
    check_region_arguments,
    check_rule_region,
    random_query,
    rows_meeting,
    run_global,
    run_local,
    run_regional,
    run_rule_region,
    sample_factuals,
)
from ._sensitivity import generator_sensitivity
from ._sweep import TAU_PANELS, tau_sweep

__all__ = ["DEFAULT_TAU", "DICE_EPSILON", "resolve_tau", "change_matrix", "local_frequencies", "local_magnitudes", "aggregate", "dice_importance", "flex_importance", "regional_importance", "parse_criterion", "hamming_distances", "select_region", "mode_shift", "compare_with_global", "pearson_interval", "interval_config", "TAU_PANELS", "tau_sweep", "sample_factuals", "run_local", "run_global", "run_regional", "run_rule_region", "check_rule_region", "check_region_arguments", "OPS", "parse_condition", "check_rule", "rule_mask", "rule_text", "condition_text", "random_query", "rows_meeting", "INTERVAL_LEVEL", "INTERVAL_METHOD", "wilson_interval", "rank_intervals", "frequency_intervals", "BOOTSTRAP_RESAMPLES", "BOOTSTRAP_LEVEL", "bootstrap_counts", "bootstrap_means", "generator_sensitivity", "NecessitySufficiency", "necessity_sufficiency", "with_necessity_sufficiency", "seed_spread"]
