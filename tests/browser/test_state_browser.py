"""Real Chromium against `streamlit run app.py`: a click on the map selects the query, the address bar
follows the view so a reload restores it, the view link round-trips, and a bad upload is one error."""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from tools.serve import CHROMIUM, running_app

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not installed"),
]
WAIT = 120_000  # ms; the machine is shared, a first run trains and generates


def query_params(page) -> dict:
    return {k: v[-1] for k, v in parse_qs(urlparse(page.url).query, keep_blank_values=True).items()}


def region_row(page) -> int:
    heading = page.get_by_text(re.compile(r"^Region around row \d+")).first
    heading.wait_for(timeout=WAIT)
    return int(re.search(r"row (\d+)", heading.inner_text()).group(1))


def wait_idle(page) -> None:
    """Until Streamlit has finished the current run (its status widget disappears)."""
    page.wait_for_timeout(300)
    page.wait_for_function("!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=WAIT)


def new_page(browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    page.set_default_timeout(WAIT)  # every wait and click: a shared machine can take long to rerun
    return page


def open_with_csv_chosen(app, csv: Path):
    """A new page on toy2d whose sidebar has ``csv`` chosen as an upload, its form (target, outcome values) showing."""
    url, browser = app
    page = new_page(browser)
    page.goto(f"{url}/?dataset=builtin:toy2d&n_factuals=10&n_cf=2&cv_folds=2", wait_until="domcontentloaded")
    page.get_by_text("Global feature importance", exact=True).first.wait_for(timeout=WAIT)
    sidebar = page.locator("[data-testid='stSidebar']")
    sidebar.get_by_text("CSV upload", exact=True).click()
    sidebar.locator("input[type='file']").set_input_files(str(csv))
    sidebar.get_by_text("Undesirable outcomes").wait_for(timeout=WAIT)
    wait_idle(page)
    return page, sidebar


def open_regional(browser, url):
    page = new_page(browser)
    page.goto(f"{url}/?dataset=builtin:toy2d&n_factuals=10&n_cf=3&cv_folds=2", wait_until="domcontentloaded")
    page.get_by_text("Global feature importance", exact=True).first.wait_for(timeout=WAIT)
    page.get_by_role("link", name="Regional explorer").click()
    region_row(page)
    page.wait_for_selector(".js-plotly-plot .scatterlayer .trace:first-child path.point", timeout=WAIT)
    wait_idle(page)
    return page


def click_a_dot(page, avoid: set[int]) -> int:
    """Click one factual's dot (not the query or a region member) and return its row id."""
    plot = page.locator(".js-plotly-plot:visible").first
    rows = plot.evaluate("gd => gd.data[0].customdata.map(c => c[0])")
    taken = set(avoid) | set(plot.evaluate("gd => (gd.data[1] ? gd.data[1].customdata : []).map(c => c[0])"))
    points = plot.locator(".scatterlayer .trace:first-child path.point")
    for index, row in enumerate(rows):
        if row in taken:
            continue
        box = points.nth(index).bounding_box()
        if box and box["width"] > 0:
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            return int(row)
    raise AssertionError("no free dot to click")


def test_a_click_selects_the_query_and_a_reload_and_the_link_restore_the_view(app):
    url, browser = app
    page = open_regional(browser, url)
    first = region_row(page)
    clicked = click_a_dot(page, {first})
    page.wait_for_function(
        f"() => [...document.querySelectorAll('h2, h3')].some(h => h.innerText.startsWith('Region around row {clicked}'))",
        timeout=WAIT,
    )
    assert region_row(page) == clicked
    # The address bar follows: the query is in it, so a reload comes back to the same view.
    page.wait_for_function(f"() => location.search.includes('query={clicked}')", timeout=WAIT)
    assert query_params(page)["dataset"] == "builtin:toy2d" and query_params(page)["n_factuals"] == "10"
    page.reload(wait_until="domcontentloaded")
    assert region_row(page) == clicked
    assert page.locator("[data-testid='stException']").count() == 0
    # The Report page's link, opened in a fresh session, reproduces the view.
    page.get_by_role("link", name="Report").click()
    code = page.locator("[data-testid='stCode'] code").first
    code.wait_for(timeout=WAIT)
    link = code.inner_text().strip()
    assert f"query={clicked}" in link
    fresh = new_page(browser)
    fresh.goto(link, wait_until="domcontentloaded")
    fresh.get_by_text("Global feature importance", exact=True).first.wait_for(timeout=WAIT)
    fresh.get_by_role("link", name="Regional explorer").click()
    assert region_row(fresh) == clicked
    assert fresh.locator("[data-testid='stException']").count() == 0
    fresh.close()
    page.close()


NO_OUTCOME = "\n".join(["speed,weight", *(f"{20 + i * 1.5},{60 + (i * 7) % 41}" for i in range(60))]).encode()


@pytest.mark.parametrize(("name", "content", "message"), [
    ("photo.csv", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "This is not a text/CSV file"),
    ("numbers.csv", NO_OUTCOME, "No column looks like an outcome"),
])
def test_a_bad_upload_is_one_error_and_the_previous_dataset_stays(app, tmp_path, name, content, message):
    url, browser = app
    page = new_page(browser)
    page.goto(f"{url}/?dataset=builtin:toy2d&n_factuals=10&n_cf=3&cv_folds=2", wait_until="domcontentloaded")
    page.get_by_text("Global feature importance", exact=True).first.wait_for(timeout=WAIT)
    active = page.get_by_text(re.compile(r"Active: toy2d"))
    active.first.wait_for(timeout=WAIT)
    page.get_by_text("CSV upload", exact=True).click()
    bad = tmp_path / name
    bad.write_bytes(content)
    upload = page.locator("[data-testid='stSidebar'] input[type='file']")
    upload.wait_for(state="attached", timeout=WAIT)
    upload.set_input_files(str(bad))
    error = page.locator("[data-testid='stAlertContentError']")
    error.first.wait_for(timeout=WAIT)
    assert error.count() == 1
    assert message in error.first.inner_text()
    assert page.locator("[data-testid='stException']").count() == 0
    # The error is drawn before the rest of the rerun: wait for the sidebar to name the previous dataset
    # again (a count taken at once can race the rerun), and for its chart.
    active.first.wait_for(timeout=WAIT)
    page.locator(".js-plotly-plot:visible").first.wait_for(timeout=WAIT)
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()


def test_with_more_factuals_than_the_map_draws_any_case_is_chosen_by_its_row_number(app, tmp_path):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    n = 12_000  # about 6,000 factuals: more than the map's 5,000 points and the table's 2,000 rows
    speed = rng.uniform(20, 120, n).round(0)
    frame = pd.DataFrame({"severity": np.where(speed > 70, "Severe", "Slight"), "speed": speed,
                          "lighting": rng.choice(["day", "dark"], n)})
    csv = tmp_path / "many.csv"
    frame.to_csv(csv, index=False)
    page, sidebar = open_with_csv_chosen(app, csv)
    sidebar.locator("[data-testid='stMultiSelect']").first.click()
    page.get_by_role("option", name="Severe").click()
    page.keyboard.press("Escape")
    sidebar.get_by_role("button", name="Load CSV").click()
    page.get_by_text(re.compile(r"Active: many")).first.wait_for(timeout=WAIT)
    page.get_by_role("link", name="Regional explorer").click()
    first = region_row(page)
    page.get_by_text("The table lists 2,000 of them", exact=False).first.wait_for(timeout=WAIT)
    page.get_by_text("seeded random sample of 5,000", exact=False).first.wait_for(timeout=WAIT)
    wait_idle(page)
    plot = page.locator(".js-plotly-plot:visible").first
    drawn = set(plot.evaluate("gd => gd.data[0].customdata.map(c => c[0])"))
    off_map = next(int(r) for r in frame.index[frame["speed"] > 80] if int(r) not in drawn and int(r) != first)
    box = page.get_by_label("Row number of the query")
    box.fill(str(off_map))
    box.press("Enter")
    page.wait_for_function(
        f"() => [...document.querySelectorAll('h2, h3')].some(h => h.innerText.startsWith('Region around row {off_map}'))",
        timeout=WAIT,
    )
    wait_idle(page)
    star = f"gd => gd.data.some(t => t.name === 'query' && (t.customdata || []).some(c => c[0] === {off_map}))"
    assert page.locator(".js-plotly-plot:visible").first.evaluate(star)  # the map draws the query the sample left out
    box.fill(str(int(frame.index[frame["speed"] < 30][0])))  # not a factual: one error, the query stays
    box.press("Enter")
    error = page.locator("[data-testid='stAlertContentError']")
    error.first.wait_for(timeout=WAIT)
    assert "not among the cases" in error.first.inner_text() and error.count() == 1
    assert region_row(page) == off_map
    assert page.locator("[data-testid='stException']").count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "regional_many_factuals.png"), full_page=True)  # kept for a look, not tracked
    page.close()


