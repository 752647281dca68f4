"""Every page on both paper datasets, loaded through the sidebar's upload (small N_F and N_cf)."""

import pytest

from tests.pages.conftest import chart, errors, start

# Every test here drives the real app through AppTest (seconds each): not in the fast run.
pytestmark = pytest.mark.slow

PAGES = ["app_pages/global.py", "app_pages/data_model.py", "app_pages/regional.py", "app_pages/thresholds.py",
         "app_pages/counterfactuals.py", "app_pages/compare.py", "app_pages/report.py"]


def _upload(at, source, key, path):
    at.sidebar.radio(key="w_sb_source").set_value(source).run()
    at.sidebar.get("file_uploader")[0].set_value((path.name, path.read_bytes(), "text/csv")).run()
    at.sidebar.button(key=key).click().run()
    assert not at.exception and not errors(at), errors(at)


@pytest.mark.parametrize("dataset", ["loan", "accidents"])
def test_every_page_works_on_an_uploaded_paper_dataset(dataset, request):
    path = request.getfixturevalue(f"{dataset}_path")
    at = start("toy2d", n_factuals=6, n_cf=2)
    at.sidebar.number_input(key="w_sb_cv_folds").set_value(2).run()
    source = "Loan approval (paper)" if dataset == "loan" else "Road accidents (paper)"
    _upload(at, source, f"sb_{dataset}_load", path)
    assert at.session_state["dataset"]["kind"] == dataset
    names = set(chart(at, "global_chart")["data"][0]["customdata"])
    assert ("cibil_score" in names) if dataset == "loan" else ("Driving_experience" in names)
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception)
        assert not errors(at), (page, errors(at))
    # Compare: SHAP on the same factuals as FLEX, and LIME on the region the Regional page picked.
    at.switch_page("app_pages/compare.py").run()
    next(b for b in at.button if b.label == "Run SHAP on these cases").click().run()
    assert not at.exception and not errors(at), (at.exception, errors(at))
    # With numbers (loan), FLEX is named with its τ and the τ = 0 frequencies stand beside it; on accidents,
    # which has none, τ changes nothing and FLEX is plain FLEX.
    flex = ["FLEX at τ = 0.10", "FLEX at τ = 0"] if dataset == "loan" else ["FLEX"]
    assert [t["name"] for t in chart(at, "compare_bars")["data"]] == [*flex, "DiCE Alg. 2", "SHAP"]
    at.select_slider(key="compare_lime_samples").set_value(500).run()
    next(b for b in at.button if "LIME" in b.label).click().run()
    assert not at.exception and not errors(at), (at.exception, errors(at))
    lime = chart(at, "compare_lime_chart")["data"][1]["x"]
    assert max(lime) == 1.0 and min(lime) >= 0
    if dataset == "accidents":
        at.switch_page("app_pages/data_model.py").run()
        lost = next(m.value for m in at.metric if m.label == "Rows lost to missing values")
        assert int(lost.replace(",", "")) > 0  # rows with missing values are dropped, and the page says how many
