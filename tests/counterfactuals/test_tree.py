"""The ``tree`` generator (issue 33): exact, minimal and complete, checked against the model's own predict_proba.

- every returned counterfactual is valid by predict_proba and the stated rule, and keeps the constraints;
- the profiles equal predict_proba on every cell;
- no continuous change can move to a split threshold closer to the factual and stay valid;
- an independent scan of the forest's split cells (predict_proba at every cell, integers one by one)
  finds no one- or two-feature minimal counterfactual the generator missed.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier

import flex_core as fc
from flex_core.counterfactuals import _tree, _treeprofile, _treeslow, decode_rows, encode_rows
from flex_core.counterfactuals._treeform import MAX_LEVELS, tree_form
from flex_core.counterfactuals._treegrid import grids, near_walk, settle_singles, single_grid_profiles
from flex_core.counterfactuals._treeprofile import leaf_boxes
from flex_core.counterfactuals._validity import Validity
from tests.tree_checks import profiles_agree


@pytest.fixture(scope="module")
def synthetic_task():
    """Trade-offs everywhere: rejected unless x1 + x2 + n/50 is large enough (red helps); ``region`` is immutable."""
    rng = np.random.default_rng(0)
    n = 1500
    frame = pd.DataFrame({"x1": rng.uniform(0, 1, n).round(3), "x2": rng.uniform(0, 1, n).round(3),
                          "n": rng.integers(0, 31, n), "colour": rng.choice(["red", "green", "blue"], n),
                          "region": rng.choice(["north", "south"], n)})
    score = frame.x1 + frame.x2 + frame.n / 50 + (frame.colour == "red") * 0.3 + rng.normal(0, 0.1, n)
    frame["outcome"] = np.where(score > 1.6, "accepted", "rejected")
    return fc.make_task(frame, target="outcome", undesirable="rejected", kinds={"n": "continuous"}, immutable=["region"])


@pytest.fixture(scope="module")
def forest(synthetic_task):
    """A small forest FLEX's label pipeline feeds (thresholds few enough to scan every split cell)."""
    task = synthetic_task
    pipeline = fc.models.build_pipeline(task, model="rf", encoding="label")
    pipeline.set_params(classify=RandomForestClassifier(20, max_depth=6, random_state=0))
    pipeline.fit(task.X, task.y)
    return fc.FittedModel.from_estimator(pipeline, task, undesired=1, fitted_on="task")


@pytest.fixture(scope="module")
def queries(synthetic_task, forest):
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(synthetic_task, forest), 8, seed=0)
    return synthetic_task.frame.loc[rows, synthetic_task.feature_names]


def _p(model, task, codes):
    return model.predict_proba(decode_rows(task, codes))[:, 1]


def _spans(task, model):
    train = encode_rows(task, task.frame.loc[model.train_index, task.feature_names])
    return np.array([np.nanmax(train[:, j]) - np.nanmin(train[:, j]) if f.is_continuous else np.nan
                     for j, f in enumerate(task.features)])


def test_registered_as_the_default_and_says_what_ran(synthetic_task, forest, queries):
    assert fc.counterfactuals.DEFAULT_GENERATOR == "tree"
    generator = fc.counterfactuals.make_generator("tree")
    result = generator.generate(forest, synthetic_task, queries, n_cf=5)
    assert result.generator == "tree"
    assert result.coverage()["tree"]["ran"] == "tree" and "exactly" in result.coverage()["tree"]["why"]
    lr = fc.fit_model(synthetic_task, model="lr", cv_folds=0)
    fallback = generator.generate(lr, synthetic_task, queries.iloc[:3], n_cf=3)
    assert fallback.coverage()["tree"]["ran"] == "batch" and "does not read LogisticRegression" in fallback.coverage()["tree"]["why"]
    # Before anything runs, the generator and the explainer say which generator serves the model (the app's strip).
    assert generator.fallback_for(forest, synthetic_task) is None and generator.fallback_for(lr, synthetic_task) == "batch"
    assert fc.FlexExplainer.from_task(synthetic_task, lr, generator="tree").generator_used == "batch"
    assert fc.FlexExplainer.from_task(synthetic_task, forest, generator="tree").generator_used == "tree"
    assert fc.FlexExplainer.from_task(synthetic_task, lr, generator="batch").generator_used == "batch"


@pytest.mark.parametrize("margin,radius", [(0.15, 0.01), (0.0, 0.0)])
def test_every_counterfactual_is_valid_by_predict_proba_and_keeps_constraints(synthetic_task, forest, queries, margin, radius):
    task = synthetic_task
    result = _tree.TreeGenerator(margin=margin, radius=radius).generate(forest, task, queries, n_cf=10)
    q, c = np.nonzero(result.found)
    assert len(q) > 0
    rule = Validity(margin, radius).on(task, _spans(task, forest))
    assert rule.check(lambda codes: _p(forest, task, codes), result.counterfactuals[q, c], result.factuals[q]).all()
    immutable = [j for j, f in enumerate(task.features) if f.immutable]
    np.testing.assert_array_equal(result.counterfactuals[q, c][:, immutable], result.factuals[q][:, immutable])
    assert (result.valid == result.found).all()


