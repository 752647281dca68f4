"""Real Chromium: a constraint between features typed on the Data & model page is checked, applied, shows how
it bites (the global run's counts and its note), goes into the address bar, and a reload comes back with it."""

from __future__ import annotations

import json
import os
import re

import pytest

from tests.browser.test_state_browser import WAIT, new_page, query_params, wait_idle
from tools.serve import CHROMIUM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not installed"),
]
RULE = "cf.speed <= x.speed - 5"
#: What the page says once the rule is applied: the global run's counts, and its note (every case breaks the rule at
#: its own speed, so only counterfactuals that lower speed by 5 are kept).
COUNTS = re.compile(r"Applied: 1 constraint\. In the global run over 10 cases, [1-9]\d* valid ways out")
NOTE = "10 of the 10 cases break"


def test_a_constraint_added_on_the_data_page_updates_the_counts_and_is_kept_in_the_link(app):
    url, browser = app
    page = new_page(browser)
    page.goto(f"{url}/data-and-model?dataset=builtin:synthetic-regional&n_factuals=10&n_cf=2&cv_folds=2",
              wait_until="domcontentloaded")
    page.get_by_text("Constraints between features", exact=True).first.wait_for(timeout=WAIT)
    wait_idle(page)
    assert page.get_by_text("Applied:", exact=False).count() == 0 and page.get_by_text(NOTE).count() == 0
    box = page.get_by_label("Constraints, one per line")
    box.fill("cf.speeed > 1")
    box.press("Control+Enter")
    page.get_by_text("1 constraint cannot be applied", exact=False).first.wait_for(timeout=WAIT)
    assert page.get_by_role("button", name="Apply constraints").is_disabled()
    box.fill(RULE)
    box.press("Control+Enter")
    wait_idle(page)
    page.get_by_role("button", name="Apply constraints").click()
    page.get_by_text(COUNTS).first.wait_for(timeout=WAIT)
    page.get_by_text(NOTE, exact=False).first.wait_for(timeout=WAIT)
    wait_idle(page)
    effect = page.locator("[data-testid='stDataFrame']").filter(has_text="candidates it rejected")
    assert effect.count() == 1
    # The address bar holds the constraint, so a reload (and a shared link) keeps it.
    page.wait_for_function("() => location.search.includes('constraints=')", timeout=WAIT)
    assert json.loads(query_params(page)["constraints"]) == [RULE]
    page.reload(wait_until="domcontentloaded")
    page.get_by_text(COUNTS).first.wait_for(timeout=WAIT)
    page.get_by_text(NOTE, exact=False).first.wait_for(timeout=WAIT)
    wait_idle(page)
    page.wait_for_function(f"() => [...document.querySelectorAll('textarea')].some(t => t.value === {RULE!r})",
                           timeout=WAIT)
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()
