"""FLEX next to SHAP and LIME: their importances and rank agreement.

shap and lime load when :func:`shap_importance` / :func:`lime_importance` run (``pip install "flex-studio[compare]"``).
"""

from ._methods import (
    LimeImportance,
    RankAgreement,
    ShapImportance,
    flex_shap_agreement,
    lime_importance,
    rank_agreement,
    ranking_table,
    shap_importance,
)

__all__ = [
    "ShapImportance", "LimeImportance", "RankAgreement", "shap_importance", "lime_importance", "rank_agreement",
    "flex_shap_agreement", "ranking_table",
]
