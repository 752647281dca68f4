"""Regions that matter: rule-defined regions, region discovery with FDR control, and group comparison.

* A region as a rule, ``[{"feature", "op", "value"}]``, is explained by
  :func:`flex_core.importance.run_rule_region` (``explainer.explain_region(rule=...)``), beside the Hamming regions.
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
    check_discovery_options,
    discover,
    divergence,
    find_regions,
    permutation_null,
)
from ._groups import COST_DISTANCE, Group, GroupsResult, compare_groups, minimal_costs
from ._pool import Pool, build_pool, quantile_bins

__all__ = [
    "Region", "RegionsResult", "find_regions", "check_discovery_options", "discover", "candidate_conditions", "divergence", "benjamini_hochberg",
    "permutation_null", "DIVERGENCE", "Group", "GroupsResult", "compare_groups", "minimal_costs", "COST_DISTANCE",
    "Pool", "build_pool", "quantile_bins",
]
