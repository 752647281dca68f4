"""The constraints benchmark's independent re-check (benchmarks/bench_constraints.py --violations, run by hand):
the loan rules restated by hand count what the parsed rules count, on rows checked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd

import flex_core as fc
from benchmarks.bench_constraints import LOAN_RULES, RULES_FILE, violations
from flex_core.data.rules import constraints_from_lines


def test_the_hand_restatement_is_the_shipped_file():
    assert constraints_from_lines(RULES_FILE.read_text()) == list(LOAN_RULES)


def test_each_rule_is_counted_by_both_checks_on_hand_checked_rows():
    # Factual: amount 300, income 100, term 10. Row 0 holds all three rules (400 = 4 × 100; a larger loan with the
    # same term; income 100 <= 150); row 1 lends 401 > 4 × 100; row 2 lends 500 > 400 with a shorter term 8 < 10;
    # row 3 keeps the amount (so any term) and raises income to 151 > 1.5 × 100, but 300 <= 4 × 151.
    cf = pd.DataFrame({"loan_amount": [400.0, 401, 500, 300], "income_annum": [100.0, 100, 100, 151],
                       "loan_term": [10.0, 10, 8, 2]})
    x = pd.DataFrame({"loan_amount": [300.0] * 4, "income_annum": [100.0] * 4, "loan_term": [10.0] * 4})
    frame = pd.concat([cf, x], ignore_index=True).assign(y=[0, 1] * 4)
    task = fc.make_task(frame, target="y", undesirable=1, constraints=list(LOAN_RULES),
                        kinds=dict.fromkeys(cf.columns, "continuous"))
    counts = violations(task, fc.counterfactuals.encode_rows(task, cf), fc.counterfactuals.encode_rows(task, x))
    expected = dict(zip(LOAN_RULES, [2, 1, 1]))
    assert counts["parsed"] == expected and counts["by_hand"] == expected
    assert counts["library"] == 3 and counts["any"] == 3
    np.testing.assert_array_equal(task.rule_breaks(fc.counterfactuals.encode_rows(task, cf),
                                                   fc.counterfactuals.encode_rows(task, x)).sum(axis=1), [0, 1, 2, 1])
