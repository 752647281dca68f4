"""The settings strip: the same line under every page's title, and in every chart's subtitle."""

from __future__ import annotations

import pytest

from tests.pages.conftest import chart, shown, start
from ui.components import CHART_CODE_KEY

pytestmark = pytest.mark.slow

PAGES = ["app_pages/data_model.py", "app_pages/global.py", "app_pages/regional.py", "app_pages/thresholds.py",
         "app_pages/counterfactuals.py", "app_pages/compare.py", "app_pages/report.py"]
TAU = " · changes under 10% of a number's range ignored"  # τ = 0.10, in words unless the analyst's terms are on
EXPECTED = ("synthetic-regional · random forest (one-hot encoding) · minimal ways out read from the model's trees · "
            "12 cases explained · up to 3 ways out each · seed 0" + TAU)
#: Charts that do not depend on the current τ: their subtitle names the settings less τ.
TAU_FREE = {"confusion_matrix", "calibration", "model_curves", "factual_map", "rule_map", "tau_panels",
            # Compare's SHAP views and ICE (issue 40) do not depend on τ; its case view counts any change
            "compare_ice", "compare_case_shap", "compare_shap_beeswarm", "compare_shap_dependence"}


def _strip(at) -> str:
    strips = [shown(c.value) for c in at.caption if "**Settings:**" in shown(c.value)]
    assert len(strips) == 1, [shown(c.value) for c in at.caption]
    return strips[0].split("**Settings:** ", 1)[1]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_shows_the_settings_strip(page):
    at = start("synthetic-regional", page=page)
    assert _strip(at) == EXPECTED
    for element in at.get("plotly_chart"):  # every chart names the same settings in its subtitle
        key = element.proto.id.rsplit("-", 1)[-1]
        if key == f"{CHART_CODE_KEY}_chart":
            continue  # the hidden, empty chart that only makes the browser load Plotly's code early
        expected = EXPECTED.removesuffix(TAU) if key in TAU_FREE else EXPECTED
        assert chart(at, key)["layout"]["title"]["subtitle"]["text"].replace("<br>", " · ") == expected, key


def test_a_tau_change_leaves_the_charts_that_do_not_depend_on_it_as_they_were():
    """The three fixed-τ panels do not name the current τ, so a τ change sends the browser the same chart."""
    at = start("synthetic-regional", page="app_pages/thresholds.py")
    panels, current = chart(at, "tau_panels"), chart(at, "tau_chart")
    at.slider(key="w_tau").set_value(0.7).run()
    assert chart(at, "tau_panels") == panels
    assert chart(at, "tau_chart") != current
    assert chart(at, "tau_chart")["layout"]["title"]["subtitle"]["text"].endswith("under 70% of a number's range ignored")


def test_the_strip_follows_tau_and_names_per_feature_overrides():
    at = start("synthetic-regional", page="app_pages/thresholds.py")
    at.slider(key="w_tau").set_value(0.7).run()
    assert _strip(at).endswith("changes under 70% of a number's range ignored")
    at.session_state["tau_features"] = {"speed": 0.3}
    at.run()
    assert _strip(at).endswith("under 70% of a number's range ignored (1 feature with their own)")
