"""FLEX next to SHAP and LIME: their importances and rank agreement.

shap and lime load when :func:`shap_importance` / :func:`lime_importance` run (``pip install "flex-studio[compare]"``).
By concern: ``_columns`` (one-hot columns back to features), ``_scores`` (what SHAP and LIME
results share), ``_shap``, ``_lime``, ``_permutation`` (permutation importance on held-out rows), ``_agreement`` (rank agreement), ``_tables`` (the paper's
ranking table) and ``_json`` (the CLI's additions). How long SHAP and LIME take is the app's
business (``ui/estimates.py``).
"""

from ._agreement import RankAgreement, flex_shap_agreement, rank_agreement
from ._lime import LimeImportance, lime_importance
from ._permutation import permutation_importance
from ._shap import ShapImportance, shap_importance
from ._tables import ranking_table

__all__ = [
    "ShapImportance", "LimeImportance", "RankAgreement", "shap_importance", "lime_importance", "rank_agreement",
    "flex_shap_agreement", "ranking_table", "permutation_importance",
]