def test_profiles_equal_predict_proba_on_every_cell(synthetic_task, forest, queries):
    task = synthetic_task
    factuals = encode_rows(task, queries)
    factuals[::3, 0] = np.nan  # a missing value follows each split's missing direction
    profiles_agree(forest, task, factuals)


def _thresholds(model, task, j):
    """Every threshold the forest's own trees use on feature j (read from scikit-learn, not the tree form)."""
    encoder, classifier = model.pipeline.steps[0][1], model.pipeline.steps[1][1]
    column = list(encoder.get_feature_names_out()).index(task.features[j].name)
    return np.unique(np.concatenate([t.tree_.threshold[t.tree_.feature == column] for t in classifier.estimators_]))


def test_no_change_can_stop_at_a_closer_threshold(synthetic_task, forest, queries):
    task = synthetic_task
    result = fc.counterfactuals.make_generator("tree").generate(forest, task, queries, n_cf=10)
    rule = Validity().on(task, _spans(task, forest))
    checked = 0
    for q, c in zip(*np.nonzero(result.found)):
        factual, cf = result.factuals[q], result.counterfactuals[q, c]
        for j in np.flatnonzero((cf != factual) & np.array([f.is_continuous for f in task.features])):
            t = _thresholds(forest, task, j)
            side = np.sign(cf[j] - factual[j])
            between = t[(t - factual[j]) * side > 0]
            between = between[(cf[j] - between) * side > 0]
            # just past each threshold, and past it by the neighbourhood step, but still short of the change
            points = np.r_[np.float32(between).astype(float) + side * 1e-4, between + side * (rule.steps[j] + 1e-4)]
            if task.features[j].integer:
                points = np.ceil(points) if side > 0 else np.floor(points)
            points = points[(cf[j] - points) * side > 0]
            if not len(points):
                continue
            rows = np.repeat(cf[None], len(points), axis=0)
            rows[:, j] = points
            assert not rule.check(lambda codes: _p(forest, task, codes), rows, np.repeat(factual[None], len(rows), 0)).any()
            checked += len(points)
    assert checked > 0


def _scan_values(model, task, j, factual):
    """Every value worth trying for feature j: each level, each whole number, or a point inside each split cell."""
    f = task.features[j]
    if not f.is_continuous:
        return np.array([v for v in range(len(f.levels)) if v != factual[j]], dtype=float)
    low, high = task.frame[f.name].min(), task.frame[f.name].max()
    if f.integer:
        values = np.arange(np.floor(low), np.ceil(high) + 1)
    else:
        t = _thresholds(model, task, j)
        t = t[(t >= low) & (t <= high)]
        values = np.r_[(t[:-1] + t[1:]) / 2, low, high]
    return values[values != factual[j]]


def _cell(model, task, j, value):
    f = task.features[j]
    if not f.is_continuous or f.integer:
        return value
    return np.searchsorted(_thresholds(model, task, j), np.float32(value), side="left")


def test_an_independent_scan_of_split_cells_finds_nothing_the_generator_missed(synthetic_task, forest, queries, monkeypatch):
    """Paper neighbourhood (radius 0) with the margin; every minimal one- and two-feature change, up to n_cf = 500."""
    task = synthetic_task
    # only the strict rule: a trade-off that reduces a one-feature change at all is a trade-off here
    monkeypatch.setattr(_tree, "not_alternatives", lambda rows, factual, spans, ordered: _tree_not_alternatives(rows, factual, spans, ordered))
    result = _tree.TreeGenerator(radius=0.0).generate(forest, task, queries, n_cf=500)
    threshold = 0.35
    mutable = [j for j, f in enumerate(task.features) if not f.immutable]
    seen = {"singles": 0, "pairs": 0}
    for q in range(len(queries)):
        factual = result.factuals[q]
        got = set()
        for cf in result.counterfactuals[q][result.found[q]]:
            changed = tuple(np.flatnonzero(cf != factual))
            got.add(tuple((j, _cell(forest, task, j, cf[j])) for j in changed))
        singles = {}
        for j in mutable:
            values = _scan_values(forest, task, j, factual)
            rows = np.repeat(factual[None], len(values), axis=0)
            rows[:, j] = values
            ok = _p(forest, task, rows) < threshold
            for side_values, side in _sides(task, j, values, ok, factual):
                singles[(j, side)] = side_values
                assert ((j, _cell(forest, task, j, side_values)),) in got
                seen["singles"] += 1
        for a_pos, a in enumerate(mutable):
            for b in mutable[a_pos + 1:]:
                for expected in _pareto_scan(forest, task, factual, a, b, singles, threshold):
                    assert expected in got, (q, expected)
                    seen["pairs"] += 1
    assert seen["singles"] >= len(queries) and seen["pairs"] >= len(queries), seen  # the scan did find some


def _tree_not_alternatives(rows, factual, spans, ordered):
    from flex_core.counterfactuals._alternatives import not_alternatives

    return not_alternatives(rows, factual, spans, ordered, tolerance=0.0)


