"""Datasets: built-ins, the paper's adapters, generic CSV, and a clear error for each kind of bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flex_core as fc


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


GOOD = pd.DataFrame({"age": [20, 30, 40, 50], "city": ["a", "b", "a", "b"], "y": ["no", "yes", "no", "yes"]})


@pytest.mark.parametrize("name", sorted(fc.data.BUILTIN_DATASETS))
def test_builtins_load_deterministically(name):
    task = fc.data.load_builtin(name)
    again = fc.data.load_builtin(name)
    assert task.fingerprint == again.fingerprint
    assert 0 < task.y.sum() < len(task.y)
    assert task.source == f"builtin:{name}"


def test_builtin_kinds():
    assert fc.data.load_builtin("toy2d").continuous_names == ["vehicle_speed", "visibility"]
    cancer = fc.data.load_builtin("breast-cancer")
    assert len(cancer.features) == 30 and not cancer.categorical_names
    synthetic = fc.data.load_builtin("synthetic-regional")
    assert synthetic.immutable_names == ["road_type", "driver_age_band"]
    assert {"speed", "noise_continuous"} <= set(synthetic.continuous_names)
    assert "lighting" in synthetic.categorical_names
    with pytest.raises(fc.ConfigError, match="choose one of"):
        fc.data.load_builtin("mnist")


def test_csv_kinds_are_inferred_and_can_be_overridden():
    task = fc.data.load_csv(csv_bytes(GOOD), target="y", undesirable="yes")
    assert task.feature("age").kind == "continuous" and task.feature("city").kind == "categorical"
    task = fc.data.load_csv(csv_bytes(GOOD), target="y", undesirable="yes", kinds={"age": "categorical"}, immutable=["city"])
    assert task.feature("age").kind == "categorical" and task.feature("age").categories == ("20", "30", "40", "50")
    assert task.immutable_names == ["city"]
    ordinal = fc.make_task(GOOD, target="y", undesirable="yes", kinds={"city": "ordinal"}, ordinal_orders={"city": ["b", "a"]})
    assert ordinal.feature("city").categories == ("b", "a")


def test_numeric_target_matches_text_undesirable():
    frame = GOOD.assign(y=[0, 1, 0, 1])
    task = fc.data.load_csv(csv_bytes(frame), target="y", undesirable="1")
    np.testing.assert_array_equal(task.y, [0, 1, 0, 1])


@pytest.mark.parametrize(
    "content, kwargs, message",
    [
        (b"", {}, "empty"),
        (b"a,b,y\n", {}, "no rows"),
        (csv_bytes(GOOD), {"target": "label"}, "Target column 'label' not found"),
        (csv_bytes(GOOD.assign(y="no")), {}, "single value"),
        (csv_bytes(GOOD), {"undesirable": "maybe"}, "No row has the undesirable outcome"),
        (csv_bytes(GOOD.assign(empty=np.nan)), {"immutable": ["empty"]}, "Column empty has no values at all but a setting names it"),
        (csv_bytes(GOOD[["y"]].assign(empty=np.nan)), {}, "Every feature column is empty"),
        (csv_bytes(GOOD), {"kinds": {"city": "continuous"}}, "declared continuous but holds text such as 'a'"),
        (csv_bytes(GOOD), {"immutable": ["height"]}, "Unknown immutable feature: height"),
        (csv_bytes(GOOD), {"kinds": {"age": "numeric"}}, "Unknown kind"),
        (csv_bytes(GOOD), {"immutable": ["age", "city"]}, "Every feature is immutable"),
        (b'a,b\n"1,2\n', {"target": "b"}, "different number of fields"),
    ],
)
def test_bad_input_gets_a_clear_message(content, kwargs, message):
    kwargs = {"target": "y", "undesirable": "yes", **kwargs}
    with pytest.raises(fc.FlexError, match=message):
        fc.data.load_csv(content, **kwargs)


def test_an_all_empty_column_is_dropped_with_a_note():
    task = fc.data.load_csv(csv_bytes(GOOD.assign(empty=np.nan, blank="na")), target="y", undesirable="yes")
    assert task.feature_names == ["age", "city"]
    assert "Dropped empty columns (no value in any row): empty, blank." in task.notes


def test_outcome_columns_are_those_with_a_few_values_each_in_two_rows():
    frame = pd.DataFrame({"speed": np.arange(40) * 1.5, "road": ["urban", "rural"] * 20,
                          "rare": ["a"] * 39 + ["b"], "empty": [np.nan] * 40})
    assert fc.data.outcome_columns(frame) == ["road"]
    with pytest.raises(fc.DataError) as caught:
        fc.data.outcome_columns(frame[["speed", "rare", "empty"]])
    message = str(caught.value)
    assert message.startswith("No column looks like an outcome")
    assert "speed: 40 different values" in message and "rare: 'b' in one row only" in message
    assert "empty: no values" in message and "Add the column holding each case's outcome" in message


def test_file_over_the_size_limit_is_refused(tmp_path):
    path = tmp_path / "big.csv"
    path.write_bytes(csv_bytes(GOOD))
    with pytest.raises(fc.DataError, match="the limit is"):
        fc.data.load_csv(path, target="y", undesirable="yes", max_bytes=10)
    with pytest.raises(fc.DataError, match="File not found"):
        fc.data.load_csv(tmp_path / "nope.csv", target="y", undesirable="yes")


def test_missing_values_are_dropped_or_imputed_and_counted():
    frame = pd.DataFrame(
        {
            "x": [1.0, None, 3.0, 4.0, 5.0, 6.0],
            "c": ["a", "b", "na", "a", "", "b"],
            "y": ["bad", "ok", "bad", None, "ok", "ok"],
        }
    )
    dropped = fc.make_task(frame, target="y", undesirable="bad")
    # Row 3 has no target; rows 1, 2 and 4 lack a feature value ("na" and "" count as missing).
    assert list(dropped.frame.index) == [0, 5]
    assert any("Dropped 1 row with no target value." in n for n in dropped.notes)
    assert any("Dropped 3 rows with a missing feature value (X 1, C 2)" in n for n in dropped.notes)
    imputed = fc.make_task(frame, target="y", undesirable="bad", missing="impute")
    assert list(imputed.frame.index) == [0, 1, 2, 4, 5]
    assert imputed.frame.loc[1, "x"] == 4.0  # the median of 1, 3, 5, 6
    assert any("Imputed missing values in 3 rows" in n for n in imputed.notes)


def test_with_overrides_changes_kinds_and_immutables():
    task = fc.make_task(GOOD, target="y", undesirable="yes")
    changed = task.with_overrides(kinds={"age": "categorical"}, immutable=["age"])
    assert changed.feature("age").kind == "categorical" and changed.immutable_names == ["age"]
    assert changed.fingerprint != task.fingerprint
    assert task.feature("age").kind == "continuous"  # the original is untouched


def test_dataset_strings():
    assert fc.load_dataset("builtin:toy2d").name == "toy2d"
    with pytest.raises(fc.ConfigError, match="--target"):
        fc.load_dataset("some.csv")


# -- the paper's data ------------------------------------------------------------------------
def test_loan_adapter(loan_path):
    task = fc.data.load_loan(loan_path)
    assert len(task.frame) == 4269 and task.rows_in_file == 4269
    assert "loan_id" not in task.feature_names and len(task.features) == 11
    assert task.undesirable == ("Rejected",) and task.y.sum() == 1613
    assert task.feature("education").categories == ("Graduate", "Not Graduate")
    assert task.feature("cibil_score").is_continuous and task.feature("cibil_score").integer


def test_accidents_adapter(accidents_path):
    task = fc.data.load_accidents(accidents_path)
    assert len(task.features) == 11 and not task.continuous_names
    assert task.immutable_names == ["Age_band_of_driver", "Sex_of_driver"]
    assert set(task.undesirable) == {"Serious Injury", "Fatal injury"}
    dropped = task.rows_in_file - len(task.frame)
    assert task.rows_in_file == 12316 and dropped > 0
    assert any(f"Dropped {dropped:,} rows with a missing feature value" in n and "Driving experience 829" in n for n in task.notes)
    imputed = fc.data.load_accidents(accidents_path, missing="impute")
    assert len(imputed.frame) == 12316 and any("Imputed" in n for n in imputed.notes)
    with pytest.raises(fc.DataError, match="does not look like the RTA"):
        fc.data.load_accidents(accidents_path.read_bytes().replace(b"Accident_severity", b"Severity"))


# -- values a number column should not hold ---------------------------------------------------
SPEEDS = [float(v) for v in range(30, 130, 4)]  # 25 rows


def _speed_frame(cells: dict[int, object]) -> pd.DataFrame:
    speed = [cells.get(i, v) for i, v in enumerate(SPEEDS)]
    return pd.DataFrame({"speed": speed, "road": ["a", "b"] * 12 + ["a"], "y": ["slight", "severe"] * 12 + ["severe"]})


def test_text_cells_in_a_number_column_become_missing_values_with_a_note():
    frame = _speed_frame({3: "fast", 8: "fast", 11: "slow"})
    task = fc.data.load_csv(csv_bytes(frame), target="y", undesirable="severe")
    assert task.feature("speed").kind == "continuous"
    assert 3 not in task.frame.index and 11 not in task.frame.index and len(task.frame) == 22
    text_note = next(n for n in task.notes if "hold text" in n)
    assert "'speed'" in text_note and "'fast' ×2, 'slow'" in text_note and "rows 3, 8, 11" in text_note
    assert any("Dropped 3 rows with a missing feature value (Speed 3)" in n for n in task.notes)
    imputed = fc.data.load_csv(csv_bytes(frame), target="y", undesirable="severe", missing="impute")
    assert len(imputed.frame) == 25 and imputed.frame.loc[3, "speed"] == np.median(np.delete(SPEEDS, [3, 8, 11]))
    # Declared categorical, the text stays a value and nothing is dropped.
    kept = fc.data.load_csv(csv_bytes(frame), target="y", undesirable="severe", kinds={"speed": "categorical"})
    assert "fast" in kept.feature("speed").categories and len(kept.frame) == 25


def test_a_column_mostly_of_text_stays_categorical():
    frame = _speed_frame({i: "fast" for i in range(0, 25, 3)})  # 9 of 25 cells are text
    task = fc.data.load_csv(csv_bytes(frame), target="y", undesirable="severe")
    assert task.feature("speed").kind == "categorical" and not any("hold text" in n for n in task.notes)


@pytest.mark.parametrize("missing, rows", [("drop", 23), ("impute", 25)])
def test_infinite_values_become_missing_values_with_a_note(missing, rows):
    frame = _speed_frame({4: "inf", 20: "-inf"})
    task = fc.data.load_csv(csv_bytes(frame), target="y", undesirable="severe", missing=missing)
    assert len(task.frame) == rows and np.isfinite(task.frame["speed"]).all()
    assert any("'speed' holds 2 infinite values (rows 4, 20)" in n for n in task.notes)
    # The same check holds for frames handed to make_task directly.
    direct = fc.make_task(_speed_frame({4: np.inf}).astype({"speed": float}), target="y", undesirable="severe")
    assert 4 not in direct.frame.index and any("infinite" in n for n in direct.notes)


def test_identifier_columns_are_left_out_with_a_note_and_can_be_put_back():
    frame = _speed_frame({}).assign(id=[f"id{i}" for i in range(25)], row=range(1, 26), count=range(0, 50, 2))
    assert fc.data.identifier_columns(frame, target="y") == ["id", "row"]  # count's values do not step by one
    # All-distinct integers in another order are measurements, not row numbers.
    assert fc.data.identifier_columns(frame.assign(row=range(25, 0, -1)), target="y") == ["id"]
    task = fc.data.load_csv(csv_bytes(frame), target="y", undesirable="severe")
    assert task.feature_names == ["speed", "road", "count"]
    assert any(n.startswith("Left out id, row: every value is unique") for n in task.notes)
    back = fc.data.load_csv(csv_bytes(frame), target="y", undesirable="severe", use_identifiers=["id"])
    assert back.feature_names == ["speed", "road", "id", "count"]
    chosen = fc.data.load_csv(csv_bytes(frame), target="y", undesirable="severe", features=["speed", "row"])
    assert chosen.feature_names == ["speed", "row"], "named features are used as given"
    with pytest.raises(fc.ConfigError, match="identifier column nope to use is not in the data"):
        fc.data.load_csv(csv_bytes(frame), target="y", undesirable="severe", use_identifiers=["nope"])
    assert fc.data.identifier_columns(frame.head(10), target="y") == []  # too few rows to tell
    assert fc.data.identifier_columns(_speed_frame({3: "fast"}), target="y") == [], "numbers with a typo are data"


def test_read_notes_reach_the_task():
    text = csv_bytes(_speed_frame({})).decode().replace(",", ";")
    task = fc.data.load_csv(text.encode("cp1252"), target="y", undesirable="severe")
    assert any("semicolons" in n for n in task.notes)


def _amounts(n: int = 60) -> pd.DataFrame:
    """A loan-like frame whose ``amount`` is a measured number (n different values) and ``grade`` a feature."""
    rng = np.random.default_rng(0)
    return pd.DataFrame({"income": rng.uniform(1, 10, n).round(2), "grade": rng.choice(["a", "b"], n),
                         "amount": 1_000_000 + 100_000 * np.arange(n)})


def test_a_number_target_is_refused_instead_of_read_as_one_value_against_the_rest():
    """Issue 38 item 4: --undesired 29900000 on loan_amount used to explain "amount == 29,900,000" silently."""
    frame = _amounts()
    with pytest.raises(fc.ConfigError) as caught:
        fc.make_task(frame, target="amount", undesirable=2_900_000)
    message = str(caught.value)
    assert message.startswith("The target 'amount' holds numbers (60 different values, from 1,000,000 to 6,900,000)")
    assert "give a column of classes as the target" in message and "regression" in message
    assert all(option in message for option in ("--above T", "--below T", "--band LO:HI", "undesirable={'above': T}"))
    assert fc.data.number_columns(frame) == ["income", "amount"]  # every measured number, whichever is the target
    # The same numbers written as text in the file (object column) are numbers all the same.
    with pytest.raises(fc.ConfigError, match="holds numbers"):
        fc.make_task(frame.assign(amount=frame["amount"].astype(str)), target="amount", undesirable="2900000")


def test_labels_coded_as_few_numbers_are_still_classes():
    frame = _amounts()
    # A 0/1 label, integer codes of 20 classes (the limit), a 0.0/1.0 float label: classes.
    for label, undesirable in ((np.arange(60) % 2, 1), (np.arange(60) % 20, (3, 4)), ((np.arange(60) % 2) * 1.0, 1.0)):
        task = fc.make_task(frame.drop(columns="amount").assign(y=label), target="y", undesirable=undesirable)
        assert task.y.sum() > 0
    # Text classes are never "a number", however many.
    assert fc.data.number_columns(pd.DataFrame({"c": [f"c{i}" for i in range(30)]})) == []
    # 21 different numbers are one too many for classes.
    assert fc.data.number_columns(pd.DataFrame({"c": np.arange(42) % 21})) == ["c"]
