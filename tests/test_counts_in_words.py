"""Counts and lists in messages read as a person writes them: "1 row", "rows 3 and 8", never "row(s)"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import flex_core as fc
from flex_core._format import rows_not_in_data
from flex_core.formatting import listing, plural


def test_plural_counts_with_thousands():
    assert [plural(n, "case") for n in (0, 1, 2, 1200)] == ["0 cases", "1 case", "2 cases", "1,200 cases"]
    assert plural(3, "class", "classes") == "3 classes"


@pytest.mark.parametrize(
    ("items", "text"),
    [
        (["age"], "feature age"),
        (["age", "zone"], "features age and zone"),
        (["a", "b", "c"], "features a, b and c"),
        (list("abcde"), "features a, b, c, d and e"),
        (list("abcdefg"), "features a, b, c, d, e and 2 more"),
        ((x for x in [3]), "feature 3"),  # any iterable, numbers too
    ],
)
def test_listing_names_up_to_five_items_then_counts_the_rest(items, text):
    assert listing("feature", items) == text


def test_listing_takes_an_irregular_plural_and_refuses_nothing_to_list():
    assert listing("class", ["a", "b"], many="classes") == "classes a and b"
    assert listing("Row", [7]) == "Row 7"
    with pytest.raises(ValueError):
        listing("row", [])


def test_rows_not_in_data_agrees_in_number():
    assert rows_not_in_data([7]) == "Row 7 is not in the data (it may have been dropped)."
    assert rows_not_in_data([7, 9]) == "Rows 7 and 9 are not in the data (they may have been dropped)."


def test_messages_a_person_meets_agree_in_number(toy_task, toy_model):
    """The library's messages on unknown rows and features: one item in the singular, more in the plural."""
    explainer = fc.FlexExplainer.from_task(toy_task, toy_model, n_cf=2, seed=0)
    missing = int(max(toy_task.frame.index)) + 10
    with pytest.raises(fc.ConfigError, match=rf"^Row {missing} is not in the data \(it may have been dropped\)\.$"):
        explainer.explain_local([missing])
    with pytest.raises(fc.ConfigError, match=r"^Unknown features height and depth; the features are: "):
        toy_task.with_overrides(features=["height", "depth"])
    with pytest.raises(fc.ConfigError, match=r"^τ given for an unknown feature height\.$"):
        explainer.explain_global(n_factuals=5, tau={"height": 0.1})


def test_no_message_in_the_code_says_s_in_brackets():
    """A message says "1 row" or "3 rows": the library, the app and its pages never write "row(s)"."""
    root = Path(__file__).resolve().parents[1]
    pattern = re.compile(r"""["'][^"'\n]*\b\w+\((?:s|es|ies)\)[^"'\n]*["']""")
    found = []
    for folder in ("flex_core", "ui", "app_pages"):
        for path in (root / folder).rglob("*.py"):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                code = line.split("#")[0]
                if pattern.search(code) and '"""' not in code and "``" not in code:
                    found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    assert not found, "\n".join(found)
