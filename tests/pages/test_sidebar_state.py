"""The sidebar's settings live under their own keys: a rerun that starts on another page keeps them.

A page link clicked while the session's first run was still going reran the app with the sidebar's
widgets at their first options (toy2d, dice-random, N_F = 1): the browser sends a widget it has not
drawn yet at the value its element was created with. Each widget now starts from its setting, so that
value is the setting's.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.pages.conftest import APP
from ui import state as S

pytestmark = pytest.mark.slow

LINK = {"dataset": "builtin:synthetic-regional", "generator": "dice-random", "model": "lr", "n_factuals": "9",
        "n_cf": "2", "cv_folds": "2", "seed": "3"}
SETTINGS = {S.BUILTIN: "synthetic-regional", S.GENERATOR: "dice-random", S.MODEL: "lr", S.N_FACTUALS: 9,
            S.N_CF: 2, S.CV_FOLDS: 2, S.SEED: 3}


def _as_created(at: AppTest) -> None:
    """Put every sidebar choice and number back at the value its element was created with."""
    for box in at.sidebar.selectbox:
        box.set_value(box.options[box.proto.default])
    for radio in at.sidebar.radio:
        radio.set_value(radio.options[radio.proto.default])
    for number in at.sidebar.number_input:
        number.set_value(int(number.proto.default))


def test_a_page_switch_with_the_widgets_as_first_drawn_keeps_every_setting():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(LINK)
    at.run()
    assert not at.exception
    _as_created(at)
    at.switch_page("app_pages/thresholds.py").run()
    assert not at.exception and not at.error
    assert {key: at.session_state[key] for key in SETTINGS} == SETTINGS
    assert at.session_state[S.DATASET] == {"kind": "builtin", "name": "synthetic-regional"}
    assert at.sidebar.selectbox(key=S.widget_key(S.GENERATOR)).value == "dice-random"
    assert at.sidebar.number_input(key=S.widget_key(S.N_FACTUALS)).value == 9


def test_a_changed_setting_is_kept_on_every_page_and_in_the_link():
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(LINK)
    at.run()
    at.sidebar.number_input(key=S.widget_key(S.N_FACTUALS)).set_value(7).run()
    for page in ("app_pages/thresholds.py", "app_pages/data_model.py", "app_pages/global.py"):
        at.switch_page(page).run()
        assert not at.exception
        assert at.session_state[S.N_FACTUALS] == 7
        assert at.sidebar.number_input(key=S.widget_key(S.N_FACTUALS)).value == 7
    assert at.query_params["n_factuals"] == "7"


def test_the_active_dataset_line_counts_factuals_apart_from_the_model_s_rejections():
    """The learned forest on the built-in data rejects some cases only narrowly or by memory: the sidebar says how
    many cases are factuals of how many the model predicts undesirable (it called the factuals 'predicted')."""
    from tests.pages.conftest import shown, start

    at = start("synthetic-regional")
    (line,) = [shown(c.value) for c in at.sidebar.caption if "Active" in c.value]
    assert " cases to explain of " in line and line.endswith(" predicted Severe.")
    factuals, predicted = (int(x.replace(",", "")) for x in line.split(", ")[-1].split(" predicted")[0].split(" cases to explain of "))
    assert 0 < factuals < predicted
