"""The interactive report file in real Chromium, opened from disk with every network request refused: moving τ,
picking a region and a case give the API's numbers, and text from the data stays text."""

from __future__ import annotations

import math
import os

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from tools.serve import CHROMIUM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not installed"),
]
N_FACTUALS = 80
RULE = ["speed>=70"]


def open_offline(browser, path):
    """The file in a new page, every request but the file itself refused; (page, refused URLs, dialogs, errors)."""
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    refused: list[str] = []
    dialogs: list[str] = []
    errors: list[str] = []

    def route(r):
        if r.request.url == path.as_uri():
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    return page, refused, dialogs, errors


def move(page, feature: str, value: float) -> None:
    """Move a τ slider as a hand does (an input event), and wait until the charts are redrawn."""
    page.evaluate("window.flexReport.lastRedrawMs = null")
    page.evaluate(
        """([feature, value]) => {
             const input = document.querySelector(`#tau-controls input[data-feature="${feature}"]`);
             input.value = String(value);
             input.dispatchEvent(new Event("input", {bubbles: true}));
           }""",
        [feature, value],
    )
    page.wait_for_function("window.flexReport.lastRedrawMs !== null")


def shown_value(page, selector: str) -> float:
    text = page.get_attribute(selector, "data-value")
    return float("nan") if text in (None, "NaN", "null") else float(text)


def table_value(page, table: str, row_label: str, column: int) -> float:
    """The full-precision number behind a table cell (its data-value), in the row whose first cell is ``row_label``."""
    rows = page.locator(f"#{table} tr").filter(has=page.locator("td", has_text=row_label))
    return float(rows.first.locator("td").nth(column).get_attribute("data-value"))


def test_tau_a_region_and_a_case_give_the_apis_numbers_offline(browser, user_explainer, tmp_path):
    explainer = user_explainer
    query = int(explainer.sample_factuals(N_FACTUALS)[5])
    path = explainer.report(tmp_path / "report.html", n_factuals=N_FACTUALS, tau=0.1,
                            regions={"around": {"query": query, "k": 7}, "fast": {"rule": RULE}})
    page, refused, dialogs, errors = open_offline(browser, path)
    speed = explainer.task.feature("speed").label

    move(page, "*", 0.3)
    move(page, "speed", 0.22)
    tau = {"*": 0.3, "speed": 0.22}
    assert page.inner_text("#tau-now") == "τ = 0.22 to 0.3"
    g = explainer.explain_global(n_factuals=N_FACTUALS, tau=tau)
    j = explainer.task.feature_names.index("speed")
    # 1: global F of speed at these τ
    assert table_value(page, "global-table", speed, 1) == pytest.approx(g.frequency_mean[j], abs=1e-9)
    assert f"{g.frequency_mean[j]:.3f}" in page.locator("#global-table").inner_text()

    # 2: a region's r and its interval
    page.select_option("#region-list", label=page.locator("#region-list option", has_text="fast").inner_text())
    page.wait_for_function("document.getElementById('region-r').textContent.length > 0")
    region = explainer.explain_region(global_result=g, rule=RULE, tau=tau)
    assert not math.isnan(region.pearson_r)
    assert shown_value(page, "#region-r") == pytest.approx(region.pearson_r, abs=1e-9)
    assert float(page.get_attribute("#region-r", "data-low")) == pytest.approx(region.pearson_r_interval[0], abs=1e-9)
    assert f"Agreement with all cases (Pearson r) = {region.pearson_r:.3f}" in page.inner_text("#region-r")
    # The reading in plain words, as the app's with the analyst's terms off (ui.reporting.describe_regional).
    assert f"(agreement {region.pearson_r:.2f} on a scale from −1 to 1)" in page.inner_text("#region-reading")
    # ... and so are the scatter's corners and the mode shift: the chart's letters and a relative change, no δ
    reading, modes = page.inner_text("#region-reading"), page.inner_text("#region-modes")
    assert "quadrant" not in reading and "δ" not in reading + modes and "relative change" in modes
    shift = next(s for s in region.mode_shift if not math.isnan(s["delta"]))
    assert f"{abs(round(100 * shift['delta']))}%" in modes

    # 3: a case found by its row id: its counterfactuals, changed cells marked, and its f_j at these τ
    page.fill("#row-search", str(query))
    page.wait_for_function(f"document.querySelector('#row-cf-table td').textContent === 'this case (row {query})'")
    local = explainer.explain_local([query], tau=tau)[0]
    headers = page.locator("#row-cf-table th").all_inner_texts()
    column = headers.index(explainer.task.feature("speed").header)
    share = "share of its valid ways out that change it"
    assert table_value(page, "row-cf-table", share, column) == pytest.approx(local.frequency_mean[j], abs=1e-9)
    cfset = explainer.counterfactuals([query])
    assert page.locator("#row-cf-table tr").count() == 1 + 1 + int(cfset.found[0].sum()) + 1
    x, cfs = cfset.factuals[0], cfset.counterfactuals[0][cfset.found[0]]
    # What its ways out change comes first, the most often changed first (ties in the dictionary's order); then the
    # prediction and "valid"; the headers carry units, as in the app.
    moves = [int(np.sum(np.abs(cfs[:, k] - x[k]) > 1e-6)) for k in range(len(x))]
    order = sorted((k for k in range(len(x)) if moves[k]), key=lambda k: (-moves[k], k))
    first = [explainer.task.features[k].header for k in order]
    assert order and headers[1:len(first) + 3] == [*first, next(h for h in headers if h.startswith("P(")), "valid"]
    ranges = np.where(explainer.store.ranges > 0, explainer.store.ranges, np.inf)
    continuous = np.array([f.is_continuous for f in explainer.task.features])
    counts = np.where(continuous, np.abs(cfs - x) / ranges > g.tau, cfs != x)
    assert page.locator("#row-cf-table td.changed").count() == int(counts.sum())

    assert refused == [] and dialogs == [] and errors == []


