"""What-if: an edited case's prediction and minimal counterfactuals, on a planted model whose answer is known."""

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from tests.factories import planted


def _explainer():
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame({
        "income": rng.uniform(0, 10, n).round(2),
        "colour": rng.choice(["red", "green", "blue"], n),
        "age": rng.integers(20, 70, n).astype(float),
    })
    # Undesirable exactly when income < 5: the one minimal way out is raising income to 5.
    task, model = planted(frame, lambda X: X["income"].to_numpy(dtype=float) < 5, immutable=["age"])
    return fc.FlexExplainer.from_task(task, model, n_cf=3, seed=0)


@pytest.fixture(scope="module")
def explainer():
    return _explainer()


def _row(explainer, undesirable: bool) -> int:
    frame = explainer.task.frame
    mask = (frame["income"] < 4) if undesirable else (frame["income"] > 6)
    return int(frame.index[mask][0])


def test_an_edited_case_gets_its_prediction_and_the_known_minimal_counterfactual(explainer):
    row = _row(explainer, undesirable=False)
    result = explainer.what_if({"income": 2.0}, row=row)
    assert result.edited == ("income",) and not result.is_row
    assert result.predicted_undesirable and result.probability == 1.0
    frame = result.counterfactuals.to_frame(explainer.task)
    cf = frame[frame["cf"] >= 0]
    assert len(cf) >= 1 and cf["valid"].all() and result.n_valid == len(cf)
    assert (cf["row"] == row).all() and result.query_id == row
    # The only way out: income up to the robust boundary, 5 plus the default radius (1% of income's range:
    # income one radius lower must still flip), minimal: no further; nothing else changed.
    income = explainer.task.frame["income"]
    assert cf["income"].min() == pytest.approx(5.0 + 0.01 * (income.max() - income.min()), abs=0.02)
    assert (cf["colour"] == result.case.loc[row, "colour"]).all() and (cf["age"] == result.case.loc[row, "age"]).all()
    assert frame.loc[frame["cf"] == -1, "income"].item() == 2.0
    assert "not a row of the data" in result.why_not_a_query()


def test_an_unedited_factual_row_uses_the_stored_counterfactuals_and_can_be_a_query(explainer):
    row = _row(explainer, undesirable=True)
    result = explainer.what_if({}, row=row)
    assert result.is_factual and result.why_not_a_query() is None
    stored = explainer.store.ensure([row])
    np.testing.assert_array_equal(result.counterfactuals.counterfactuals, stored.counterfactuals)
    # The same row's values given explicitly are no edit.
    same = explainer.what_if(explainer.task.frame.loc[row, explainer.task.feature_names].to_dict(), row=row)
    assert same.edited == () and same.is_factual


def test_a_case_predicted_desirable_has_nothing_to_change(explainer):
    row = _row(explainer, undesirable=True)
    result = explainer.what_if({"income": 8.0}, row=row)
    assert not result.predicted_undesirable and result.counterfactuals is None and result.n_valid == 0
    plain = explainer.what_if({}, row=_row(explainer, undesirable=False))
    assert "predicted not" in plain.why_not_a_query("bad")


def test_a_case_typed_in_without_a_row_needs_every_feature(explainer):
    result = explainer.what_if({"income": 1.0, "colour": "red", "age": 30.0})
    assert result.row is None and result.predicted_undesirable
    assert "typed in" in result.why_not_a_query()
    with pytest.raises(fc.ConfigError, match="missing: age"):
        explainer.what_if({"income": 1.0, "colour": "red"})


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"income": 50.0}, "outside the data's range"),
        ({"income": "much"}, "is not a number"),
        ({"income": ""}, "the value is empty"),
        ({"income": "nan"}, "not a finite number"),
        ({"colour": "purple"}, "not a level of the data"),
        ({"age": 99.0}, "outside the data's range"),
        ({"age": 21.0}, "immutable"),
        ({"height": 3}, "Unknown feature"),
    ],
)
def test_bad_values_are_refused_once_with_a_clear_message(explainer, values, message):
    row = _row(explainer, undesirable=True)
    if "age" in values and values["age"] == 21.0 and explainer.task.frame.loc[row, "age"] == 21.0:
        values = {"age": 22.0}
    with pytest.raises(fc.ConfigError, match=message):
        explainer.what_if(values, row=row)
    with pytest.raises(fc.ConfigError, match="not in the data"):
        explainer.what_if({}, row=10**6)
