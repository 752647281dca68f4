"""Regions that matter: rule-defined regions.

* :func:`check_rule`, :func:`rule_mask`, :func:`rule_text`: a region as a rule, ``[{"feature", "op", "value"}]``;
  :func:`run_rule_region` (``explainer.explain_region(rule=...)``) explains one as a RegionalResult.
"""

from ._rules import OPS, check_rule, condition_text, parse_condition, rule_mask, rule_text
from ._runs import check_rule_region, run_rule_region

__all__ = ["OPS", "parse_condition", "check_rule", "rule_mask", "rule_text", "condition_text", "run_rule_region", "check_rule_region"]