def _sides(task, j, values, ok, factual):
    """The nearest valid value on each side (numbers, ordinal), or every valid level (categorical)."""
    f = task.features[j]
    if not f.is_continuous and not f.is_ordinal:
        return [(v, 2 + v) for v in values[ok]]
    out = []
    for side in (1, -1):
        on = ok & (np.sign(values - factual[j]) == side)
        if on.any():
            out.append((values[on][np.argmin(np.abs(values[on] - factual[j]))], side))
    return out


def _side(task, j, value, factual):
    f = task.features[j]
    return 2 + value if not f.is_continuous and not f.is_ordinal else np.sign(value - factual[j])


def _pareto_scan(model, task, factual, a, b, singles, threshold, scan=None):
    scan = scan or _scan_values
    va, vb = scan(model, task, a, factual), scan(model, task, b, factual)
    if not len(va) or not len(vb):  # nothing permitted on an axis
        return []
    keep_a = np.array([abs(v - factual[a]) < abs(singles.get((a, _side(task, a, v, factual)), np.inf) - factual[a])
                       if (a, _side(task, a, v, factual)) in singles or task.features[a].is_continuous or task.features[a].is_ordinal
                       else True for v in va])
    keep_b = np.array([abs(v - factual[b]) < abs(singles.get((b, _side(task, b, v, factual)), np.inf) - factual[b])
                       if (b, _side(task, b, v, factual)) in singles or task.features[b].is_continuous or task.features[b].is_ordinal
                       else True for v in vb])
    va, vb = va[keep_a], vb[keep_b]
    if not len(va) or not len(vb):
        return []
    A, B = np.meshgrid(va, vb, indexing="ij")
    rows = np.repeat(factual[None], A.size, axis=0)
    rows[:, a], rows[:, b] = A.ravel(), B.ravel()
    valid = (_p(model, task, rows) < threshold).reshape(A.shape)
    out = []
    for s_a in np.unique([_side(task, a, v, factual) for v in va]):
        r = np.flatnonzero([_side(task, a, v, factual) == s_a for v in va])
        r = r[np.argsort(np.abs(va[r] - factual[a]), kind="stable")]
        for s_b in np.unique([_side(task, b, v, factual) for v in vb]):
            c = np.flatnonzero([_side(task, b, v, factual) == s_b for v in vb])
            c = c[np.argsort(np.abs(vb[c] - factual[b]), kind="stable")]
            grid = valid[np.ix_(r, c)]
            best = len(c)
            for i in range(len(r)):
                first = int(np.argmax(grid[i])) if grid[i].any() else len(c)
                if first < best:
                    best = first
                    out.append(((a, _cell(model, task, a, va[r[i]])), (b, _cell(model, task, b, vb[c[first]]))))
    return out


def test_a_merged_profile_value_next_to_the_threshold_is_rescored_in_the_models_order(synthetic_task, forest, queries):
    # A difference array sums leaves in another order: a cell the forest scores 0.35 may come out 0.35 - 1 ulp,
    # which would pass the rule (accidents: 6 of 1,994 counterfactuals before this). Such cells are rescored.
    p = np.array([np.nextafter(0.35, 0.0), 0.2, 0.5])

    class Form:  # the model's own order of summation: 0.35 exactly
        float32 = False

        def __call__(self, rows):
            return np.full(len(rows), 0.35)

    settled = _treeslow.settle_all(Form(), [(p, lambda cells: np.zeros((len(cells), 1)), None)], 0.35)[0]
    assert settled[0] == 0.35 and settled[1] == 0.2 and settled[2] == 0.5
    # the one-feature grid profiles: a cell within the window and not exact is rescored, an exact one is not
    task = synthetic_task
    form = tree_form(forest, task)
    is_number = np.array([f.is_continuous for f in task.features])
    levels = np.array([0 if f.is_continuous else len(f.levels) for f in task.features])
    vary = np.ones(len(task.features), dtype=bool)
    factuals = encode_rows(task, queries)
    g = grids(form, is_number, levels)
    prof = single_grid_profiles(form, g, factuals, vary, near_walk(form, g, factuals, vary, 1))
    prof.p[0, 0], prof.exact[0, 0] = np.nextafter(0.35, 0.0), False
    prof.p[0, 1], prof.exact[0, 1] = np.nextafter(0.35, 0.0), True
    settle_singles(form, g, prof, factuals, vary, 0.35, score=lambda rows: np.full(len(rows), 0.35))
    assert prof.p[0, 0] == 0.35 and prof.p[0, 1] == np.nextafter(0.35, 0.0)


def test_chunks_of_factuals_give_the_same_counterfactuals(synthetic_task, forest, queries, monkeypatch):
    whole = _tree.TreeGenerator().generate(forest, synthetic_task, queries, n_cf=10)
    monkeypatch.setattr(_tree, "CHUNK_QUERIES", 3)
    seen = []
    chunked = _tree.TreeGenerator().generate(forest, synthetic_task, queries, n_cf=10, progress=lambda d, t: seen.append(d))
    np.testing.assert_array_equal(chunked.counterfactuals, whole.counterfactuals)
    assert seen == [3, 6, 8]