def test_a_fresh_servers_first_request_for_the_old_global_address_opens_the_app(app, tmp_path):
    """The very first request a new server gets, for /global-importance: the app's router answers it.

    With the page scripts in a folder named pages/, Streamlit took that folder for its legacy page list
    until the first st.navigation call: that first request said "Page not found", and the sidebar listed
    the folder's files, whose links ran a page script without the app around it (a KeyError traceback).
    The scripts live in app_pages/ now; this test has a server of its own so its request is the first.
    """
    _, browser = app  # the module's browser; the server is a new one
    with running_app(env={"FLEX_CACHE_DIR": str(tmp_path)}) as url:
        page = new_page(browser)
        try:
            page.goto(f"{url}/global-importance?dataset=builtin:toy2d&n_factuals=10&n_cf=3&cv_folds=2",
                      wait_until="domcontentloaded")
            page.get_by_text("Global feature importance", exact=True).first.wait_for(timeout=WAIT)
            wait_idle(page)
            assert page.get_by_text("Page not found", exact=False).count() == 0
            assert query_params(page)["n_factuals"] == "10" and query_params(page)["dataset"] == "builtin:toy2d"
            links = [link.inner_text().split("\n")[-1] for link in page.locator("[data-testid='stSidebarNav'] a").all()]
            assert links == ["Data & model", "Global", "Regional explorer", "Thresholds", "Counterfactuals", "What-if",
                             "Compare", "Report", "Glossary"]
            assert page.locator("[data-testid='stException']").count() == 0
        finally:
            page.close()


