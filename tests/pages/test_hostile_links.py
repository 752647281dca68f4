"""Text a link or a file brings never renders as Markdown (a live link, an image) inside the app; a foreign
counterfactual chunk in the cache folder is set aside with a note instead of blocking the dataset."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import flex_core as fc
from tests.pages.conftest import APP, errors, first_run, live_markdown, shown, start_csv

# Every test here drives the real app through AppTest (seconds each): not in the fast run.
pytestmark = pytest.mark.slow

PHISH = "[Session expired: sign in again](http://x.example)"
IMAGE = "![x](http://x.example/pixel.png)"
ANCHOR = "road <a href='http://x.example'>type</a>"  # Plotly draws an <a> tag in a chart's text as a link


def rendered(at: AppTest) -> list[str]:
    """The Markdown of every element that renders it: alerts, text, captions, headers, toasts (sidebar included)."""
    kinds = ("error", "warning", "info", "success", "markdown", "caption", "header", "subheader", "title", "toast")
    return [e.value for kind in kinds for e in getattr(at, kind)]


def link_app(params: dict, page: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"n_factuals": "6", "n_cf": "2", "cv_folds": "2", **params})
    return first_run(at, page)


@pytest.mark.parametrize("params, text", [
    ({"dataset": f"upload:{PHISH}"}, PHISH),
    ({"dataset": "builtin:toy2d", "seed": IMAGE}, IMAGE),
    ({"dataset": "builtin:toy2d", "gen.samples": f"<a href='http://x.example'>{PHISH}</a>"}, "<a href="),
    ({"dataset": "builtin:toy2d", "kind.speed": ":red[Session expired] :material/lock: $x$ www.x.example"}, ":red["),
])
def test_a_link_smuggling_markdown_shows_it_as_plain_text(params, text):
    at = link_app(params)
    (alert,) = [*at.sidebar.warning, *at.sidebar.error]  # the one message about the link
    assert text in shown(alert.value)  # the user reads the text as it was sent
    assert live_markdown(alert.value) == [], alert.value  # and nothing of it renders as a link or an image
    assert all(live_markdown(md) == [] for md in rendered(at)), [md for md in rendered(at) if live_markdown(md)]


def test_a_criterion_and_saved_regions_from_a_link_show_as_plain_text():
    regions = f'[["{PHISH}",999999,4,null]]'  # a saved region whose query is no factual: dropped, and said so by name
    at = link_app({"dataset": "builtin:synthetic-regional", "where": f"{IMAGE}=x", "regions": regions})
    first = rendered(at)  # the Global page says the saved region was removed
    at.switch_page("app_pages/regional.py").run()
    assert not at.exception
    both = first + rendered(at)  # the Regional explorer says the criterion was dropped
    assert any(PHISH in shown(md) and "removed" in md for md in first), first
    assert any(IMAGE in shown(md) and "dropped" in md for md in both), both
    assert all(live_markdown(md) == [] for md in both), [md for md in both if live_markdown(md)]


def test_column_names_levels_and_a_file_name_from_a_csv_show_as_plain_text():
    rng = np.random.default_rng(0)
    speed = rng.uniform(20, 120, 120)
    frame = pd.DataFrame({PHISH: speed, ANCHOR: rng.choice(["urban", IMAGE], 120),
                          "y": np.where(speed > 80, "severe :red[x]", "slight")})
    at = start_csv(frame, target="y", undesirable=["severe :red[x]"], n_factuals=8, n_cf=2)
    seen = []
    for page in (None, "app_pages/data_model.py", "app_pages/regional.py", "app_pages/what_if.py", "app_pages/thresholds.py"):
        if page:
            at.switch_page(page).run()
        assert not at.exception and not errors(at), (page, errors(at))
        texts = rendered(at) + [w.label for w in (*at.number_input, *at.selectbox, *at.slider)]  # labels: Markdown too
        live = [md for md in texts if live_markdown(md)]
        assert live == [], (page, live)
        charts = [json.dumps(json.loads(c.proto.spec)) for c in at.get("plotly_chart")]  # "<" unescaped
        assert charts and not [c for c in charts if re.search(r"<a[\s>]", c, re.I)], page
        seen += texts
    assert any(PHISH in shown(md) for md in seen)  # the column is named as written


def test_a_foreign_chunk_in_the_cache_folder_is_set_aside_and_said_on_the_page(tmp_path, monkeypatch,
                                                                              synthetic_task, synthetic_model):
    from ui import cache
    from ui.shelf import Shelf

    monkeypatch.setenv("FLEX_CACHE_DIR", str(tmp_path / "cache"))
    # The app's stores are shared in this process on ui.cache.SHELF: a fresh shelf opens the folder afresh.
    monkeypatch.setattr(cache, "SHELF", Shelf(2**30))
    first = link_app({"dataset": "builtin:toy2d"})
    assert not errors(first)
    (folder,) = [p for p in (tmp_path / "cache").iterdir() if p.is_dir()]
    # A chunk of another dataset (other features), copied into this store's folder.
    other = fc.counterfactuals.CounterfactualStore(synthetic_task, synthetic_model, fc.counterfactuals.BatchGenerator(), n_cf=2,
                                   directory=tmp_path / "other")
    other.ensure([int(r) for r in other.factual_rows[:3]])
    (chunk,) = other.directory.glob("chunk-*.npz")
    (folder / f"chunk-0{chunk.name[len('chunk-'):]}").write_bytes(chunk.read_bytes())
    monkeypatch.setattr(cache, "SHELF", Shelf(2**30))  # as after a restart
    at = link_app({"dataset": "builtin:toy2d"})
    # Used to stop every page with "Counterfactual sets differ in features or n_cf and cannot be combined."
    assert not errors(at), errors(at)
    assert any("set aside unused" in shown(i.value) for i in at.info), [i.value for i in at.info]
    assert at.get("plotly_chart")
    assert list(folder.glob(".foreign-chunk-*.npz"))
