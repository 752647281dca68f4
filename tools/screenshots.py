"""Screenshots of every page and of the HTML report, on each dataset, with headless chromium.

    .venv/bin/python -m tools.screenshots                  # all datasets -> assets/screenshots/
    .venv/bin/python -m tools.screenshots --datasets loan --out /tmp/shots

One browser session per dataset walks the pages through the sidebar, as a user would
(so SHAP, LIME, permutation importance and a saved region are in the session when the report is built), runs
SHAP, permutation importance and LIME on the Compare page, builds and downloads the HTML report, and opens it.
The paper's datasets are read from ``FLEX_DATA_DIR`` (default ``../shared/data``); a
dataset whose file is missing is skipped with a message.
"""

from __future__ import annotations

import argparse
import os
import re
import time
from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright

from tools.serve import CHROMIUM, CHROMIUM_ARGS, REPO, running_app

OUT = REPO / "assets" / "screenshots"
WIDTH = 1100  # pixels in the saved PNG: small files, still readable
VIEWPORT = {"width": 1500, "height": 1000}
MAX_HEIGHT = 7000  # a longer page is cut: the shot is for reading, not archiving


def _data_dir() -> Path:
    return Path(os.environ.get("FLEX_DATA_DIR", REPO.parent / "shared" / "data")).resolve()


def dataset_views() -> dict[str, tuple[str, Path | None]]:
    """Dataset name -> (link query, file it needs). Row 11 of the synthetic data is a slow, dark accident on a
    rural road: severe because of the lighting alone (the planted regional driver)."""
    data = _data_dir()
    return {
        "synthetic": ("dataset=builtin:synthetic-regional&query=11&k=8&where=road_type%3Drural", None),
        "loan": (f"dataset=loan:{data / 'loan_approval_dataset.csv'}&k=6", data / "loan_approval_dataset.csv"),
        "accidents": (
            # N_F = 100: TreeSHAP on the accidents' one-hot columns takes about a minute per 100 rows.
            f"dataset=accidents:{data / 'RTA_Dataset.csv'}&n_factuals=100&k=6&where=Weather_conditions%3DRaining",
            data / "RTA_Dataset.csv",
        ),
    }


# (file stem, sidebar link text, page title to wait for)
PAGES = [
    ("data", "Data & model", "Data & model"),
    ("global", "Global", "Global feature importance"),
    ("thresholds", "Thresholds", "Thresholds (τ)"),
    ("regional", "Regional explorer", "Regional explorer"),
    ("counterfactuals", "Counterfactuals", "Counterfactuals of one case"),
    ("what-if", "What-if", "What-if editor"),
    ("compare", "Compare", "FLEX next to SHAP, LIME and DiCE"),
    ("report", "Report", "Report"),
    ("glossary", "Glossary", "Glossary"),
]


def _wait_idle(page, *, timeout: float = 600.0) -> None:
    """Until Streamlit has shown no "running" indicator for four seconds."""
    deadline, quiet_since = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        busy = page.locator(
            "[data-testid='stStatusWidgetRunningIcon'], [data-testid='stSpinner'], [data-testid='stProgress']"
        ).count() > 0 or page.get_by_role("button", name="Stop", exact=True).count() > 0
        if busy:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > 4.0:  # a shared machine can take seconds to start a rerun
            return
        page.wait_for_timeout(300)
    raise TimeoutError("the app kept running")


#: Largest file kept in the repository (the project's rule for tracked files).
MAX_BYTES = 1024 * 1024


def _save(image_path: Path) -> None:
    with Image.open(image_path) as opened:
        image = opened.convert("RGB")
    width, colours = WIDTH, 256  # 256 colours keep text and charts crisp at a fraction of the size
    while True:
        small = image.resize((width, round(image.height * width / image.width)), Image.Resampling.LANCZOS)
        small.quantize(colors=colours, method=Image.Quantize.MEDIANCUT).save(image_path, optimize=True)
        # A long page (the HTML report) can pass the limit: fewer colours first, then a narrower image.
        if image_path.stat().st_size <= MAX_BYTES or width < 500:
            return
        width, colours = (width, 128) if colours > 128 else (round(width * 0.85), colours)