def test_a_page_link_clicked_during_the_first_run_keeps_the_sidebar_settings(app):
    url, browser = app
    page = new_page(browser)
    # A seed no other test used: the first run trains and generates, so the click lands while it runs.
    page.goto(f"{url}/?dataset=builtin:synthetic-regional&generator=batch&n_factuals=30&n_cf=3&cv_folds=2&seed=7",
              wait_until="domcontentloaded")
    page.get_by_role("link", name="Thresholds", exact=True).click()
    page.get_by_text("Thresholds (τ)", exact=True).first.wait_for(timeout=WAIT)
    wait_idle(page)
    sidebar = page.locator("[data-testid='stSidebar']")
    sidebar.get_by_text(re.compile(r"Active: synthetic-regional")).first.wait_for(timeout=WAIT)
    view = query_params(page)
    # synthetic-regional is the default dataset, so the address leaves it out; the sidebar names it (above).
    assert "dataset" not in view and (view["generator"], view["n_factuals"], view["seed"]) == ("batch", "30", "7")
    assert sidebar.get_by_label("Cases to explain").input_value() == "30"
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()


def test_a_users_csv_and_lightgbm_file_uploaded_in_the_sidebar_are_explained(app, tmp_path):
    """Issue 19: a data scientist's own data and LightGBM model (category columns, a name with a space) through the
    sidebar's two upload widgets; the page then explains with that model."""
    import numpy as np
    import pandas as pd

    import flex_core as fc

    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    n = 240
    X = pd.DataFrame({"bill length": rng.normal(44, 5, n).round(1),
                      "species": pd.Categorical(rng.choice(["Adelie", "Gentoo", "Chinstrap"], n)),
                      "island": pd.Categorical(rng.choice(["Biscoe", "Dream", "Torgersen"], n))})
    y = np.where((X["bill length"] > 45) | (X["species"] == "Gentoo"), "heavy", "light")
    model = lgb.LGBMClassifier(n_estimators=15, num_leaves=7, min_child_samples=5, verbose=-1, n_jobs=1).fit(X, y)
    csv = tmp_path / "penguins.csv"
    X.assign(mass=y).to_csv(csv, index=False)
    model_file = fc.models.save_model(model, tmp_path / "penguins_lightgbm.skops")
    page, sidebar = open_with_csv_chosen(app, csv)
    sidebar.locator("[data-testid='stSelectbox']").filter(has_text="Target column").click()
    page.get_by_role("option", name="mass").click()
    wait_idle(page)
    sidebar.locator("[data-testid='stMultiSelect']").first.click()
    page.get_by_role("option", name="heavy").click()
    page.keyboard.press("Escape")
    sidebar.get_by_role("button", name="Load CSV").click()
    page.get_by_text(re.compile(r"Active: penguins")).first.wait_for(timeout=WAIT)
    wait_idle(page)
    sidebar.get_by_text("Load a model file").click()
    model_upload = sidebar.locator("[data-testid='stFileUploader']").filter(has_text="Model file (.skops)")
    model_upload.locator("input[type='file']").set_input_files(str(model_file))
    sidebar.get_by_role("button", name="Use this model").click()
    sidebar.get_by_text("Active model file: penguins_lightgbm.skops").wait_for(timeout=WAIT)
    wait_idle(page)
    page.wait_for_selector(".js-plotly-plot .barlayer .point path", timeout=WAIT)
    chart = page.locator(".js-plotly-plot:visible").first
    drawn = set(chart.evaluate("gd => gd.data.flatMap(t => t.y || [])"))
    assert {"Bill length", "Species", "Island"} <= drawn  # the user's features, explained (names tidied, issue 35)
    assert page.get_by_text("penguins.csv · penguins_lightgbm.skops · minimal ways out read from the model's trees").count() >= 1  # the strip names it too
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "global_page_uploaded_lightgbm.png"), full_page=True)
    page.close()