def test_threads_give_the_same_counterfactuals_and_counts_as_one(synthetic_task, forest, queries, monkeypatch):
    """n_jobs=2 reads chunks in two threads sharing the form: the same ways out, notes and constraint rejections,
    progress in the cases' order. With a cap on how far x1 may rise, so every chunk's rejections are added up."""
    task = synthetic_task.with_overrides(constraints=["cf.x1 <= x.x1 + 0.1"])
    one = _tree.TreeGenerator().generate(forest, task, queries, n_cf=10)
    monkeypatch.setattr(_tree, "CHUNK_QUERIES", 3)  # three chunks of 3, 3 and 2 for two threads
    seen = []
    two = _tree.TreeGenerator(n_jobs=2).generate(forest, task, queries, n_cf=10, progress=lambda d, t: seen.append(d))
    np.testing.assert_array_equal(two.counterfactuals, one.counterfactuals)
    np.testing.assert_array_equal(two.found, one.found)
    assert two.notes == one.notes and seen == [3, 6, 8]
    rejected = [c["rejected_while_searching"] for c in two.coverage()["constraints_between"]["constraints"]]
    assert rejected == [c["rejected_while_searching"] for c in one.coverage()["constraints_between"]["constraints"]]
    assert rejected[0] > 0
    assert {k: v for k, v in two.config["tree"].items()} == one.config["tree"]


def test_leaf_boxes_hold_exactly_the_rows_each_leaf_reaches(synthetic_task, forest):
    """A row is inside a leaf's box iff the tree sends it to that leaf (one leaf per tree), with missing values too;
    the compiled walk with no change finds exactly that leaf."""
    form = tree_form(forest, synthetic_task)
    codes = encode_rows(synthetic_task, synthetic_task.frame[synthetic_task.feature_names].iloc[:40])
    codes[::7, 0] = np.nan
    boxes = leaf_boxes(form, codes.shape[1])
    q, leaf, first, second = _brute_near(boxes, codes)
    inside = first < 0
    reached = np.zeros((len(codes), len(form.feature)), dtype=bool)
    reached[q[inside], boxes.leaf[leaf[inside]]] = True
    expected = np.zeros_like(reached)
    expected[np.arange(len(codes))[:, None], form.leaves(codes)] = True
    assert (reached == expected).all()
    assert reached.sum(axis=1).tolist() == [form.n_trees] * len(codes)
    task = synthetic_task
    g = grids(form, np.array([f.is_continuous for f in task.features]),
              np.array([0 if f.is_continuous else len(f.levels) for f in task.features]))
    wq, wbox, wa, _ = near_walk(form, g, codes, np.ones(codes.shape[1], dtype=bool), 0)
    walked = np.zeros_like(reached)
    walked[wq, boxes.leaf[wbox]] = True
    assert (walked == expected).all() and (wa < 0).all()


def _brute_near(boxes, x):
    """Every (factual, box, first, second feature outside) with at most two features outside the box: all leaves
    against all factuals, feature by feature (the independent reference for the compiled walk)."""
    full = (1 << MAX_LEVELS) - 1
    outside = np.zeros((x.shape[1], len(x), len(boxes.leaf)), dtype=bool)
    for j in range(x.shape[1]):
        col = x[:, j]
        missing = np.isnan(col)
        inside = (col[:, None] > boxes.lo[:, j]) & (col[:, None] <= boxes.hi[:, j])
        level = np.where(missing | (col < 0) | (col > MAX_LEVELS), 0, np.nan_to_num(col)).astype(np.int64)
        has_levels = boxes.mask[:, j] != full
        in_mask = ((boxes.mask[None, :, j] >> level[:, None]) & 1) == 1
        inside &= np.where(has_levels[None, :], in_mask, True)
        inside[missing] = boxes.nan_ok[:, j]
        outside[j] = ~inside
    count = outside.sum(axis=0)
    q, leaf = np.nonzero(count <= 2)
    v = outside[:, q, leaf].T
    c = count[q, leaf]
    first = np.where(c >= 1, np.argmax(v, axis=1), -1)
    second = np.where(c == 2, x.shape[1] - 1 - np.argmax(v[:, ::-1], axis=1), -1)
    return q, leaf, first, second


def test_the_walk_finds_every_leaf_two_changes_away_and_no_other(synthetic_task, forest, queries):
    """The compiled walk's leaves with at most two changed features equal the brute-force box check's (empty boxes
    on a changed feature left out: no value of it reaches them)."""
    task = synthetic_task
    form = tree_form(forest, task)
    codes = encode_rows(task, queries)
    codes[1, 1] = np.nan
    g = grids(form, np.array([f.is_continuous for f in task.features]),
              np.array([0 if f.is_continuous else len(f.levels) for f in task.features]))
    walked = set(zip(*(a.tolist() for a in near_walk(form, g, codes, np.ones(codes.shape[1], dtype=bool), 2))))
    q, box, a, b = _brute_near(g.boxes, codes)
    empty = g.boxes.empty
    keep = ~((a >= 0) & empty[box, np.maximum(a, 0)]) & ~((b >= 0) & empty[box, np.maximum(b, 0)])
    expected = set(zip(q[keep].tolist(), box[keep].tolist(), a[keep].tolist(), b[keep].tolist()))
    assert walked == expected and len(expected) > 10 * len(codes) * form.n_trees / 10


