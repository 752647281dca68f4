"""FLEX next to SHAP and LIME: their importances and rank agreement.

shap and lime load when :func:`shap_importance` / :func:`lime_importance` run (``pip install "flex-studio[compare]"``).
By concern: ``_columns`` (one-hot columns back to features), ``_scores`` (what SHAP and LIME
results share), ``_shap``, ``_lime``, ``_permutation`` (permutation importance on held-out rows), ``_agreement``
(rank agreement), ``_tables`` (the paper's ranking table), ``_json`` (the CLI's additions),
``_shap_views`` (what the SHAP views read: the dependence plot's colour, one case beside its counterfactuals) and
``_dependence`` (partial dependence and ICE). How long SHAP and LIME take is the app's business (``ui/estimates.py``).
"""

from ._agreement import RankAgreement, flex_shap_agreement, rank_agreement
from ._dependence import dependence_curves
from ._lime import LimeImportance, lime_importance
from ._permutation import permutation_importance
from ._shap import ShapImportance, shap_importance
from ._shap_views import case_agreement, strongest_interaction
from ._tables import ranking_table

__all__ = [
    "ShapImportance", "LimeImportance", "RankAgreement", "shap_importance", "lime_importance", "rank_agreement",
    "flex_shap_agreement", "ranking_table", "permutation_importance", "dependence_curves", "case_agreement",
    "strongest_interaction",
]
