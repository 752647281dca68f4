"""Take the README's screenshots of the Global, Regional and Thresholds pages with headless chromium.

    .venv/bin/python -m tools.screenshots      # writes assets/screenshots/*.png
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright

from tools.serve import CHROMIUM, CHROMIUM_ARGS, REPO, running_app

OUT = REPO / "assets" / "screenshots"
# Row 11 is a slow, dark accident on a rural road: severe because of the lighting alone (the planted regional driver).
VIEW = "dataset=builtin:synthetic-regional&n_factuals=200&n_cf=10&query=11&k=8&where=road_type%3Drural"
WIDTH = 1100  # pixels in the saved PNG: small files, still readable

# (file, url path, text to wait for, text to scroll to, charts expected)
SHOTS = [
    ("global.png", "", "Global feature importance", None, 1),
    ("regional.png", "regional-explorer", "Regional explorer", "Region around row", 3),
    ("thresholds.png", "tau-thresholds", "Thresholds (τ)", None, 3),
]


def _save(page, path: Path) -> None:
    page.screenshot(path=str(path))
    with Image.open(path) as image:
        height = round(image.height * WIDTH / image.width)
        image.convert("RGB").resize((WIDTH, height), Image.LANCZOS).save(path, optimize=True)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with running_app() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for name, path, title, anchor, charts in SHOTS:
                page = browser.new_page(viewport={"width": 1500, "height": 1050})
                page.goto(f"{url}/{path}?{VIEW}", wait_until="domcontentloaded")
                page.get_by_text(title, exact=True).first.wait_for(timeout=120_000)
                page.wait_for_function(
                    f"document.querySelectorAll('.js-plotly-plot').length >= {charts}", timeout=180_000
                )
                page.wait_for_timeout(1500)  # let Plotly finish its transitions
                if anchor:
                    page.get_by_text(anchor).first.evaluate("e => e.scrollIntoView({block: 'start'})")
                    page.wait_for_timeout(800)
                _save(page, OUT / name)
                page.close()
                print("wrote", OUT / name)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