def test_the_pair_bound_is_each_trees_lowest_reachable_leaf_summed_and_never_above_the_forest(synthetic_task, forest,
                                                                                               queries):
    """lowest_pair_totals, by hand from the brute-force leaves (per tree the lowest score of a leaf reached changing
    nothing, a, b or both), and as a bound: P at random values of the pair never lies below it."""
    task = synthetic_task
    form = tree_form(forest, task)
    codes = encode_rows(task, queries)
    n_f = codes.shape[1]
    g = grids(form, np.array([f.is_continuous for f in task.features]),
              np.array([0 if f.is_continuous else len(f.levels) for f in task.features]))
    q, box, a, b = _brute_near(g.boxes, codes)
    keep = ~((a >= 0) & g.boxes.empty[box, np.maximum(a, 0)]) & ~((b >= 0) & g.boxes.empty[box, np.maximum(b, 0)])
    score = form.value[:, 1]
    totals = _treeprofile.lowest_pair_totals(form, codes, score, near_walk(form, g, codes, np.ones(n_f, dtype=bool), 2))
    tree = np.searchsorted(form.roots, g.boxes.leaf, side="right") - 1
    lowest = np.full((len(codes), n_f, n_f, form.n_trees), np.inf)
    for qq, bb, aa, cc in zip(q[keep], box[keep], a[keep], b[keep]):
        v = score[g.boxes.leaf[bb]]
        for x in range(n_f):
            for y in range(n_f):
                if {aa, cc} - {-1} <= {x, y}:
                    lowest[qq, x, y, tree[bb]] = min(lowest[qq, x, y, tree[bb]], v)
    np.testing.assert_allclose(totals, lowest.sum(axis=3), rtol=0, atol=1e-12)
    rng = np.random.default_rng(0)
    lows = task.frame[task.feature_names]
    for x, y in [(0, 1), (0, 2), (1, 2)]:
        rows = np.repeat(codes, 50, axis=0)
        for j in (x, y):
            column = encode_rows(task, lows.sample(len(rows), replace=True, random_state=int(rng.integers(1 << 30))))[:, j]
            rows[:, j] = column
        p = forest.predict_proba(decode_rows(task, rows))[:, 1]
        bound = np.repeat(totals[:, x, y] / form.n_trees, 50)
        assert (p >= bound - 1e-12).all()


def test_the_compiled_pair_search_equals_the_numpy_profiles(synthetic_task, forest, queries, monkeypatch):
    """Two-feature trade-offs read by the compiled search equal those of the numpy pair profiles, group by group."""
    compiled = _tree.TreeGenerator().generate(forest, synthetic_task, queries, n_cf=10)
    monkeypatch.setattr(_tree, "_compiled", lambda form: False)
    numpy_read = _tree.TreeGenerator().generate(forest, synthetic_task, queries, n_cf=10)
    np.testing.assert_array_equal(compiled.counterfactuals, numpy_read.counterfactuals)
    q, c = np.nonzero(compiled.found)
    assert ((compiled.counterfactuals[q, c] != compiled.factuals[q]).sum(axis=1) == 2).any()


def test_a_rule_coded_as_a_model_goes_to_batch_and_an_unsplit_feature_has_no_single_change():
    """A model that is no tree ensemble (a planted rule, string classes) is handed to ``batch`` with the reason,
    not an error; a number feature no tree splits on gets no one-feature candidate (and no error)."""
    from tests.regions.planted_regions import red_region_task

    task, model = red_region_task(n=200)
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(task, model), 5, seed=0)
    result = _tree.TreeGenerator().generate(model, task, task.frame.loc[rows, task.feature_names], n_cf=3)
    assert result.coverage()["tree"]["ran"] == "batch" and "does not read" in result.coverage()["tree"]["why"]
    frame = task.frame.copy()
    frame["constant"] = 5.0  # never split on
    small = fc.make_task(frame.drop(columns=["district"]), target=task.target, undesirable=task.undesirable,
                         immutable=["colour"])
    forest = fc.fit_model(small, model="rf", cv_folds=0, seed=0)
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(small, forest), 5, seed=0)
    result = _tree.TreeGenerator().generate(forest, small, small.frame.loc[rows, small.feature_names], n_cf=3)
    assert result.coverage()["tree"]["ran"] == "tree" and result.found.any()


