"""describe_settings: the one line of settings the app's strip, figures, CSVs and report sections share."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

import flex_core as fc
from ui import reporting

LOAN = {"dataset": "loan", "model": "rf", "encoding": "onehot", "generator": "batch", "refine": "minimal",
        "n_factuals": 200, "n_cf": 10, "seed": 0, "tau": 0.7}


def test_all_settings_in_one_line():
    assert reporting.describe_settings(LOAN) == (
        "loan · random forest (one-hot encoding) · generator batch (refine minimal) · N_F = 200 · N_cf = 10 · "
        "seed 0 · τ = 0.70"
    )


def test_the_strip_says_n_f_n_cf_and_tau_in_words_unless_the_terms_are_asked_for():
    assert reporting.describe_settings(LOAN, words=True) == (
        "loan · random forest (one-hot encoding) · minimal ways out by batched search · 200 cases explained · "
        "up to 10 ways out each · seed 0 · changes under 70% of a number's range ignored"
    )
    tau = {"*": 0.1, "income": 0.3}
    assert reporting.describe_settings({**LOAN, "n_cf": 1, "tau": tau}, words=True).endswith(
        "up to 1 way out each · seed 0 · changes under 10% of a number's range ignored (1 feature with their own)")


def test_the_generator_is_said_in_words_with_its_refine_mode():
    words = {name: reporting.describe_settings({"generator": name, "refine": refine}, words=True).split(" · ")[1]
             for name, refine in [("tree", "minimal"), ("dice-random", "none"), ("dice-genetic", None)]}
    assert words == {"tree": "minimal ways out read from the model's trees",
                     "dice-random": "ways out by DiCE's random sampling (changes as drawn)",
                     "dice-genetic": "ways out by DiCE's genetic search"}
    assert all("," not in text for text in words.values())  # the line stays one CSV cell
    # every generator the app offers has words; one it does not know keeps its name
    assert all("generator " not in reporting.describe_settings({"generator": g, "refine": "minimal"}, words=True)
               for g in fc.counterfactuals.GENERATORS)
    assert reporting.describe_settings({"generator": "mine", "refine": "none"}, words=True) == "data · generator mine (refine none)"


def test_per_feature_tau_says_how_many_features_are_overridden():
    tau = {"*": 0.1, "income": 0.3, "loan_amount": 0.5, "cibil_score": 0.2}
    assert reporting.describe_settings({**LOAN, "tau": tau}).endswith("τ = 0.10 (3 features overridden)")
    assert reporting.describe_settings({**LOAN, "tau": {"*": 0.1, "income": 0.3}}).endswith(
        "τ = 0.10 (1 feature overridden)")


def test_missing_settings_are_left_out_and_overrides_win():
    text = reporting.describe_settings({"dataset": "accidents", "model": "Uploaded pipeline", "generator": "dice-random",
                                        "n_cf": 5, "seed": 3, "tau": None}, n_factuals=100)
    assert text == "accidents · Uploaded pipeline · generator dice-random · N_F = 100 · N_cf = 5 · seed 3"
    assert "," not in text, "the line holds no comma, so a CSV's metadata line stays one cell"


def _result(config):
    n = 2
    return fc.FlexResult(
        level="global", feature_names=("a", "b"), display_names=("A", "B"), kinds=("continuous", "categorical"),
        immutable=(False, False), tau=np.array([0.7, np.nan]), frequency_mean=np.zeros(n), frequency_std=np.zeros(n),
        magnitude_mean=np.array([0.2, np.nan]), dice_frequency=np.array([0.9, 0.0]), local_frequencies=np.zeros((3, n)),
        local_magnitudes=np.zeros((3, n)), query_index=np.arange(3), counts=np.array([4, 4, 4]),
        generator={"name": "batch"}, model={"name": "gb", "encoding": "label"}, config=config,
    )


def test_a_result_records_its_settings():
    result = _result({"dataset": "builtin:toy2d", "n_cf": 4, "seed": 1, "refine": "none", "tau": 0.7})
    assert reporting.describe_settings(result) == (
        "toy2d · gradient boosting (label encoding) · generator batch (refine none) · N_F = 3 · N_cf = 4 · seed 1 · τ = 0.70"
    )
    assert reporting.describe_settings(result, dataset="Toy").startswith("Toy · ")


def test_all_zero_bars_are_explained_by_tau():
    result = _result({"tau": 0.7})
    assert "no change is larger than τ = 0.70" in reporting.describe_all_zero(result)
    busy = _result({"tau": 0.7})
    object.__setattr__(busy, "frequency_mean", np.array([0.5, 0.0]))
    assert reporting.describe_all_zero(busy) is None


def test_csv_metadata_line_is_one_safe_cell_that_readers_skip():
    frame = pd.DataFrame({"feature": ["=x", "b"], "F": [0.5, 0.25]})
    text = fc.data.to_safe_csv(frame, settings="=loan, N_F = 1,000 · τ = 0.70")
    first = text.splitlines()[0]
    assert first == '"# settings: =loan, N_F = 1,000 · τ = 0.70"'
    back = pd.read_csv(io.StringIO(text), skiprows=1)
    assert back["feature"].tolist() == ["'=x", "b"]
    plain = fc.data.to_safe_csv(frame, settings="loan · τ = 0.70")
    assert plain.splitlines()[0] == "# settings: loan · τ = 0.70"
    assert pd.read_csv(io.StringIO(plain), comment="#")["F"].tolist() == [0.5, 0.25]


def test_every_report_section_and_figure_names_the_settings():
    html = reporting.build_html_report([reporting.ReportSection("S", "Reading.", settings="loan · τ = 0.70")])
    assert "<p class='settings'>Settings: loan · τ = 0.70</p>" in html
