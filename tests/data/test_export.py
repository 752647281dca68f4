"""Formula-safe CSV export: text a spreadsheet would run is quoted, numbers stay numbers."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from flex_core.data import to_safe_csv
from flex_core.data._export import formula_safe


@pytest.mark.parametrize(
    "cell, expected",
    [
        ('=HYPERLINK("x")', '\'=HYPERLINK("x")'),
        ("+cmd", "'+cmd"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("-3.5", "-3.5"),  # a signed number is data, not a formula
        ("+2", "+2"),
        ("1e-3", "1e-3"),
        ("plain", "plain"),
        ("a=b", "a=b"),  # only the first character matters
        ("", ""),
    ],
)
def test_formula_safe_cells(cell, expected):
    assert formula_safe(cell) == expected


def test_non_text_values_are_untouched():
    assert formula_safe(-3) == -3 and formula_safe(None) is None
    assert np.isnan(formula_safe(float("nan")))


def test_csv_quotes_cells_header_and_index_but_not_numbers():
    frame = pd.DataFrame(
        {"=name": ['=HYPERLINK("x")', "ok"], "speed": [-1.5, 2.0], "label": pd.Categorical(["@a", "b"])},
        index=pd.Index(["-x", "y"], name="+row"),
    )
    text = to_safe_csv(frame, index=True)
    back = pd.read_csv(io.StringIO(text), keep_default_na=False)
    assert list(back.columns) == ["'+row", "'=name", "speed", "label"]
    assert back["'+row"].tolist() == ["'-x", "y"]
    assert back["'=name"].tolist() == ['\'=HYPERLINK("x")', "ok"]
    assert back["speed"].tolist() == [-1.5, 2.0]
    assert back["label"].tolist() == ["'@a", "b"]
    assert frame.iloc[0, 0] == '=HYPERLINK("x")', "the caller's frame is not modified"


def test_csv_without_index_matches_pandas_for_safe_data(tmp_path):
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", "-4"], "a2": [0.5, -0.25]})
    assert to_safe_csv(frame) == frame.to_csv(index=False)
    path = tmp_path / "out.csv"
    assert to_safe_csv(frame, path) is None
    assert path.read_text() == frame.to_csv(index=False)


def test_repeated_column_names_are_handled_by_position():
    frame = pd.DataFrame([["=1", 2], ["x", 3]], columns=["v", "v"])
    assert to_safe_csv(frame).splitlines() == ["v,v", "'=1,2", "x,3"]


def test_every_csv_the_code_writes_goes_through_the_safe_writer():
    """A plain ``DataFrame.to_csv`` in the app or the library would export formulas unescaped."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    sources = [root / "app.py", *(root / "app_pages").glob("*.py"), *(root / "ui").glob("*.py"),
               *(root / "flex_core").rglob("*.py")]
    offenders = [str(p.relative_to(root)) for p in sources
                 if p.name != "_export.py" and ".to_csv(" in p.read_text()]
    assert not offenders, f"use flex_core.data.to_safe_csv in {offenders}"