def test_constraints_between_features_are_held_while_reading_single_changes(synthetic_task, forest, queries):
    """A rule capping how far x1 may rise: the tree generator passes over the x1 values that break it (the next
    valid value that holds, if any, is taken), counts what the rule rejected, and returns no breaker."""
    task = synthetic_task.with_overrides(constraints=["cf.x1 <= x.x1 + 0.1"])
    free = _tree.TreeGenerator().generate(forest, synthetic_task, queries, n_cf=10)
    held = _tree.TreeGenerator().generate(forest, task, queries, n_cf=10)
    x1 = task.feature_names.index("x1")

    def x1_rises(result):
        q, c = np.nonzero(result.found)
        return result.counterfactuals[q, c][:, x1] - result.factuals[q][:, x1]

    assert (x1_rises(free) > 0.1).any()  # without the rule some ways out raise x1 by more
    assert (x1_rises(held) <= 0.1 + 1e-12).all()
    report = held.coverage()["constraints_between"]["constraints"]
    assert report[0]["rejected_while_searching"] > 0 and held.found.any()


def test_ties_never_fall_to_the_files_column_order():
    """Undesirable only at a = a0 and b = b0: every other level of either flips the forest, 11 ways each, all changes
    of size 1. With n_cf = 10 the ways out must come from both features alike, whichever column comes first."""
    rng = np.random.default_rng(0)
    n = 4000
    a = rng.choice([f"a{i}" for i in range(12)], n, p=[0.45] + [0.05] * 11)
    b = rng.choice([f"b{i}" for i in range(12)], n, p=[0.45] + [0.05] * 11)
    frame = pd.DataFrame({"a": a, "b": b, "z": rng.uniform(0, 1, n).round(2)})
    frame["y"] = np.where((frame.a == "a0") & (frame.b == "b0"), "bad", "good")
    shares = {}
    for columns in (["a", "b", "z", "y"], ["b", "a", "z", "y"]):
        task = fc.make_task(frame[columns], target="y", undesirable="bad", immutable=["z"])
        model = fc.fit_model(task, model="rf", cv_folds=0, seed=0)
        rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(task, model), 10, seed=0)
        result = _tree.TreeGenerator().generate(model, task, task.frame.loc[rows, task.feature_names], n_cf=10)
        q, c = np.nonzero(result.found)
        changed = result.counterfactuals[q, c] != result.factuals[q]
        counts = {name: int(changed[:, task.feature_names.index(name)].sum()) for name in ("a", "b")}
        assert abs(counts["a"] - counts["b"]) <= len(rows), counts  # at most one apart per case
        shares[tuple(columns)] = counts
    assert shares[("a", "b", "z", "y")] == shares[("b", "a", "z", "y")]


@pytest.mark.slow  # two new processes: about 15 s here
def test_the_first_compile_is_announced_only_when_numbas_cache_lacks_the_loops(tmp_path):
    """The app's progress message says the loops are compiled first when numba's cache does not hold them (an empty
    cache folder: a fresh install), says nothing once they are cached or loaded, is hedged when the cache cannot be
    read, and is never given for the batch generator."""
    import subprocess
    import sys

    script = (
        "import flex_core as fc\n"
        "from flex_core.counterfactuals import _treecache, _treekernel\n"
        "tree, batch = fc.counterfactuals.make_generator('tree'), fc.counterfactuals.make_generator('batch')\n"
        "print(_treecache.cached()); print(tree.first_call_note); print(batch.first_call_note)\n"
    )
    empty = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}  # numba's cache goes there instead of beside the source
    printed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                             env=empty).stdout.splitlines()
    assert printed == ["False", "The tree generator's loops are compiled first, once after an install (about half a "
                       "minute).", "None"]
    # With the cache beside the source, after a generation that needed pairs (every loop called from Python ran):
    # cached, and loaded in this process.
    generate = (
        "task = fc.data.load_builtin('synthetic-regional'); model = fc.fit_model(task, model='rf', seed=0, cv_folds=0)\n"
        "rows = fc.counterfactuals.factual_rows(task, model)[:30]\n"
        "tree.generate(model, task, task.frame.loc[rows, task.feature_names], n_cf=10, seed=0)\n"
        "print(_treecache.cached())\n"
        "_treekernel.pair_search._cache._cache_file._load_index = None  # a numba whose cache index reads otherwise\n"
        "print(_treecache.cached())\n"
    )
    after = script.replace("print(_treecache.cached()); ", generate)
    printed = subprocess.run([sys.executable, "-c", after], capture_output=True, text=True, check=True).stdout.splitlines()
    assert printed == ["True", "None", "None", "None"]  # cached; cannot tell; loaded in this process: no note
    with pytest.MonkeyPatch.context() as patch:  # not loaded, cache unreadable: the hedged sentence
        patch.setattr(_tree, "loaded", lambda: False)
        patch.setattr(_tree, "cached", lambda: None)
        assert _tree.TreeGenerator().first_call_note.startswith("If this is the first run after an install")
        patch.setattr(_tree, "cached", lambda: True)
        assert _tree.TreeGenerator().first_call_note is None


