"""One reading of the numbers people type (what-if edits, rule values): what it takes and what it refuses, and why."""

from __future__ import annotations

import re

import numpy as np
import pytest

from flex_core import ConfigError
from flex_core._format import format_number, read_number


@pytest.mark.parametrize(
    ("typed", "number"),
    [
        ("70", 70.0),
        (" 65.5\n", 65.5),  # white space around a typed value
        ("+3", 3.0),
        ("-2.5", -2.5),
        (".5", 0.5),
        ("1e3", 1000.0),
        ("-1.5E-2", -0.015),
        ("1,500", 1500.0),  # thousands as format_number writes them
        ("21,500,000", 21_500_000.0),
        ("-1,234.5", -1234.5),
        ("1_000", 1000.0),  # Python's own grouping, as float() has always taken
        (7, 7.0),
        (2.25, 2.25),
        (np.float32(0.5), 0.5),
        (np.int64(-4), -4.0),
    ],
)
def test_a_typed_number_is_read_as_its_value(typed, number):
    value = read_number(typed, name="Income")
    assert value == number and isinstance(value, float)


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("", "Income is a number: the value is empty."),
        ("   ", "Income is a number: the value is empty."),
        ("much", "Income is a number: 'much' is not a number (write e.g. 1500, 1,500, -2.5 or 1e6)."),
        ("1 500", "Income is a number: '1 500' is not a number (write e.g. 1500, 1,500, -2.5 or 1e6)."),
        (None, "Income is a number: None is not a number (write e.g. 1500, 1,500, -2.5 or 1e6)."),
        ([1, 2], "Income is a number: [1, 2] is not a number (write e.g. 1500, 1,500, -2.5 or 1e6)."),
        # A comma that does not separate thousands: a decimal comma ("1,5") is not guessed at.
        ("1,5", "Income is a number: '1,5' is not a number (a comma may only separate thousands, as in 1,500; "
                "the decimal mark is a point, as in 1.5)."),
        ("1,50,000", "'1,50,000' is not a number (a comma may only separate thousands"),
        (",500", "',500' is not a number (a comma may only separate thousands"),
        ("nan", "Income: 'nan' is not a finite number."),
        ("-inf", "Income: '-inf' is not a finite number."),
        (float("inf"), "Income: inf is not a finite number."),
    ],
)
def test_what_is_not_a_number_is_refused_with_one_clear_message(typed, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        read_number(typed, name="Income")


@pytest.mark.parametrize("value", [21_500_000, -1500, 12.5, 0.0123, 7])
def test_a_number_the_app_shows_reads_back(value):
    assert read_number(format_number(value), name="x") == pytest.approx(value)
