"""Issue 21 in a real browser: a link naming a server path outside the allowed folders is refused without
echo and loads nothing, hosted mode shows no path inputs, and a saved region survives a server restart."""

from __future__ import annotations

import json
import os
import re
from urllib.parse import parse_qs, urlparse

import pytest

from tests.browser.test_browser import ARTIFACTS, BARS
from tests.browser.test_state_browser import new_page, wait_idle
from tools.serve import CHROMIUM, app_server, free_port

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not installed"),
]
OUTSIDE = "That location is outside the folders this server may read"
HOSTED = "This server reads uploaded files only"
SECRET = "root:x:0:0:root:/root:/bin/bash\nanalyst:x:1000:1000:secret-user:/home/analyst:/bin/sh\n"


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """An allowed folder and, beside it, a file no link may read (and a symlink in the allowed folder to it)."""
    base = tmp_path_factory.mktemp("hosting")
    allowed = base / "allowed"
    allowed.mkdir()
    (base / "secret.csv").write_text(SECRET)
    (allowed / "link.csv").symlink_to(base / "secret.csv")
    return {"allowed": allowed, "cache": base / "cache"}


@pytest.fixture(scope="module")
def confined_app(folders):
    """The URL of an app reading only below ``allowed`` (FLEX_DATA_ROOTS)."""
    env = {"FLEX_CACHE_DIR": str(folders["cache"]), "FLEX_DATA_ROOTS": str(folders["allowed"]), "FLEX_HOSTED": ""}
    with app_server(env=env) as (url, _):
        yield url


def sidebar_alerts(page) -> list[str]:
    return [a.inner_text() for a in page.locator("[data-testid='stSidebar'] [data-testid='stAlert']").all()]


@pytest.mark.parametrize("name, dataset", [
    ("absolute", "loan:/etc/passwd"),
    ("dot_dot", "loan:{allowed}/../secret.csv"),
    ("relative_dot_dot", "loan:../../../../../../etc/passwd"),
    ("symlink", "accidents:{allowed}/link.csv"),
])
def test_a_link_naming_a_path_outside_the_roots_is_refused_without_echo_and_loads_nothing(confined_app, browser, folders, name, dataset):
    url = confined_app
    page = new_page(browser)
    page.goto(f"{url}/?dataset={dataset.format(allowed=folders['allowed'])}&n_factuals=12&n_cf=3",
              wait_until="domcontentloaded")
    page.get_by_text("Global feature importance", exact=True).first.wait_for()
    # Nothing was read: the default dataset (a built-in) opens, with the default settings (the link's
    # N_F = 12 was not applied either), and its chart is drawn.
    page.get_by_text(re.compile(r"Active: synthetic-regional")).first.wait_for()
    page.wait_for_selector(BARS)
    wait_idle(page)
    alerts = sidebar_alerts(page)
    assert len(alerts) == 1 and OUTSIDE in alerts[0], alerts
    assert page.get_by_text(OUTSIDE, exact=False).count() == 1  # one message, nowhere else on the page
    body = page.inner_text("body")
    for echoed in ("passwd", "/etc", "secret", "link.csv", "root:", "analyst", str(folders["allowed"])):
        assert echoed not in body, echoed
    assert "200 cases explained" in body and "12 cases explained" not in body
    assert page.locator("[data-testid='stException']").count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"link_refused_{name}.png"), full_page=True)
    page.close()


def test_hosted_mode_shows_no_path_inputs_and_refuses_a_link_naming_a_path(browser, folders):
    inside = folders["allowed"] / "loan.csv"  # inside the roots: hosted mode refuses it all the same
    inside.write_text("loan_id,loan_status\n1,Approved\n")
    env = {"FLEX_CACHE_DIR": str(folders["cache"]), "FLEX_DATA_ROOTS": str(folders["allowed"]), "FLEX_HOSTED": "1"}
    with app_server(env=env) as (url, _):
        page = new_page(browser)
        page.goto(f"{url}/?dataset=loan:{inside}", wait_until="domcontentloaded")
        page.get_by_text(re.compile(r"Active: synthetic-regional")).first.wait_for()
        wait_idle(page)
        alerts = sidebar_alerts(page)
        assert len(alerts) == 1 and HOSTED in alerts[0] and "loan.csv" not in alerts[0], alerts
        sidebar = page.locator("[data-testid='stSidebar']")
        sources = [s.strip() for s in sidebar.get_by_role("radiogroup", name="Source").inner_text().splitlines() if s.strip()]
        assert sources == ["Built-in", "CSV upload", "Loan approval (paper)", "Road accidents (paper)"]
        for paper in ("Loan approval (paper)", "Road accidents (paper)"):
            sidebar.get_by_text(paper, exact=True).click()
            sidebar.locator("input[type='file']").first.wait_for(state="attached")
            wait_idle(page)
            assert sidebar.get_by_text("or its path", exact=False).count() == 0  # no box to type a server path into
            assert sidebar.get_by_label("…or its path on the server").count() == 0
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "hosted_sidebar.png"), full_page=True)
        assert page.locator("[data-testid='stException']").count() == 0
        page.close()


