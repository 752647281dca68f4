"""The CLI on a number target (issue 38 item 1): --above, --below, --band and --inclusive; a bad combination is one
`error:` line and exit status 2; the JSON's model block carries the band and the regression scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from flex_core.cli import main
from tests.contract import assert_valid, strict_json

FAST = ["--n-factuals", "6", "--n-cf", "2", "--cv-folds", "2", "--quiet"]


@pytest.fixture
def amounts(tmp_path):
    rng = np.random.default_rng(0)
    n = 200
    frame = pd.DataFrame({"x1": rng.uniform(0, 10, n).round(2), "x2": rng.choice(["a", "b"], n),
                          "n1": rng.normal(0, 1, n).round(3)})
    frame["y"] = 3 * frame["x1"] + 2 * (frame["x2"] == "a") + rng.normal(0, 0.5, n).round(3)
    path = tmp_path / "amounts.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize(("options", "band"), [
    (["--above", "20"], {"above": 20.0, "below": None, "inclusive": False, "undesirable": "above 20"}),
    (["--below", "10", "--inclusive"], {"above": None, "below": 10.0, "inclusive": True,
                                        "undesirable": "at or below 10"}),
    (["--band", "5:25"], {"above": 25.0, "below": 5.0, "inclusive": False, "undesirable": "outside 5 to 25"}),
])
def test_a_band_explains_a_number_target_and_the_json_says_so(amounts, tmp_path, options, band):
    out = tmp_path / "out.json"
    code = main(["global", "--data", str(amounts), "--target", "y", *options, *FAST, "--out", str(out)])
    assert code == 0
    result = assert_valid(strict_json(out.read_text()))
    model = result["model"]
    assert {k: model["band"][k] for k in band} == band and model["band"]["scale"] > 0
    assert model["test_r2"] > 0.9 and model["test_mae"] < model["baseline_mae"] and model["cv_r2_mean"] > 0.9
    top = max(result["features"], key=lambda f: f["frequency_mean"] or 0)
    assert top["name"] == "x1"  # the planted driver (3 per unit against x2's 2)


@pytest.mark.parametrize(("options", "message"), [
    (["--above", "20", "--undesired", "3"], "error: --above makes the target a number with an undesirable band; "
                                            "leave out --undesired."),
    (["--above", "20", "--band", "1:3"], "error: Give one of --above, --below or --band, not --above and --band"),
    (["--undesired", "3", "--inclusive"], "error: --inclusive applies to a band"),
    (["--band", "3"], "error: The range of '--band' must be LO:HI"),
    (["--band", "5:"], "error: --band takes LO:HI with both ends, not '5:'."),
    (["--band", "25:5"], "error: The band's low end (25) must be below its high end (5)."),
    (["--above", "x"], "error: argument --above: invalid float value: 'x'"),
    (["--above", "1000"], "error: No row's y is above 1,000 (the values run from"),
])
def test_a_bad_band_is_one_error_line_and_exit_2(amounts, capsys, options, message):
    try:
        code = main(["global", "--data", str(amounts), "--target", "y", *options, *FAST])
    except SystemExit as stop:  # argparse's own refusal
        code = stop.code
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith(message), err


def test_a_regressor_from_a_skops_file_is_explained_with_a_band(amounts, tmp_path, capsys):
    import skops.io as sio
    from sklearn.ensemble import GradientBoostingRegressor

    from flex_core.data import load_csv
    from flex_core.models import build_pipeline

    task = load_csv(amounts, target="y", undesirable={"above": 20})
    pipeline = build_pipeline(task).set_params(classify=GradientBoostingRegressor(random_state=0))
    model_file = tmp_path / "regressor.skops"
    sio.dump(pipeline.fit(task.X, task.frame["y"]), model_file)
    out = tmp_path / "out.json"
    code = main(["global", "--data", str(amounts), "--target", "y", "--above", "20", "--model-file", str(model_file),
                 "--n-factuals", "5", "--n-cf", "2", "--quiet", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    model = assert_valid(strict_json(out.read_text()))["model"]
    assert model["band"]["above"] == 20 and model["test_r2"] > 0.9 and model["classes"] == []
    # the same file with a class named instead of a band: one line saying to give a band
    code = main(["global", "--data", str(amounts), "--target", "y", "--undesired", "3", "--model-file", str(model_file),
                 "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "holds numbers" in err[0]
