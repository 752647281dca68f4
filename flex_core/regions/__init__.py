"""Regions that matter: rule-defined regions, region discovery with FDR control, and group comparison.

* A region as a rule, ``[{"feature", "op", "value"}]``, is explained by
  ``explainer.explain_region(rule=...)``, beside the Hamming regions.
* :func:`find_regions` (``explainer.find_regions()``): the rule-defined regions whose F differs from
  global, tested against a permutation null with Benjamini–Hochberg FDR control (:class:`RegionsResult`).
* :func:`compare_groups` (``explainer.compare_groups(by=...)``): flip share, cost of the minimal change
  and F per value of one feature, with a verdict that names only separated differences (:class:`GroupsResult`).

Nothing here generates a counterfactual per candidate: one pool of factuals, through the store.
"""

from ._discovery import Region, RegionsResult, find_regions
from ._groups import Group, GroupsResult, compare_groups

__all__ = [
    "Region", "RegionsResult", "find_regions", "Group", "GroupsResult", "compare_groups",
]
