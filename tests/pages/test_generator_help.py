"""Every setting the sidebar offers for a generator says what it does (a tooltip), for every registered generator."""

from __future__ import annotations

import flex_core as fc
from tests.pages.conftest import start
from ui import state as S
from ui.sidebar import SETTING_HELP


def test_every_offered_setting_of_every_generator_has_a_help_text():
    offered = {setting for name in fc.counterfactuals.GENERATORS for setting in fc.counterfactuals.generator_defaults(name)}
    assert offered <= set(SETTING_HELP), sorted(offered - set(SETTING_HELP))
    assert all(len(text) > 40 for text in SETTING_HELP.values())


def test_the_sidebar_shows_each_settings_help_as_its_tooltip():
    at = start("toy2d")
    name = at.session_state[S.GENERATOR]
    widgets = [*at.sidebar.number_input, *at.sidebar.checkbox, *at.sidebar.text_input]
    prefix = S.widget_key(S.generator_setting_key(name, ""))
    shown = {w.key.removeprefix(prefix): w.help for w in widgets if w.key and w.key.startswith(prefix)}
    assert set(shown) == set(fc.counterfactuals.generator_defaults(name))
    assert all(shown[setting] == SETTING_HELP[setting] for setting in shown)
