"""FLEX next to SHAP and LIME: their importances and rank agreement.

By concern: ``_columns`` (one-hot columns back to features), ``_scores`` (what SHAP and LIME
results share), ``_shap``, ``_lime``, ``_agreement`` (rank agreement), ``_tables`` (the paper's
ranking table), ``_estimates`` (how long SHAP and LIME take) and ``_json`` (the CLI's additions).
"""

from .._results import importance_rank
from ._agreement import RankAgreement, flex_shap_agreement, rank_agreement, rank_correlations
from ._columns import encoded_column_owners, sum_columns_to_features
from ._estimates import RunEstimate, estimate_lime, estimate_shap
from ._json import add_lime_to_json, add_shap_to_json
from ._lime import LimeImportance, lime_importance, normalise_to_max
from ._shap import SHAP_EXPLAINERS, ShapImportance, shap_importance
from ._tables import format_rank_cell, ranking_table

__all__ = ["SHAP_EXPLAINERS", "ShapImportance", "LimeImportance", "RankAgreement", "shap_importance", "lime_importance", "rank_agreement", "flex_shap_agreement", "rank_correlations", "ranking_table", "importance_rank", "format_rank_cell", "encoded_column_owners", "sum_columns_to_features", "normalise_to_max", "add_shap_to_json", "add_lime_to_json", "RunEstimate", "estimate_shap", "estimate_lime"]
