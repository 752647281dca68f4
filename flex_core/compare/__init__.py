"""FLEX next to SHAP and LIME: their importances and rank agreement."""

from ._methods import (
    SHAP_EXPLAINERS,
    LimeImportance,
    RankAgreement,
    RunEstimate,
    ShapImportance,
    add_lime_to_json,
    add_shap_to_json,
    encoded_column_owners,
    estimate_lime,
    estimate_shap,
    flex_shap_agreement,
    format_rank_cell,
    importance_rank,
    lime_importance,
    normalise_to_max,
    rank_agreement,
    rank_correlations,
    ranking_table,
    shap_importance,
    sum_columns_to_features,
)

__all__ = ["SHAP_EXPLAINERS", "ShapImportance", "LimeImportance", "RankAgreement", "shap_importance", "lime_importance", "rank_agreement", "flex_shap_agreement", "rank_correlations", "ranking_table", "importance_rank", "format_rank_cell", "encoded_column_owners", "sum_columns_to_features", "normalise_to_max", "add_shap_to_json", "add_lime_to_json", "RunEstimate", "estimate_shap", "estimate_lime"]
