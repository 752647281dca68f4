"""Plain-language readings and the self-contained HTML report."""

from ._html import ReportSection, build_html_report
from ._readings import describe_coverage, describe_global, describe_regional, describe_tau_sweep, quadrant_legend

__all__ = ["describe_global", "describe_regional", "describe_tau_sweep", "describe_coverage", "quadrant_legend", "ReportSection", "build_html_report"]
