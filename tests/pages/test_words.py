"""Issue 35 on the pages: the data dictionary's words, and labels that no longer say something false."""

from __future__ import annotations

import re

import pytest
import skops.io as sio

import flex_core as fc
from tests.factories import user_pipeline
from tests.pages.conftest import errors, metric, shown, start
from tests.pages.test_model_sources import upload_model
from ui.words import KEY_COLUMN

# Every test here drives the real app through AppTest (seconds each): not in the fast run.
pytestmark = pytest.mark.slow

RAW = ("noise_continuous", "noise_categorical", "driver_age_band", "road_type", "P(undesirable)")


def _page_text(at) -> str:
    """The words a reader sees on the page: text elements, labels, table headers and cells, chart labels."""
    parts = [shown(e.value) for kind in ("markdown", "caption", "info", "warning", "error", "title", "subheader")
             for e in at.get(kind)]
    parts += [m.label for m in at.metric] + [w.label for w in at.selectbox] + [w.label for w in at.number_input]
    for frame in at.dataframe:
        # the dictionary editor's key column holds the file's column names by design (ui/words.py)
        value = frame.value.drop(columns=[KEY_COLUMN], errors="ignore")
        parts += [str(c) for c in value.columns] + [str(i) for i in value.index]
        # a constraint between features is written with the data's column names (cf.noise_continuous): the
        # language's syntax, shown as typed, not a label
        parts += [str(v) for v in value.astype(str).to_numpy().ravel() if "cf." not in str(v)]
    for element in at.get("plotly_chart"):
        parts += re.findall(r'"(?:text|y|x|name|title)":\s*"([^"]*)"', element.proto.spec)
    return "\n".join(parts)


@pytest.mark.parametrize("page", ["app_pages/global.py", "app_pages/counterfactuals.py", "app_pages/what_if.py",
                                  "app_pages/data_model.py", "app_pages/compare.py"])
def test_pages_speak_the_dictionary_words_of_the_built_in_data(page):
    at = start("synthetic-regional", n_factuals=10, n_cf=2, page=page)
    assert not errors(at)
    text = _page_text(at)
    assert not [raw for raw in RAW if raw in text], [raw for raw in RAW if raw in text]
    assert "Noise (number)" in text or "Speed" in text


def test_the_case_tables_carry_units_and_the_outcome_words():
    at = start("synthetic-regional", n_factuals=10, n_cf=2, page="app_pages/counterfactuals.py")
    table = at.dataframe[0].value
    assert "Speed (km/h)" in table.columns and "P(Severe)" in table.columns and table.index[0] == "this case"
    assert metric(at, "P(Severe) now").endswith("%")
    at.switch_page("app_pages/what_if.py").run()
    assert not at.exception
    assert metric(at, "P(Severe)").endswith("%")
    assert any(shown(w.label).startswith("Speed (km/h)") for w in at.number_input)


def test_the_what_if_editor_offers_levels_in_the_dictionarys_words():
    from tests.factories import accident_frame
    from tests.pages.conftest import start_csv

    at = start_csv(accident_frame(200), target="severity", undesirable=["severe"])
    at.session_state["dataset"] = {**at.session_state["dataset"],
                                   "dictionary": '[features.zone]\nlevels = { rural = "countryside" }\n'}
    at.switch_page("app_pages/what_if.py").run()
    assert not at.exception and not errors(at)
    zone = at.selectbox(key="w_wi.zone")
    assert "countryside" in zone.options and "rural" not in zone.options and zone.value in {"rural", "urban"}


def test_the_case_shown_is_never_labelled_not_generated_yet():
    at = start("toy2d", page="app_pages/counterfactuals.py")
    box = at.selectbox(key="w_cf_row")
    stale = [option for option in box.options if option.endswith(" (ways out not searched for yet)")]
    assert stale  # N_F = 12: most cases have no counterfactuals until shown
    row = int(stale[-1].split()[1])
    box.set_value(row).run()
    assert not at.exception
    box = at.selectbox(key="w_cf_row")
    assert box.value == row and len(at.dataframe[0].value) > 1  # its counterfactuals are on screen...
    assert box.options[box.index] == f"row {row}"  # ...and its label says so


def test_compare_explains_why_flex_at_tau_zero_and_dices_count_differ():
    at = start("toy2d", page="app_pages/compare.py")
    assert not errors(at)
    table = at.dataframe[0].value
    assert {"FLEX at τ = 0", "DiCE Alg. 2"} <= set(table.columns)
    captions = " ".join(shown(c.value) for c in at.caption)
    assert "FLEX at τ = 0 and DiCE Alg. 2 both count any change" in captions
    assert re.search(r"(have \d+ to \d+ \([\d.]+ on average\), so the two differ|so the two agree)", captions)


def test_a_model_from_a_file_is_not_labelled_as_scored_on_a_held_out_part():
    task = fc.data.load_builtin("synthetic-regional")
    at = start("synthetic-regional", page="app_pages/data_model.py")
    upload_model(at, "users_model.skops", sio.dumps(user_pipeline(task.frame)))
    assert not errors(at)
    quality = next(df.value for df in at.dataframe if "measured on" in df.value.columns)
    assert list(quality["measured on"]) == ["all 2,000 rows (may include its training rows)"]
    captions = " ".join(shown(c.value) for c in at.caption)
    assert "held-out test part" not in captions and "row 2" not in captions
    assert "A model trained elsewhere, measured on all 2,000 rows of the data" in captions


