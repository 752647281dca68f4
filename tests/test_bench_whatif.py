"""The what-if benchmark's workload: every case is one valid edit that leaves the factual predicted undesirable
(the timing itself is the benchmark, run by hand: benchmarks/bench_whatif.py)."""

from __future__ import annotations

import flex_core as fc
from benchmarks.bench_whatif import edited_cases
from flex_core.counterfactuals._whatif import check_case


def test_each_case_edits_one_mutable_feature_within_its_range_and_stays_undesirable(synthetic_task, synthetic_model):
    task, model = synthetic_task, synthetic_model
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(task, model), 12, seed=0)
    cases = edited_cases(task, model, rows)
    assert len(cases) >= 10 and {row for row, _ in cases} <= {int(r) for r in rows}
    for row, edits in cases:
        assert len(edits) == 1
        (name, value), = edits.items()
        feature = task.feature(name)
        assert not feature.immutable
        if feature.is_continuous:
            assert task.frame[name].min() <= value <= task.frame[name].max()
            assert value != task.frame.loc[row, name]
            assert not feature.integer or float(value).is_integer()
        else:
            assert value in feature.levels and value != task.frame.loc[row, name]
        # the checked case, as what_if reads it, is predicted undesirable: its counterfactuals are searched
        case, edited = check_case(task, edits, row=row)
        assert edited == (name,) and model.predict_undesirable(case)[0] == 1

