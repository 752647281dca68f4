"""The Data & model page's editor of the data dictionary (ui/words.py): the table it shows and what it stands for."""

from __future__ import annotations

import pandas as pd
import pytest

import flex_core as fc
from tests.data.test_dictionary import LOAN_DICTIONARY
from ui import url_state
from ui.words import KEY_COLUMN, dictionary_from_table, words_table


@pytest.fixture
def task() -> fc.TaskSpec:
    frame = pd.DataFrame({
        "loan_amount": [6_000_000, 250_000, 1_200_000, 9_000_000],
        "loan_term": [12, 4, 20, 8],
        "self_employed": ["Yes", "No", "No", "Yes"],
        "loan_status": ["Rejected", "Approved", "Approved", "Rejected"],
    })
    return fc.make_task(frame, target="loan_status", undesirable="Rejected", dictionary=LOAN_DICTIONARY)


def test_the_table_shows_each_features_words(task):
    table = words_table(task)
    assert table.to_dict("records") == [
        {KEY_COLUMN: "loan_amount", "display name": "Loan amount", "unit": "", "currency": "₹", "level words": ""},
        {KEY_COLUMN: "loan_term", "display name": "Loan term", "unit": "years", "currency": "", "level words": ""},
        {KEY_COLUMN: "self_employed", "display name": "Self-employed", "unit": "", "currency": "",
         "level words": "Yes = self-employed; No = salaried"},
    ]


def test_an_edited_table_is_the_dictionary_the_task_takes(task):
    table = words_table(task)
    table.loc[1, ["display name", "unit"]] = ["Term of the loan", "months"]
    table.loc[2, "level words"] = "Yes = runs a business ; No=employed"
    words = dictionary_from_table(table, task, "Turned down", "Granted")
    assert words["outcome"] == {"undesirable": "Turned down", "desirable": "Granted"}
    assert words["features"]["loan_amount"] == {"name": "Loan amount", "format": ",.0f", "currency": "₹"}  # format kept
    assert words["features"]["self_employed"]["levels"] == {"Yes": "runs a business", "No": "employed"}
    worded = task.with_dictionary(words)
    assert worded.feature("loan_term").format_value(12) == "12 months" and worded.undesirable_words == "Turned down"
    assert worded.feature("loan_term").label == "Term of the loan"
    view = {**url_state.VIEW_DEFAULTS, "words": words}  # the link carries it
    assert url_state.view_from_query_params(url_state.view_to_query_params(view))["words"] == words


@pytest.mark.parametrize(("column", "row", "value", "message"), [
    ("display name", 0, " ", "Loan amount has no display name"),
    ("level words", 2, "Yes: self-employed", "Level words of Self-employed: write LEVEL = words"),
])
def test_bad_words_are_one_message_saying_what_to_write(task, column, row, value, message):
    table = words_table(task)
    table.loc[row, column] = value
    with pytest.raises(fc.ConfigError, match=message):
        dictionary_from_table(table, task, "Rejected", "Approved")


def test_words_the_data_cannot_take_are_refused_where_they_are_applied(task):
    table = words_table(task)
    table.loc[2, "unit"] = "kg"  # a unit on a feature with levels
    with pytest.raises(fc.ConfigError, match="has levels, not numbers"):
        task.with_dictionary(dictionary_from_table(table, task, "Rejected", "Approved"))