@pytest.fixture(scope="module")
def constrained_task():
    """Every per-feature constraint at once on a learned forest with label noise: x1 may only rise, x2 and n stay in a
    range, colour may only become green or red, the ordinal grade (C < B < A) may only rise; region is immutable,
    ``noise`` is pure noise."""
    rng = np.random.default_rng(1)
    n = 1500
    frame = pd.DataFrame({"x1": rng.uniform(0, 1, n).round(3), "x2": rng.uniform(0, 1, n).round(3),
                          "n": rng.integers(0, 31, n), "colour": rng.choice(["red", "green", "blue"], n),
                          "grade": rng.choice(["C", "B", "A"], n), "region": rng.choice(["north", "south"], n),
                          "noise": rng.uniform(0, 1, n).round(3)})
    score = (frame.x1 + frame.x2 + frame.n / 50 + (frame.colour == "red") * 0.3
             + frame.grade.map({"C": 0.0, "B": 0.2, "A": 0.4}) + rng.normal(0, 0.1, n))
    frame["outcome"] = np.where(score > 1.8, "accepted", "rejected")
    return fc.make_task(frame, target="outcome", undesirable="rejected", kinds={"n": "continuous"},
                        ordinal_orders={"grade": ["C", "B", "A"]}, immutable=["region"],
                        monotone={"x1": "increase", "grade": "increase"}, bounds={"x2": (None, 0.8), "n": (5, 25)},
                        allowed={"colour": ["green", "red"]})


def _permitted_scan(model, task, j, factual):
    """:func:`_scan_values` kept to what the feature's constraints permit (its range's ends added as values to try)."""
    f = task.features[j]
    values = _scan_values(model, task, j, factual)
    if f.is_continuous and f.bounds is not None:
        values = np.unique(np.r_[values, [v for v in f.bounds if v is not None]])
        values = values[values != factual[j]]
    keep = np.ones(len(values), dtype=bool)
    if f.direction is not None:
        keep &= (values > factual[j]) if f.direction == "increase" else (values < factual[j])
    if f.is_continuous and f.bounds is not None:
        low, high = f.bounds
        keep &= (values >= (-np.inf if low is None else low)) & (values <= (np.inf if high is None else high))
    if f.allowed is not None:
        keep &= np.isin(values, [list(f.levels).index(level) for level in f.allowed])
    return values[keep]


def test_every_constraint_clips_the_axes_and_nothing_permitted_is_missed(constrained_task, monkeypatch):
    """Directions, ranges, allowed levels, an ordinal order and an immutable feature on a forest learned from noisy
    data: every counterfactual keeps them, and a scan of the permitted split cells finds no minimal one- or
    two-feature way out the generator missed (radius 0, n_cf 500)."""
    task = constrained_task
    pipeline = fc.models.build_pipeline(task, model="rf", encoding="label")
    pipeline.set_params(classify=RandomForestClassifier(20, max_depth=6, random_state=0))
    pipeline.fit(task.X, task.y)
    model = fc.FittedModel.from_estimator(pipeline, task, undesired=1, fitted_on="task")
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(task, model), 10, seed=0)
    queries = task.frame.loc[rows, task.feature_names]
    monkeypatch.setattr(_tree, "not_alternatives", _tree_not_alternatives)
    result = _tree.TreeGenerator(radius=0.0).generate(model, task, queries, n_cf=500)
    names = [f.name for f in task.features]
    q, c = np.nonzero(result.found)
    cfs, factuals = result.counterfactuals[q, c], result.factuals[q]
    assert len(q) and (_p(model, task, cfs) < 0.35).all()
    moved = cfs != factuals
    x1, x2, n_, colour, grade, region = (names.index(k) for k in ("x1", "x2", "n", "colour", "grade", "region"))
    assert not moved[:, region].any()
    assert (cfs[moved[:, x1], x1] > factuals[moved[:, x1], x1]).all()
    assert (cfs[moved[:, grade], grade] > factuals[moved[:, grade], grade]).all()
    assert (cfs[moved[:, x2], x2] <= 0.8).all()
    assert ((cfs[moved[:, n_], n_] >= 5) & (cfs[moved[:, n_], n_] <= 25)).all()
    levels = list(task.features[colour].levels)
    assert np.isin(cfs[moved[:, colour], colour], [levels.index("green"), levels.index("red")]).all()
    mutable = [j for j, f in enumerate(task.features) if not f.immutable]
    seen = {"singles": 0, "pairs": 0, "forbidden": 0}
    for i in range(len(queries)):
        factual = result.factuals[i]
        got = {tuple((j, _cell(model, task, j, cf[j])) for j in np.flatnonzero(cf != factual))
               for cf in result.counterfactuals[i][result.found[i]]}
        singles = {}
        for j in mutable:
            values, every = _permitted_scan(model, task, j, factual), _scan_values(model, task, j, factual)
            scanned = np.repeat(factual[None], len(every), axis=0)
            scanned[:, j] = every
            seen["forbidden"] += int(((_p(model, task, scanned) < 0.35) & ~np.isin(every, values)).sum())
            if not len(values):
                continue
            scanned = np.repeat(factual[None], len(values), axis=0)
            scanned[:, j] = values
            for side_values, side in _sides(task, j, values, _p(model, task, scanned) < 0.35, factual):
                singles[(j, side)] = side_values
                assert ((j, _cell(model, task, j, side_values)),) in got, (i, names[j], side_values)
                seen["singles"] += 1
        for a_pos, a in enumerate(mutable):
            for b in mutable[a_pos + 1:]:
                for expected in _pareto_scan(model, task, factual, a, b, singles, 0.35, scan=_permitted_scan):
                    assert expected in got, (i, expected)
                    seen["pairs"] += 1
    # the scan did find some, and the constraints bite: valid one-feature changes they forbid exist
    assert seen["singles"] >= 5 and seen["pairs"] >= 5 * len(queries) and seen["forbidden"] >= 10, seen