def test_the_glossary_names_the_terms_in_the_outcomes_words():
    at = start("synthetic-regional", n_factuals=10, n_cf=2, page="app_pages/glossary.py")
    assert not errors(at)
    text = " ".join(shown(m.value) for m in at.markdown)
    for term in ("F_j", "τ (tau)", "Pearson r", "q-value", "FDR", "Hamming distance", "P(Severe)"):
        assert term in text, term


def _upload_csv_with(at, words: bytes | None):
    from tests.factories import accident_frame

    at.sidebar.radio(key="w_sb_source").set_value("CSV upload").run()
    at.sidebar.get("file_uploader")[0].set_value(("crashes.csv", accident_frame(200).to_csv(index=False).encode(),
                                                   "text/csv")).run()
    at.sidebar.selectbox(key="sb_csv_target").set_value("severity").run()
    at.sidebar.multiselect(key="sb_csv_undesirable").set_value(["severe"]).run()
    if words is not None:
        uploader = next(u for u in at.sidebar.get("file_uploader") if u.proto.id.endswith("sb_csv_dictionary"))
        uploader.set_value(("words.toml", words, "application/toml")).run()
    at.sidebar.button(key="sb_csv_load").click().run()
    assert not at.exception, at.exception
    return at


def test_a_csv_upload_takes_a_data_dictionary_and_a_bad_one_is_one_error():
    from tests.pages.conftest import chart

    words = ('[outcome]\nundesirable = "Serious crash"\n[features.speed]\nname = "Impact speed"\nunit = "km/h"\n'
             '[features.zone]\nlevels = { rural = "countryside" }\n')
    at = _upload_csv_with(start("toy2d"), words.encode())
    assert not errors(at) and at.session_state["dataset"]["kind"] == "csv"
    assert {"Impact speed", "Zone", "Lighting"} <= set(chart(at, "global_chart")["data"][0]["y"])
    at.switch_page("app_pages/counterfactuals.py").run()
    assert "Impact speed (km/h)" in at.dataframe[0].value.columns and metric(at, "P(Serious crash) now")
    at.switch_page("app_pages/data_model.py").run()
    preview = at.dataframe[0].value
    assert {"countryside", "urban"} == set(preview["Zone"]) and "rural" not in set(preview["Zone"])
    bad = _upload_csv_with(start("toy2d"), b'[features.sped]\nname = "x"\n')
    (message,) = errors(bad)
    assert message.startswith("That dataset was not loaded: the data dictionary names feature 'sped', which the "
                              "data lacks") and message.endswith("The previous dataset stays active.")
    assert bad.session_state["dataset"] == {"kind": "builtin", "name": "toy2d"}


def test_the_global_page_opens_with_the_plain_reading_in_units():
    at = start("synthetic-regional", n_factuals=20, n_cf=3, page="app_pages/global.py")
    lead = next(shown(m.value) for m in at.markdown if "To become" in shown(m.value))
    assert lead.startswith("**To become Slight, the ways out most often change ") and " in 100 on average" in lead
    assert "km/h" in lead or "Speed" not in lead, lead  # a number's size carries its unit


def test_data_without_numbers_is_not_told_about_mu_and_tau():
    from tests.factories import accident_frame
    from tests.pages.conftest import start_csv

    frame = accident_frame(300)[["zone", "lighting", "severity"]]
    at = start_csv(frame, target="severity", undesirable=["severe"], page="app_pages/global.py")
    assert not errors(at)
    caption = next(shown(c.value) for c in at.caption if shown(c.value).startswith("Left: FLEX's change frequency"))
    assert "μ" not in caption and "τ" not in caption and "Right: DiCE's own count" in caption


def test_the_notes_of_a_page_share_one_info_box():
    at = start("synthetic-regional", n_factuals=10, n_cf=2, page="app_pages/global.py")
    assert len(at.info) == 1 and "different valid ways out" in shown(at.info[0].value)


def test_the_region_criterion_offers_levels_in_the_dictionarys_words():
    from tests.factories import accident_frame
    from tests.pages.conftest import start_csv

    at = start_csv(accident_frame(200), target="severity", undesirable=["severe"])
    at.session_state["dataset"] = {**at.session_state["dataset"],
                                   "dictionary": '[features.zone]\nlevels = { rural = "countryside" }\n'}
    at.switch_page("app_pages/regional.py").run()
    at.selectbox(key="w_where_feature").set_value("zone").run()
    assert not at.exception and not errors(at)
    assert "countryside" in at.selectbox(key="w_where_value").options


def test_the_analysts_terms_are_a_switch_kept_in_the_link():
    at = start("synthetic-regional", n_factuals=10, n_cf=2, page="app_pages/regional.py")
    strip = next(shown(c.value) for c in at.caption if "Settings:" in shown(c.value))
    assert "10 cases explained · up to 2 ways out each" in strip and "N_F" not in strip, strip
    assert metric(at, "Agreement with all cases")
    at.toggle(key="w_terms").set_value(True).run()
    assert not at.exception and not errors(at)
    strip = next(shown(c.value) for c in at.caption if "Settings:" in shown(c.value))
    assert "N_F = 10 · N_cf = 2" in strip and "τ = 0.10" in strip, strip
    assert metric(at, "Agreement with all cases (Pearson r)")
    params = {k: (v[-1] if isinstance(v, list) else v) for k, v in at.query_params.items()}  # the address bar
    assert params["terms"] == "true"