def _shoot_app(page, path: Path) -> None:
    """The whole page: grow the viewport to the main column's height (Streamlit scrolls inside its own frame)."""
    height = page.evaluate(
        "() => { const m = document.querySelector('[data-testid=\"stMainBlockContainer\"]');"
        " return m ? m.scrollHeight + 120 : document.body.scrollHeight; }"
    )
    page.set_viewport_size({"width": VIEWPORT["width"], "height": int(min(max(height, 800), MAX_HEIGHT))})
    page.wait_for_timeout(1500)  # let Plotly redraw at the new size
    page.screenshot(path=str(path))
    page.set_viewport_size(VIEWPORT)
    _save(path)
    print("wrote", path, flush=True)


def _click(page, name: str, *, role: str = "button") -> bool:
    target = page.get_by_role(role, name=name)
    if target.count() == 0:
        return False
    target.first.click()
    _wait_idle(page)
    return True


def shoot_dataset(browser, url: str, name: str, query: str, out: Path) -> None:
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(600_000)
    # The main page first: it trains and generates once, so every page shot after it shows a finished view.
    page.goto(f"{url}/?{query}", wait_until="domcontentloaded")
    page.get_by_role("heading", name="Global feature importance").first.wait_for()
    _wait_idle(page)
    refused = page.get_by_text("The link could not be applied")
    if refused.count():  # the shots would show another dataset under this one's name
        raise RuntimeError(f"{name}: the app refused the link: {refused.first.inner_text()}")
    for stem, link, title in PAGES:
        print(f"{name}: {stem}", flush=True)
        # A nav link's accessible name starts with its icon's ligature ("bar_chart Global").
        page.get_by_role("link", name=re.compile(rf"{re.escape(link)}$")).first.click()
        page.get_by_role("heading", name=title, exact=True).first.wait_for()
        _wait_idle(page)
        if stem == "regional":
            _click(page, "Save region")
        if stem == "compare":
            for button in ("Run SHAP on these cases", "Run permutation importance on the held-out cases"):
                if not _click(page, button):  # a renamed button: the shots would show the page without its views
                    raise SystemExit(f"{name}: no button {button!r} on the Compare page")
            page.get_by_text("Run LIME on the region", exact=False).first.click()
            _wait_idle(page)
        if stem == "report":
            _click(page, "Build the print-friendly report")
            with page.expect_download() as download:
                page.get_by_role("button", name="Download report.html").first.click()
            report = out / f"{name}-report.html"
            download.value.save_as(report)
        _shoot_app(page, out / f"{name}-{stem}.png")
    viewer = browser.new_page(viewport={"width": 1100, "height": 1000})
    viewer.goto(report.as_uri())
    viewer.wait_for_timeout(4000)
    shot = out / f"{name}-report-html.png"
    viewer.screenshot(path=str(shot), full_page=True)
    _save(shot)
    print("wrote", shot, flush=True)
    report.unlink()  # large (plotly.js embedded); the screenshot is what is kept
    viewer.close()
    page.close()


def main(argv: list[str] | None = None) -> None:
    views = dataset_views()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", choices=list(views), default=list(views))
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    # The server may read the paper's files only below its allowed folders: the data folder is one of them,
    # as for a user who sets FLEX_DATA_DIR (without it the link was refused and the "loan" shots showed the
    # built-in data).
    with running_app(env={"FLEX_DATA_DIR": str(_data_dir())}) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for name in args.datasets:
                query, needs = views[name]
                if needs is not None and not needs.is_file():
                    print(f"skipped {name}: {needs} not found (set FLEX_DATA_DIR)")
                    continue
                shoot_dataset(browser, url, name, query, args.out)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
