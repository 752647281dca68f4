"""The estimate benchmark's core on a tiny built-in case: every case gets a row of positive numbers
(how close the estimates come is the benchmark's to measure, run by hand: benchmarks/bench_estimates.py)."""

from __future__ import annotations

import flex_core as fc
from benchmarks.bench_estimates import COLUMNS, Workload, cases, measure, table


def test_each_case_gets_a_row_with_the_estimate_the_run_and_their_ratio():
    task = fc.data.load_builtin("toy2d")
    model = fc.fit_model(task, model="rf", seed=0, cv_folds=0)
    workload = Workload("toy2d, random forest", task, model, shap_counts=(2,), lime_cases=((2, 100),))
    planned = cases(workload)
    assert [(c.method, len(c.rows), c.num_samples) for c in planned] == [("SHAP", 2, 0), ("LIME", 2, 100)]

    rows = measure(planned, repeats=1)

    assert [(r["method"].split(",")[0], r["rows"]) for r in rows] == [("TreeSHAP", 2), ("LIME", 2)]
    for r in rows:
        for key in ("estimate", "timing", "actual", "ratio"):
            assert r[key] > 0, (r["method"], key)
        assert r["ratio"] == r["estimate"] / r["actual"]
    lines = table(rows).splitlines()
    assert lines[0] == "| " + " | ".join(COLUMNS) + " |"
    assert len(lines) == 2 + len(rows)
    assert all(line.count("|") == len(COLUMNS) + 1 for line in lines)
