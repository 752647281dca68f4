"""The data dictionary: loading, checking against the data, the words it gives labels, numbers and outcomes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core.cli import main
from flex_core.data._dictionary import DataDictionary, load_dictionary, tidy_name

LOAN_DICTIONARY = """
[outcome]
undesirable = "Rejected"
desirable = "Approved"

[features.loan_amount]
name = "Loan amount"
currency = "₹"
format = ",.0f"

[features.loan_term]
name = "Loan term"
unit = "years"

[features.self_employed]
name = "Self-employed"
levels = { Yes = "self-employed", No = "salaried" }
"""


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame({
        "loan_amount": [6_000_000, 250_000, 1_200_000, 9_000_000, 300_000, 4_500_000],
        "loan_term": [12, 4, 20, 8, 2, 16],
        "cibil_score": [453.0, 780.0, 610.5, 300.0, 900.0, 512.0],
        "self_employed": ["Yes", "No", "No", "Yes", "No", "Yes"],
        "loan_status": ["Rejected", "Approved", "Approved", "Rejected", "Approved", "Rejected"],
    })


def _task(frame, dictionary=None):
    return fc.make_task(frame, target="loan_status", undesirable="Rejected", dictionary=dictionary)


def test_tidy_names_have_spaces_and_a_capital():
    assert tidy_name("cibil_score") == "Cibil score"
    assert tidy_name("Age_band_of_driver") == "Age band of driver"
    assert tidy_name("no__of  dependents") == "No of dependents"
    assert tidy_name("x") == "X"


def test_without_a_dictionary_names_are_tidied_and_numbers_formatted_by_type(frame):
    task = _task(frame)
    assert [f.label for f in task.features] == ["Loan amount", "Loan term", "Cibil score", "Self employed"]
    amount, term, score = task.feature("loan_amount"), task.feature("loan_term"), task.feature("cibil_score")
    assert amount.integer and amount.format_value(6_000_000.0) == "6,000,000"  # an integer: no ".00", grouped
    assert term.format_value(12.0) == "12"
    assert not score.integer and score.format_value(610.5) == "610.5" and score.format_value(453.0) == "453"
    assert task.feature("self_employed").format_value("Yes") == "Yes"
    assert task.undesirable_words == "Rejected" and task.desirable_words == "Approved"
    assert task.dictionary is None


def test_a_dictionary_gives_names_units_currencies_formats_and_words(frame):
    task = _task(frame, LOAN_DICTIONARY)
    amount, term = task.feature("loan_amount"), task.feature("loan_term")
    assert amount.label == "Loan amount" and amount.unit == "₹"
    assert amount.format_value(6_000_000) == "₹6,000,000" and amount.format_value(-250_000) == "-₹250,000"
    assert amount.format_value(6_000_000, bare=True) == "6,000,000"
    assert term.format_value(12.0) == "12 years" and term.unit == "years"
    assert task.feature("self_employed").format_value("No") == "salaried"
    assert task.feature("self_employed").label == "Self-employed"
    assert task.feature("cibil_score").label == "Cibil score"  # not in the dictionary: tidied
    assert task.feature("loan_amount").format_value(float("nan")) == "n/a"


def test_the_dictionary_reaches_every_result_label_and_the_json(frame, tmp_path):
    path = tmp_path / "loan.toml"
    path.write_text(LOAN_DICTIONARY, encoding="utf-8")
    big = pd.concat([frame] * 10, ignore_index=True)
    big["loan_amount"] = big["loan_amount"] + np.arange(len(big)) * 1000
    explainer = fc.FlexExplainer.from_task(_task(big), "rf", dictionary=path, n_cf=2)
    result = explainer.explain_global(n_factuals=4)
    assert result.display_names == ("Loan amount", "Loan term", "Cibil score", "Self-employed")
    labels = [f["label"] for f in result.to_dict()["features"]]
    assert labels == list(result.display_names)


def test_a_notebook_explainer_keeps_its_dictionary_in_a_saved_project(tmp_path):
    from tests.factories import accident_frame, user_pipeline

    frame = accident_frame(200)
    model = user_pipeline(frame)
    words = '[outcome]\nundesirable = "Serious"\n[features.speed]\nname = "Speed"\nunit = "km/h"\n'
    explainer = fc.FlexExplainer(model, frame.drop(columns="severity"), y=frame["severity"], undesired="severe",
                                 dictionary=words)
    assert explainer.task.feature("speed").format_value(80) == "80 km/h" and explainer.task.undesirable_words == "Serious"
    loaded = fc.FlexExplainer.load(explainer.save(tmp_path / "project")).task
    assert loaded.feature("speed").label == "Speed" and loaded.feature("speed").unit == "km/h"
    assert loaded.undesirable_words == "Serious" and loaded.feature("zone").label == "Zone"


def test_the_outcome_words_default_to_the_target_values(frame):
    task = fc.make_task(frame.assign(loan_status=frame["loan_status"].map({"Rejected": "no", "Approved": "yes"})),
                        target="loan_status", undesirable="no")
    assert (task.undesirable_words, task.desirable_words) == ("no", "yes")


def test_the_dictionary_travels_through_overrides_and_can_be_replaced(frame):
    task = _task(frame, LOAN_DICTIONARY)
    kept = task.with_overrides(features=["loan_term", "self_employed"])
    assert [f.label for f in kept.features] == ["Loan term", "Self-employed"] and kept.undesirable_words == "Rejected"
    plain = task.with_dictionary(None)
    assert plain.feature("loan_amount").format_value(6e6) == "6,000,000" and plain.feature("self_employed").label == "Self employed"
    assert plain.fingerprint != task.fingerprint  # cached results carry labels: new words, new cache entries
    assert plain.with_dictionary(LOAN_DICTIONARY).fingerprint == task.fingerprint


@pytest.mark.parametrize(("text", "message"), [
    ("[features.loan_amont]\nname = 'x'", "names feature 'loan_amont', which the data lacks; the features are: loan_amount"),
    ("[features.loan_amount]\nformat = 'zz'", "features.loan_amount.format 'zz' is not a number format"),
    ("[features.loan_amount]\nformat = 'd'", "features.loan_amount.format 'd' is not a number format"),
    ("[features.loan_amount]\ncolour = 'red'", "unknown key 'colour' in features.loan_amount; the keys are: name, unit"),
    ("[features.loan_amount]\nname = 3", "features.loan_amount.name must be text in quotes, not 3"),
    ("[outcome]\nbad = 'x'", "unknown key 'bad' in [outcome]"),
    ("[feature.loan_amount]\nname = 'x'", "unknown key 'feature' at the top level"),
    ("[features.self_employed]\nunit = 'people'", "'self_employed' has levels, not numbers, so unit, format and currency"),
    ("[features.loan_term]\nlevels = { a = 'b' }", "'loan_term' is a number, so it has no levels to name"),
    ("[features.self_employed]\nlevels = { Maybe = 'x' }", "'self_employed' has no level 'Maybe'; its levels are: No, Yes"),
    ("[features.loan_amount\nname = 'x'", "is not valid TOML"),
])
def test_a_bad_dictionary_is_refused_with_one_message_saying_what_to_fix(frame, text, message):
    with pytest.raises(fc.ConfigError, match="^") as caught:
        _task(frame, text + "\n")
    assert message in str(caught.value), str(caught.value)


def test_an_unreadable_dictionary_file_is_named(tmp_path):
    with pytest.raises(fc.ConfigError, match="Cannot read data dictionary 'missing.toml'"):
        load_dictionary(tmp_path / "missing.toml")


def test_a_dictionary_round_trips_through_plain_data():
    dictionary = load_dictionary(LOAN_DICTIONARY)
    assert DataDictionary.from_mapping(dictionary.to_dict(), source=dictionary.source) == dictionary
    assert dictionary.words("self_employed").level("Yes") == "self-employed"


def test_the_builtins_ship_their_words():
    synthetic = fc.data.load_builtin("synthetic-regional")
    assert synthetic.feature("speed").format_value(81) == "81 km/h" and synthetic.undesirable_words == "Severe"
    assert fc.data.load_builtin("toy2d").feature("vehicle_speed").label == "Vehicle speed"
    assert fc.data.load_builtin("toy2d", dictionary=None).feature("vehicle_speed").label == "Vehicle speed"
    assert fc.data.load_builtin("breast-cancer").feature("mean_radius").label == "Mean radius"


DATA = Path(os.environ.get("FLEX_DATA_DIR", Path(__file__).resolve().parents[3] / "shared" / "data"))


@pytest.mark.skipif(not (DATA / "loan_approval_dataset.csv").is_file(), reason="FLEX_DATA_DIR has no loan file")
def test_the_paper_datasets_use_their_shipped_dictionaries():
    loan = fc.data.load_loan(DATA / "loan_approval_dataset.csv")
    assert loan.feature("cibil_score").label == "CIBIL score" and loan.feature("cibil_score").format_value(453) == "453 points"
    assert loan.feature("loan_amount").format_value(6_000_000) == "₹6,000,000"
    assert loan.feature("loan_term").format_value(12) == "12 years"
    assert (loan.undesirable_words, loan.desirable_words) == ("Rejected", "Approved")
    raw = fc.data.load_loan(DATA / "loan_approval_dataset.csv", dictionary=None)
    assert raw.feature("cibil_score").label == "Cibil score"


@pytest.mark.skipif(not (DATA / "RTA_Dataset.csv").is_file(), reason="FLEX_DATA_DIR has no accidents file")
def test_the_accidents_dictionary_names_the_outcome_and_mends_garbled_levels():
    accidents = fc.data.load_accidents(DATA / "RTA_Dataset.csv")
    assert accidents.undesirable_words == "Serious or fatal injury" and accidents.desirable_words == "Slight injury"
    assert accidents.feature("Driving_experience").format_value("Below 1yr") == "under 1 year"
    walking = accidents.feature("Pedestrian_movement")
    assert all("statioNot" not in walking.format_value(level) for level in walking.levels)


def test_the_cli_takes_a_dictionary_and_refuses_a_bad_one_in_one_line(tmp_path, capsys):
    good, bad = tmp_path / "good.toml", tmp_path / "bad.toml"
    good.write_text('[features.speed]\nname = "Vehicle speed"\nunit = "km/h"\n', encoding="utf-8")
    bad.write_text('[features.sped]\nname = "x"\n', encoding="utf-8")
    out = tmp_path / "g.json"
    common = ["global", "--data", "builtin:synthetic-regional", "--n-factuals", "6", "--n-cf", "2", "--quiet"]
    assert main([*common, "--dictionary", str(good), "--out", str(out)]) == 0
    labels = [f["label"] for f in json.loads(out.read_text())["features"]]
    assert labels[0] == "Vehicle speed" and labels[1] == "Road type"
    assert main([*common, "--dictionary", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: data dictionary 'bad.toml' names feature 'sped', which the data lacks; the features are: "
                   "speed, road_type, lighting, noise_continuous, noise_categorical, driver_age_band."]


def test_an_uploaded_dictionary_is_read_as_content_never_as_a_path(tmp_path):
    (tmp_path / "x.toml").write_text('[outcome]\nundesirable = "from a path"\n', encoding="utf-8")
    with pytest.raises(fc.ConfigError, match="the data dictionary is not valid TOML"):  # the path's own text, not its file
        load_dictionary(str(tmp_path / "x.toml").encode())
    assert load_dictionary(b'[outcome]\nundesirable = "Bad"').undesirable == "Bad"  # no newline at the end: still text
    with pytest.raises(fc.ConfigError, match="not UTF-8 text"):
        load_dictionary("[outcome]\nundesirable = 'é'".encode("latin-1"))
    with pytest.raises(fc.ConfigError, match="a dictionary is a small TOML file"):
        load_dictionary(b"#" * 1_000_001)


def test_a_rule_is_written_with_the_currency_and_unit_of_each_number(frame):
    from flex_core.importance import rule_text

    task = _task(frame, LOAN_DICTIONARY)
    rule = fc.importance.check_rule(task, ["loan_term>=12", "loan_amount<5000000", "self_employed=Yes"])
    assert rule_text(rule, features=task.features) == (
        "Loan term ≥ 12 years and Loan amount < ₹5,000,000 and Self-employed = self-employed")
    between = [{"feature": "loan_amount", "op": "between", "value": [250000, 1200000]},
               {"feature": "loan_term", "op": "between", "value": [4, 8]}]
    assert rule_text(between, features=task.features) == "Loan amount ₹250,000–₹1,200,000 and Loan term 4–8 years"
    assert rule_text(rule) == "loan_term ≥ 12 and loan_amount < 5,000,000 and self_employed = Yes"  # no words given


def test_a_mode_shift_bin_names_its_currency_and_unit(frame):
    from ui.reporting import mode_words

    task = _task(frame, LOAN_DICTIONARY)
    assert mode_words(task.feature("loan_term"), "16 to 20") == "16 to 20 years"
    assert mode_words(task.feature("loan_amount"), "300,000 to 2,700,000") == "₹300,000 to ₹2,700,000"
    assert mode_words(task.feature("self_employed"), "No") == "salaried"
    assert task.feature("loan_amount").format_span(-5, 10, sep="–") == "-₹5–₹10"
