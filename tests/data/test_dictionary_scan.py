"""The scan the browser tests run over each page's text (tests/dictionary_scan.py): it finds what it should."""

from __future__ import annotations

import pandas as pd
import pytest

import flex_core as fc
from tests.data.test_dictionary import LOAN_DICTIONARY
from tests.dictionary_scan import problems, raw_names


@pytest.fixture
def task() -> fc.TaskSpec:
    frame = pd.DataFrame({
        "loan_amount": [6_000_000, 250_000, 1_200_000, 9_000_000],
        "loan_term": [12, 4, 20, 8],
        "self_employed": ["Yes", "No", "No", "Yes"],
        "loan_status": ["Rejected", "Approved", "Approved", "Rejected"],
    })
    return fc.make_task(frame, target="loan_status", undesirable="Rejected", dictionary=LOAN_DICTIONARY)


def test_raw_names_are_the_columns_the_dictionary_renames(task):
    assert raw_names(task) == ["loan_amount", "loan_term", "self employed", "self_employed"]


@pytest.mark.parametrize("text", [
    "Loan term ≥ 12 points and Loan amount ≥ 6,000,000",  # the second number lacks its ₹
    "raise Loan term to 20",
    "Loan amount: 6000000",
    "the case has loan_term 12",
    "P(undesirable) 0.3",
    "not Rejected",
    "most often move away from Loan term = 16 to 20 (δ = -0.58)",
    "FLEX F_j (95% interval): share of ways out changing it",  # the paper's symbols, its terms switched off
    "Important everywhere (quadrant C): Loan term",
    "its share falls (δ = −0.58)",
    "among the 200 analysed cases (N_F in the sidebar)",
    "red diamonds show μ_j",
])
def test_the_scan_flags_what_a_reader_should_not_see(task, text):
    assert problems(text, task), text


@pytest.mark.parametrize("text", [
    "Loan term ≥ 12 years and Loan amount ≥ ₹6,000,000",
    "Loan amount ₹250,000–₹9,000,000; Loan term 4–20 years",
    "Loan term 40% of its range",
    "Loan term (years) 12",
    "cf.loan_amount <= 5 * cf.loan_term",  # the constraint language, shown as typed
    "P(Rejected) 30%; Approved",
    "the ways out most often change Loan term: 57 in 100 on average",
    "Loan amount\nLoan term\n0\n0.5\n1",  # a chart's labels, then its axis ticks
])
def test_the_scan_passes_the_dictionarys_words(task, text):
    assert problems(text, task) == []


def test_the_papers_symbols_pass_only_with_its_terms_switched_on(task):
    text = "change frequency F_j (FLEX) and mean change size μ_j"
    assert len(problems(text, task)) == 2 and problems(text, task, terms=True) == []
    # F and necessary F as names of numbers, and Pearson r; plain words pass (issue 35's words, this stop's scan).
    named = "F (95% interval) | necessary F\nF: changed\n(Pearson r = 0.91)"
    assert len(problems(named, task)) == 4 and problems(named, task, terms=True) == []
    assert len(problems("F 0.41 against 0.05; F per feature", task)) == 2
    plain = "changed (95% interval) | changed and needed\n(agreement 0.91 on a scale from −1 to 1)\nIF: a rule"
    assert problems(plain, task) == []
    # "factual" is the paper's word for a case, "counterfactual" for a way out; the page's name and the report's
    # file name pass.
    assert len(problems("100 factuals explained. Factual 3", task)) == 2
    assert len(problems("3 counterfactuals; a counterfactual counts when", task)) == 2
    assert problems("3 counterfactuals", task, terms=True) == []
    assert problems("Counterfactuals of one case; counterfactuals.csv; 3 ways out", task) == []


def test_a_table_column_of_numbers_must_name_its_unit(task):
    bare = [["Feature", "Loan term"], ["this case", "12"]]
    named = [["Feature", "Loan term (years)"], ["this case", "12"]]
    words = [["Feature", "Loan term"], ["most changed", "sometimes"]]
    assert problems("", task, [bare]) and problems("", task, [named, words]) == []


def test_only_the_dictionary_editors_key_column_may_name_the_files_columns():
    from tests.dictionary_scan import table_text

    editor = [["column in the file", "display name"], ["loan_term", "Loan term"]]
    other = [["feature", "display name"], ["loan_term", "Loan term"]]
    assert table_text([editor]) == "display name\nLoan term" and "loan_term" in table_text([other])
