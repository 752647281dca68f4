"""ui.rules: the Data & model page's editor of constraints between features (what it shows, as plain data)."""

from __future__ import annotations

from tests.counterfactuals.test_constraints import make
from tests.counterfactuals.test_rules import breaking_as_they_are
from ui import rules


def test_each_line_is_checked_and_the_errors_are_listed_in_order():
    task, _ = make()
    texts, checks, errors = rules.checked_lines("cf.income >= 20\n# a comment\ncf.wage > 1\n\ncf.debt <= x.debt", task)
    assert texts == ["cf.income >= 20", "cf.wage > 1", "cf.debt <= x.debt"]
    assert list(checks["check"][[0, 2]]) == ["ok", "ok"] and "unknown feature 'wage'" in checks["check"][1]
    assert errors == [checks["check"][1]]


def test_the_notes_shown_are_every_note_about_a_constraint_and_only_those():
    # Two cases of income < 20 break the rule as they are; the note saying so quotes the rule without the word
    # "constraint", and the page showed only notes with that word, so it was never shown.
    task, cfset = breaking_as_they_are()
    at_own = [n for n in cfset.coverage_notes if n.startswith("2 of the 5 cases break 'cf.income >= 20' at their own values")]
    dropped = "3 ways out from dice-random were dropped: they broke a constraint between features (...)."
    notes = ["The model's accuracy is fine.", *cfset.coverage_notes, dropped, "5 of these 5 cases got no valid way out; they are left out of the averages."]
    assert len(at_own) == 1
    assert rules.rule_notes(notes, task) == [*at_own, dropped]
    assert rules.rule_notes(notes, make()[0]) == [dropped]  # without rules only the notes that say "constraint"