def test_a_csv_with_three_outcomes_takes_the_outcome_a_way_out_must_reach(app, tmp_path):
    """Issue 38 item 2 in Chromium: the form's "Outcome a way out must reach" offers the outcomes other than the
    undesirable one, is clicked, loaded and said back in the sidebar, and the global chart is drawn (that every way out
    reaches it is tested in the library: tests/counterfactuals, the planted three-class tests)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(1)
    n = 600
    speed = rng.uniform(20, 120, n).round(0)
    frame = pd.DataFrame({"speed": speed, "lighting": rng.choice(["day", "dark"], n),
                          "severity": np.select([speed > 85, speed > 50], ["severe", "serious"], "slight")})
    csv = tmp_path / "three.csv"
    frame.to_csv(csv, index=False)
    page, sidebar = open_with_csv_chosen(app, csv)
    sidebar.locator("[data-testid='stSelectbox']").filter(has_text="Target column").click()
    page.get_by_role("option", name="severity").click()
    wait_idle(page)
    sidebar.locator("[data-testid='stMultiSelect']").filter(has_text="Undesirable outcome").locator("input").click()
    page.get_by_role("option", name="severe").click()
    page.keyboard.press("Escape")
    wait_idle(page)
    # the box's middle is its two-line label: click where the values are typed
    sidebar.locator("[data-testid='stMultiSelect']").filter(has_text="Outcome a way out must reach").locator(
        "input").click()
    page.get_by_role("option", name="slight").wait_for(timeout=WAIT)
    options = {o.inner_text() for o in page.get_by_role("option").all()} - {"Select all"}
    assert options == {"serious", "slight"}  # the undesirable outcome is not offered
    page.get_by_role("option", name="slight").click()
    page.keyboard.press("Escape")
    sidebar.get_by_role("button", name="Load CSV").click()
    page.get_by_text(re.compile(r"Active: three")).first.wait_for(timeout=WAIT)
    sidebar.get_by_text("A way out must reach slight", exact=False).first.wait_for(timeout=WAIT)
    page.wait_for_selector(".js-plotly-plot .barlayer .point path", timeout=WAIT)
    wait_idle(page)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "global_page_desired_outcome.png"), full_page=True)
    page.close()