def test_the_reading_floor_counts_the_leaves_one_and_two_changes_reach_by_hand():
    """One tree, x0 <= 1.5 at the root and x1 <= 0.5 under it on both sides (asserted below): a factual reaches its
    own leaf, one more changing x0 and one more changing x1 (3 within one change), and the fourth changing both."""
    cells = {(0, 0): (0, 10), (1, 0): (0, 10), (0, 1): (5, 0), (1, 1): (0, 7),
             (2, 0): (10, 0), (3, 0): (10, 0), (2, 1): (0, 3), (3, 1): (7, 0)}  # (x0, x1): (bad rows, good rows)
    rows = [(x0, x1, label) for (x0, x1), (bad, good) in cells.items() for label, n in (("bad", bad), ("good", good))
            for _ in range(n)]
    frame = pd.DataFrame(rows, columns=["x0", "x1", "outcome"])
    task = fc.make_task(frame, target="outcome", undesirable="bad", kinds={"x0": "continuous", "x1": "continuous"})
    pipeline = fc.models.build_pipeline(task, model="rf", encoding="label")
    pipeline.set_params(classify=RandomForestClassifier(1, bootstrap=False, max_depth=2, max_features=None, random_state=0))
    pipeline.fit(task.X, task.y)
    tree = pipeline.steps[-1][1].estimators_[0].tree_
    assert tree.feature[0] == 0 and tree.threshold[0] == 1.5
    assert list(tree.feature[[tree.children_left[0], tree.children_right[0]]]) == [1, 1]
    model = fc.FittedModel.from_estimator(pipeline, task, undesired=1, fitted_on="task")
    queries = pd.DataFrame({"x0": [2, 3], "x1": [0, 1]})  # P(bad) 1 and 0.7; (3, 1) has no one-feature way out
    floor = _tree.TreeGenerator().reading_floor(model, task, queries, n_cf=10, repeats=2)
    assert (floor["trees"], floor["leaves_one"], floor["short"], floor["leaves_two"]) == (1, 6, 2, 8)
    assert all(np.isfinite(floor[k]) and floor[k] > 0 for k in ("form", "walk_one", "walk_two"))
    # n_cf 1: only a factual with no one-feature way out needs pairs, as tree's own fallback counts them
    one = _tree.TreeGenerator().reading_floor(model, task, queries, n_cf=1, repeats=1)
    singles_only = _tree.TreeGenerator(pairs=False).generate(model, task, queries, n_cf=1)
    assert one["short"] == len(singles_only.cases_counted("batch_fallback")) == 1
    assert _tree.TreeGenerator(pairs=False).reading_floor(model, task, queries, n_cf=10)["walk_two"] == 0.0


def test_too_many_candidates_on_an_axis_keep_the_nearest_in_the_searchs_order():
    """An axis with more than 2 max_cand candidates keeps the 2 max_cand nearest to the factual (a tie in distance:
    the one made first), ordered by side, then size, then value: as sorting every candidate by distance would."""
    from flex_core.counterfactuals._treekernel import _candidate_buffers, _in_order

    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(200):
        f, scale = 50.0, float(rng.choice([1.0, 7.5]))
        grid = np.arange(0.0, 100.5, 0.5)  # values on a grid: distances tie across the two sides
        below = np.sort(rng.choice(grid[grid < f], rng.integers(0, 40), replace=False))
        above = np.sort(rng.choice(grid[grid > f], rng.integers(0, 40), replace=False))
        values = np.r_[below, above]  # as made: each side in table order, the side below first
        sides = np.r_[-np.ones(len(below)), np.ones(len(above))]
        m, max_cand = len(values), int(rng.integers(1, 25))
        buffers = _candidate_buffers(m + 1)
        buffers[0][:m], buffers[1][:m], buffers[2][:m], buffers[3][:m] = values, np.arange(m), 1000 + np.arange(m), sides
        got = _in_order(buffers, np.int64(m), f, True, scale, max_cand)
        dist = np.abs(values - f)
        keep = np.argsort(dist, kind="stable")[: 2 * max_cand] if m > 2 * max_cand else np.arange(m)
        keep = keep[np.lexsort((keep, values[keep], dist[keep] / scale, sides[keep]))]
        np.testing.assert_array_equal(got[0], values[keep])
        np.testing.assert_array_equal(got[1], keep)
        np.testing.assert_array_equal(got[2], 1000 + keep)
        np.testing.assert_array_equal(got[3], dist[keep] / scale)
        np.testing.assert_array_equal(got[4], sides[keep])
        assert got[5] == max(0, m - 2 * max_cand)
        checked += m > 2 * max_cand
    assert checked > 50
