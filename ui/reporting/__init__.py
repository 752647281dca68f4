"""The dashboard's words and tables: plain-language readings, tables for people and the self-contained HTML report.

Pure functions of flex_core's results (no Streamlit), so tests run them without the app. They moved
here from flex_core.report: only the dashboard uses them, and the library exports what its users call.
"""

from flex_core.formatting import format_duration, format_number, format_share, plural

from ._checks import (
    describe_found_counts,
    describe_found_regions,
    describe_generator_sensitivity,
    describe_group_replication,
    describe_region_replication,
    describe_retrain,
    generator_sensitivity_table,
    multiple_testing_caveat,
    region_title,
    retrain_table,
)
from ._html import ReportSection, build_html_report
from ._quality import describe_model_curves, describe_permutation
from ._readings import (
    FeatureLists,
    describe_certainty,
    describe_coverage,
    describe_global,
    describe_magnitudes,
    describe_model,
    describe_neighbour_ties,
    describe_passengers,
    describe_r_interval,
    describe_regional,
    describe_regression,
    describe_tau_sweep,
    describe_what_must_change,
    feature_lists,
    majority_outcome,
    quadrant_legend,
    rank_text,
    what_must_change_columns,
    what_must_change_frame,
    what_must_change_reading,
    with_interval,
)
from ._session import (
    HOW_TO_READ,
    SessionResults,
    counterfactual_examples_table,
    found_regions_table,
    groups_table,
    session_sections,
)
from ._settings import describe_all_zero, describe_settings, generator_text, settings_of, tau_text
from ._tables import (
    changed_first,
    class_balance,
    counterfactual_table,
    dataset_label,
    display_case_table,
    feature_table,
    format_prediction,
    header,
    human_table,
    importance_table,
    mode_shift_table,
    mode_words,
    model_quality_table,
    probability_label,
    regional_table,
    score_label,
    settings_table,
    table_constraints,
    target_words,
)

__all__ = ["describe_settings", "describe_all_zero", "generator_text", "settings_of", "tau_text", "describe_global", "describe_regional", "describe_magnitudes", "describe_tau_sweep", "describe_coverage", "describe_model", "describe_regression", "majority_outcome", "feature_lists", "FeatureLists", "quadrant_legend", "with_interval", "rank_text", "describe_certainty", "describe_passengers", "what_must_change_reading", "what_must_change_columns", "what_must_change_frame", "describe_what_must_change", "describe_generator_sensitivity", "generator_sensitivity_table", "describe_retrain", "retrain_table", "ReportSection", "build_html_report", "SessionResults", "session_sections", "counterfactual_examples_table", "HOW_TO_READ", "importance_table", "regional_table", "mode_shift_table", "settings_table", "dataset_label", "human_table", "model_quality_table", "format_number", "format_duration", "format_share", "plural", "describe_neighbour_ties", "describe_r_interval", "feature_table", "table_constraints", "class_balance", "counterfactual_table", "display_case_table", "changed_first", "header", "mode_words", "probability_label", "format_prediction", "score_label", "target_words", "region_title", "multiple_testing_caveat", "describe_found_counts", "describe_found_regions", "describe_group_replication", "describe_region_replication", "found_regions_table", "groups_table", "describe_model_curves", "describe_permutation"]
