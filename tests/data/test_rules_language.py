"""The constraint language (flex_core.data._rules): what parses, what it means by hand, and every refusal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core.data.rules import constraints_from_lines, parse_constraint

GRADES = ["D", "C", "B", "A"]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def task():
    rng = np.random.default_rng(0)
    n = 60
    frame = pd.DataFrame({
        "income": rng.integers(0, 100, n).astype(float),
        "loan amount": rng.integers(0, 500, n).astype(float),
        "grade": rng.choice(GRADES, n),
        "region": rng.choice(["north", "south", "east"], n),
        "age": rng.integers(18, 80, n).astype(float),
    })
    frame["y"] = (frame["income"] < 50).astype(int)
    return fc.make_task(frame, target="y", undesirable=1, immutable=["age"], ordinal_orders={"grade": GRADES})


def rows(task, **columns):
    """Coded rows: one column per feature, from lists (levels as text)."""
    n = len(next(iter(columns.values())))
    out = np.zeros((n, len(task.features)))
    for j, f in enumerate(task.features):
        values = columns.get(f.name, [0] * n)
        out[:, j] = [f.levels.index(v) if isinstance(v, str) else v for v in values]
    return out


def holds(task, text, cf, x):
    index = {n: j for j, n in enumerate(task.feature_names)}
    return parse_constraint(text, task.features).holds(cf, x, index).tolist()


def test_arithmetic_and_comparisons_by_hand(task):
    x = rows(task, income=[10, 10, 10], **{"loan amount": [100, 100, 100]})
    cf = rows(task, income=[30, 40, 20], **{"loan amount": [100, 130, 81]})
    # loan amount <= 3 * income + 10: 100 <= 100 yes, 130 <= 130 yes, 81 <= 70 no
    assert holds(task, 'cf."loan amount" <= 3 * cf.income + 10', cf, x) == [True, True, False]
    # the rise in income at most 25 and a division: (cf - x) / 2 < 12.5 -> 10 yes, 15 no, 5 yes
    assert holds(task, "(cf.income - x.income) / 2 < 12.5", cf, x) == [True, False, True]
    assert holds(task, "-cf.income < -25", cf, x) == [True, True, False]
    assert holds(task, "cf.income = 40 or cf.income == 20", cf, x) == [False, True, True]
    assert holds(task, "cf.income != 40 and not cf.income > 25", cf, x) == [False, False, True]
    assert holds(task, "cf.income >= 1e1 + 2.5e1", cf, x) == [False, True, False]


def test_levels_orders_membership_and_if_then(task):
    x = rows(task, grade=["C", "C", "C", "B"], region=["north", "north", "south", "east"], income=[10, 10, 10, 10])
    cf = rows(task, grade=["A", "D", "C", "A"], region=["north", "south", "south", "north"], income=[10, 30, 10, 0])
    assert holds(task, "cf.grade >= x.grade", cf, x) == [True, False, True, True]
    assert holds(task, 'cf.grade > "C"', cf, x) == [True, False, False, True]  # by the declared order D < C < B < A
    assert holds(task, "cf.region in {south, 'east'}", cf, x) == [False, True, True, False]
    assert holds(task, "cf.region not in {south}", cf, x) == [True, False, False, True]
    assert holds(task, 'cf.region == x.region or cf.region != "north"', cf, x) == [True, True, True, False]
    # if the grade rises, income must rise by 10: row 0 rises without income (no), row 3 rises with less (no)
    rule = "if cf.grade > x.grade then cf.income >= x.income + 10"
    assert holds(task, rule, cf, x) == [False, True, True, False]
    assert holds(task, "if x.age > 200 then cf.income > 1000", cf, x) == [True] * 4  # a condition never met holds


def test_missing_values_and_division_by_zero_fail_the_comparison(task):
    x = rows(task, income=[0, 10])
    cf = rows(task, income=[np.nan, 10])
    assert holds(task, "cf.income >= 0", cf, x) == [False, True]
    assert holds(task, "cf.income / x.income < 5", cf, x) == [False, True]


def test_a_parsed_constraint_names_its_features_and_keeps_its_text(task):
    rule = parse_constraint('  if cf.grade > x.grade then cf."loan amount" <= 2 * x.income  ', task.features)
    assert rule.text == 'if cf.grade > x.grade then cf."loan amount" <= 2 * x.income'
    assert rule.features == ("grade", "loan amount", "income")


@pytest.mark.parametrize(
    "text, message",
    [
        ("cf.income > 3 $", "at character 15: unexpected character '$'"),
        ("cf.height > 3", "at character 4: unknown feature 'height'; the features are: income, loan amount, grade"),
        ("income > 3", "at character 1: unknown name 'income': write cf.income"),
        ("cf.region + 1 > 2", "at character 11: '+' needs numbers, not a level"),
        ("cf.region == cf.income", "at character 11: 'region' has levels, not numbers"),
        ("cf.region > x.region", "at character 11: 'region' has no order, so '>' does not apply"),
        ('cf.grade == "Z"', "at character 13: 'grade' has no level 'Z'; its levels are: D, C, B, A"),
        ("cf.grade > 2", "'grade' has no level '2'"),
        ("cf.grade == cf.region", "at character 10: 'grade' and 'region' have different levels"),
        ("cf.age > x.age", "at character 1: 'age' is immutable, so cf.age always equals x.age"),
        ("x.income > 3", "it reads no counterfactual value (cf.NAME)"),
        ("cf.income + 1", "at character 1: the constraint needs a true/false condition (a comparison), not a number"),
        ("if cf.income > 3 cf.income < 2", "at character 18: expected 'then', found 'cf'"),
        ("if cf.income then cf.income < 2", "at character 1: the condition after 'if' needs a true/false condition"),
        ("cf.income > 3 3", "at character 15: unexpected '3' after a complete constraint"),
        ("(cf.income > 3", "at character 15: expected ')', found the end"),
        ("cf.income in {1}", "at character 11: 'in' needs a categorical or ordinal feature on its left, not a number"),
        ("cf.region in {north, mars}", "at character 22: 'region' has no level 'mars'"),
        ("cf.region in {north", "expected ',' or '}', found the end"),
        ("(cf.income > 1) == (cf.income > 2)", "'==' compares values, not conditions"),
        ('"north" == "south" and cf.income > 1', "a comparison needs cf.NAME or x.NAME on one side"),
        ("cf.income > 1 and 3", "'and' needs a true/false condition"),
        ("cf income > 1", "at character 4: expected '.' after 'cf', found 'income'"),
        ("cf. > 1", "at character 5: expected a feature name after 'cf.', found '>'"),
        ("   ", "A constraint is empty"),
    ],
)
def test_every_refusal_is_one_line_naming_the_constraint_and_the_position(task, text, message):
    with pytest.raises(fc.ConfigError) as info:
        parse_constraint(text, task.features)
    error = str(info.value)
    assert message in error and "\n" not in error
    if text.strip():
        assert error.startswith(f"Constraint {text.strip()!r}")


def test_make_task_takes_constraints_and_refuses_a_bad_one(task):
    frame = task.frame
    ok = fc.make_task(frame, target="y", undesirable=1, immutable=["age"], ordinal_orders={"grade": GRADES},
                      constraints=["cf.income <= x.income + 20", "cf.income <= x.income + 20"])
    assert ok.rule_texts == ["cf.income <= x.income + 20"]  # a repeat counts once, and the task says so
    assert "A constraint between features given more than once is kept once." in ok.notes
    assert ok.fingerprint != task.fingerprint
    assert ok.with_overrides(immutable=["age", "region"]).rule_texts == ok.rule_texts
    assert ok.with_overrides(constraints=[]).fingerprint == task.fingerprint
    with pytest.raises(fc.ConfigError, match="unknown feature 'wage'"):
        fc.make_task(frame, target="y", undesirable=1, constraints=["cf.wage > 1"])
    with pytest.raises(fc.ConfigError, match="list of expressions"):
        fc.make_task(frame, target="y", undesirable=1, constraints="cf.income > 1")
    with pytest.raises(fc.ConfigError, match="'income' is immutable"):
        ok.with_overrides(immutable=["age", "income"])


def test_a_file_of_constraints_skips_blank_lines_and_comments():
    text = '# loan rules\n\ncf.loan_amount <= 4 * cf.income_annum  # the bank\'s cap\ncf."a # b" > 1\n   # indented comment\n'
    assert constraints_from_lines(text) == ["cf.loan_amount <= 4 * cf.income_annum", 'cf."a # b" > 1']


def test_the_shipped_examples_parse_on_the_paper_data(loan_path, accidents_path):
    for name, load in (("loan", fc.data.load_loan), ("accidents", fc.data.load_accidents)):
        path = loan_path if name == "loan" else accidents_path
        texts = constraints_from_lines((REPO / "examples" / "constraints" / f"{name}.txt").read_text())
        task = load(path).with_overrides(constraints=texts)
        assert task.rule_texts == texts and len(texts) == 3
        # The shipped rules hold at every case's own values (the data never breaks them as it is).
        codes = fc.counterfactuals.encode_rows(task, task.X)
        assert task.rules_hold(codes, codes).all()
