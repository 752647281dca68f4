"""Regions that matter: rule-defined regions, region discovery with FDR control, and group comparison.

* :func:`check_rule`, :func:`rule_mask`, :func:`rule_text`: a region as a rule, ``[{"feature", "op", "value"}]``;
  :func:`run_rule_region` (``explainer.explain_region(rule=...)``) explains one as a RegionalResult.
* :func:`find_regions` (``explainer.find_regions()``): the rule-defined regions whose F differs from
  global, tested against a permutation null with Benjamini–Hochberg FDR control (:class:`RegionsResult`).
* :func:`compare_groups` (``explainer.compare_groups(by=...)``): flip share, cost of the minimal change
  and F per value of one feature, with a verdict that names only separated differences (:class:`GroupsResult`).

Nothing here generates a counterfactual per candidate: one pool of factuals, through the store.
"""

from ._discovery import (
    DIVERGENCE,
    Region,
    RegionsResult,
    benjamini_hochberg,
    candidate_conditions,
    discover,
    divergence,
    find_regions,
    permutation_null,
)
from ._groups import COST_DISTANCE, Group, GroupsResult, compare_groups, minimal_costs
from ._pool import Pool, build_pool, quantile_bins
from ._rules import OPS, check_rule, condition_text, parse_condition, rule_mask, rule_text
from ._runs import check_rule_region, run_rule_region

__all__ = [
    "OPS", "parse_condition", "check_rule", "rule_mask", "rule_text", "condition_text", "run_rule_region", "check_rule_region",
    "Region", "RegionsResult", "find_regions", "discover", "candidate_conditions", "divergence", "benjamini_hochberg",
    "permutation_null", "DIVERGENCE", "Group", "GroupsResult", "compare_groups", "minimal_costs", "COST_DISTANCE",
    "Pool", "build_pool", "quantile_bins",
]
