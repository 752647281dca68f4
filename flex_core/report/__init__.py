"""Plain-language readings and the self-contained HTML report."""

from ._html import ReportSection, build_html_report
from ._readings import (
    WHAT_MUST_CHANGE_READING,
    describe_certainty,
    describe_coverage,
    describe_global,
    describe_neighbour_ties,
    describe_passengers,
    describe_regional,
    describe_tau_sweep,
    quadrant_legend,
    rank_text,
    what_must_change_frame,
    with_interval,
)

__all__ = ["describe_global", "describe_regional", "describe_neighbour_ties", "describe_tau_sweep", "describe_coverage", "quadrant_legend", "with_interval", "rank_text", "describe_certainty", "describe_passengers", "WHAT_MUST_CHANGE_READING", "what_must_change_frame", "ReportSection", "build_html_report"]