def hostile_explainer():
    """Text cells and a column name that would be markup, a script or a spreadsheet formula if read as such."""
    rng = np.random.default_rng(3)
    n = 300
    script, formula = "<script>alert(1)</script>", '=HYPERLINK("http://x")'
    column = "<img src=x onerror=alert(2)>"
    frame = pd.DataFrame({"speed": rng.uniform(0, 100, n).round(1),
                          column: rng.choice([script, formula, "plain"], n)})
    y = np.where((frame["speed"] > 60) | (frame[column] == script), "bad", "good")
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    model = Pipeline([("enc", ColumnTransformer([("oh", OneHotEncoder(handle_unknown="ignore"), [column])],
                                                remainder="passthrough")),
                      ("rf", RandomForestClassifier(n_estimators=30, random_state=0))]).fit(frame, y)
    return fc.FlexExplainer(model, frame, undesired="bad", y=y, n_cf=4, seed=0), script, formula, column


def test_html_and_formula_text_in_the_data_shows_as_text_and_nothing_runs(browser, tmp_path):
    explainer, script, formula, column = hostile_explainer()
    rows = explainer.sample_factuals(60)
    query = next(int(r) for r in rows if explainer.task.frame.loc[r, column] == script)
    path = explainer.report(tmp_path / "hostile.html", n_factuals=60,
                            regions={f"{script} {formula}": {"query": query, "k": 5}}, title=f"{script} report")
    page, refused, dialogs, errors = open_offline(browser, path)
    page.fill("#row-search", str(query))
    page.wait_for_function(f"document.querySelector('#row-cf-table td').textContent === 'this case (row {query})'")
    text = page.inner_text("body")
    assert script in text and formula in text and column in text
    assert script in page.title()
    # The only scripts are the file's four; no image, frame or link came from the data; the charts show the name as text.
    counts = page.evaluate("""() => ({scripts: document.querySelectorAll('script').length,
                                      markup: document.querySelectorAll('img, iframe, object, embed, svg a, a[href]').length,
                                      ticks: [...document.querySelectorAll('#global-chart .ytick text')].map(t => t.textContent)})""")
    assert counts["scripts"] == 4 and counts["markup"] == 0
    assert column in counts["ticks"]
    # Search by the formula's text finds the rows that hold it.
    page.fill("#row-search", "HYPERLINK")
    page.wait_for_function("document.getElementById('row-list').options.length > 0")
    assert formula in page.inner_text("#row-cf-table")
    assert refused == [] and dialogs == [] and errors == []