# -- a server restart ------------------------------------------------------------------------------
def metric(page, label: str) -> str:
    box = page.locator("[data-testid='stMetric']").filter(has=page.get_by_text(label, exact=True)).first
    return box.locator("[data-testid='stMetricValue']").inner_text()


def shown_region(page) -> dict:
    """What the Regional explorer shows of the rule region and the saved ones, read from the page."""
    heading = page.get_by_role("heading", name="Region: ", exact=False).first
    heading.wait_for()
    page.locator(".js-plotly-plot").filter(has_text="Saved regions compared").first.wait_for()
    wait_idle(page)
    plots = page.locator(".js-plotly-plot:visible")
    members = plots.evaluate_all("els => els.flatMap(gd => gd.data.filter(t => t.name === 'region members')"
                                 "  .flatMap(t => t.customdata.map(c => c[0])))")
    heatmap = plots.evaluate_all("els => els.map(gd => gd.data[0]).filter(t => t.type === 'heatmap')"
                                 "  .map(t => ({rows: t.y, z: t.z}))")
    return {"heading": heading.inner_text(), "members": sorted(set(members)), "size": metric(page, "Region size"),
            "r": metric(page, "Agreement with all cases"), "heatmap": heatmap}


def open_regional(page, link: str) -> None:
    page.goto(link, wait_until="domcontentloaded")
    page.get_by_text("Global feature importance", exact=True).first.wait_for()
    wait_idle(page)  # the first page has loaded before a link is clicked, as a person does (issue 20's note)
    page.get_by_role("link", name="Regional explorer").click()
    page.get_by_role("button", name="Find regions").wait_for()
    wait_idle(page)


def test_a_saved_region_a_link_carries_survives_a_server_restart(browser, tmp_path):
    # Two server processes one after the other, on the same port, cache folder and working folder: nothing
    # of the first survives in memory, so whatever the second shows came from the link (and the disk cache).
    port, env = free_port(), {"FLEX_CACHE_DIR": str(tmp_path / "cache")}
    with app_server(env=env, port=port) as (url, first_server):
        page = new_page(browser)
        open_regional(page, f"{url}/?dataset=builtin:synthetic-regional&n_factuals=60&n_cf=3")
        page.get_by_role("button", name="Save region").click()  # the query's neighbours, under its default name
        wait_idle(page)
        page.get_by_role("button", name="Find regions").click()
        page.get_by_text("candidate regions differ significantly", exact=False).first.wait_for()
        wait_idle(page)
        box = page.locator("[data-testid='stDataFrame']").first.bounding_box()
        page.mouse.click(box["x"] + 12, box["y"] + 35 * 1.5)  # the first found region (see test_regions_browser)
        page.get_by_text("Showing the rule-defined region", exact=False).first.wait_for()
        wait_idle(page)
        name_box = page.get_by_label("Name for this region")
        name_box.fill("found first")
        name_box.press("Enter")
        wait_idle(page)
        page.get_by_role("button", name="Save region").click()
        page.get_by_text("found first (agreement = ", exact=False).first.wait_for(state="attached")
        before = shown_region(page)
        page.get_by_role("link", name="Report").click()
        code = page.locator("[data-testid='stCode'] code").first
        code.wait_for()
        link = code.inner_text().strip()
        page.close()
        first_server_pid = first_server.pid
    assert first_server.poll() is not None  # the first server is gone
    # The link itself carries both saved regions (the found one by its rule) and the rule region shown.
    params = parse_qs(urlparse(link).query)
    saved = json.loads(params["regions"][0])
    assert [region[0] for region in saved] == [saved[0][0], "found first"] and saved[1][4]
    assert json.loads(params["rule"][0]) == saved[1][4]
    assert before["members"] and len(before["heatmap"]) == 1
    assert before["heatmap"][0]["rows"][0] == "global (all cases)" and before["heatmap"][0]["rows"][2].startswith(
        "found first (agreement = ")

    with app_server(env=env, port=port) as (_, second_server):
        assert second_server.pid != first_server_pid
        page = new_page(browser)
        open_regional(page, link)
        after = shown_region(page)
        page.locator(".js-plotly-plot").filter(has_text="Saved regions compared").first.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "region_after_restart.png"))
        assert page.locator("[data-testid='stException']").count() == 0
        page.close()
    assert after == before
