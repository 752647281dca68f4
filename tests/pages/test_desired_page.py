"""A desired outcome picked with a CSV upload (issue 38 item 2 in the app): the pages' counterfactuals reach it."""

from __future__ import annotations

import pytest

from tests.counterfactuals.test_desired import planted
from tests.pages.conftest import chart, shown, start_csv

pytestmark = pytest.mark.slow


def test_a_csv_loaded_with_a_desired_outcome_makes_every_way_out_reach_it():
    at = start_csv(planted(300), target="y", undesirable=["A"], desired=["C"], n_factuals=10, n_cf=3,
                   page="app_pages/global.py")
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    sidebar = " ".join(shown(c.value) for c in at.sidebar.caption)
    assert "A way out must reach C, not just leave A." in sidebar
    # Only raising x2 leads to class C in the planted data: every way out changes it.
    trace = chart(at, "global_chart")["data"][0]
    frequency = dict(zip(trace["customdata"], trace["x"]))
    # (At τ = 0.1 a factual just under the boundary needs less than a tenth of x2's range, which F does not count.)
    assert frequency["x2"] >= 0.8 and all(v <= 0.3 for k, v in frequency.items() if k != "x2"), frequency
