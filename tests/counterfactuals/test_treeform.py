"""The tree form (issue 33): every supported library read exactly, checked against the model's own predict_proba.

At random coded points (numbers anywhere in and beyond their range, with missing values where the
model takes them; every level), the form's P(undesirable) equals FittedModel.predict_proba to 1e-9:
FLEX's one-hot and label pipelines, scikit-learn forests and boosting, XGBoost and LightGBM with
native categorical splits, binary and multi-class. Split rules are hand-checked at their float edges.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core.counterfactuals import decode_rows
from flex_core.counterfactuals._treeform import left_bound, rounded_bound, tree_form
from tests.tree_checks import compiled_and_numpy, native_booster, profiles_agree

N = 500


def _frame(seed=0, *, missing=False):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 100, N).round(2)
    z = rng.integers(0, 21, N).astype(float)
    colour = rng.choice(["red", "green", "blue", "white"], N)
    size = rng.choice(["S", "M", "L"], N)
    score = x / 25 + (colour == "red") * 2 - (size == "L") + z / 10 + rng.normal(0, 0.8, N)
    label = np.where(score > 4, "high", np.where(score > 2.5, "mid", "low"))
    frame = pd.DataFrame({"x": x, "z": z, "colour": colour, "size": size, "label": label})
    if missing:
        frame.loc[rng.random(N) < 0.1, "x"] = np.nan
    return frame


def _task(frame):
    return fc.make_task(frame.dropna(), target="label", undesirable="low", kinds={"z": "continuous"},
                        ordinal_orders={"size": ["S", "M", "L"]})


def _points(task, n=400, seed=1, missing=True):
    rng = np.random.default_rng(seed)
    codes = np.zeros((n, len(task.features)))
    for j, f in enumerate(task.features):
        if f.is_continuous:
            low, high = task.frame[f.name].min(), task.frame[f.name].max()
            codes[:, j] = rng.uniform(low - 5, high + 5, n)
            codes[: n // 4, j] = rng.choice(task.frame[f.name].to_numpy(), n // 4)  # on training values, next to thresholds
            if missing:
                codes[rng.random(n) < 0.1, j] = np.nan
        else:
            codes[:, j] = rng.integers(0, len(f.levels), n)
    return codes


def _agrees(model, task, *, missing=True):
    form = tree_form(model, task)
    codes = _points(task, missing=missing)
    expected = model.predict_proba(decode_rows(task, codes))[:, 1]
    np.testing.assert_allclose(form(codes), expected, rtol=0, atol=1e-9)
    return form


@pytest.mark.parametrize("model", ["rf", "gb"])
@pytest.mark.parametrize("encoding", ["onehot", "label"])
def test_flex_pipelines_read_exactly(model, encoding):
    task = _task(_frame())
    fitted = fc.fit_model(task, model=model, encoding=encoding, cv_folds=0)
    _agrees(fitted, task)


def _pipeline_with(task, classifier, encoding="onehot"):
    pipeline = fc.models.build_pipeline(task, model="rf", encoding=encoding)
    return pipeline.set_params(classify=classifier)


@pytest.mark.parametrize("kind", ["extra", "gradient", "hist", "forest"])
@pytest.mark.parametrize("classes", [2, 3])
def test_sklearn_ensembles_binary_and_multiclass(kind, classes):
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        GradientBoostingClassifier,
        HistGradientBoostingClassifier,
        RandomForestClassifier,
    )

    frame = _frame(2)
    task = _task(frame)
    estimator = {"extra": ExtraTreesClassifier(20, random_state=0), "gradient": GradientBoostingClassifier(n_estimators=30, random_state=0),
                 "hist": HistGradientBoostingClassifier(max_iter=30, random_state=0),
                 "forest": RandomForestClassifier(20, random_state=0)}[kind]
    pipeline = _pipeline_with(task, estimator, encoding="label" if classes == 3 else "onehot")
    y = task.frame["label"] if classes == 3 else (task.frame["label"] == "low").astype(int)
    pipeline.fit(task.X, y)
    model = fc.FittedModel.from_estimator(pipeline, task, undesired="low" if classes == 3 else 1, fitted_on="task")
    # GradientBoostingClassifier takes no missing values
    _agrees(model, task, missing=kind != "gradient")


def _native(frame):
    X = frame.drop(columns=["label"]).copy()
    for c in ("colour", "size"):
        X[c] = X[c].astype("category")
    return X


@pytest.mark.parametrize("library", ["xgboost", "lightgbm", "hist"])
@pytest.mark.parametrize("classes", [2, 3])
def test_native_categorical_boosters_with_missing_values(library, classes):
    frame = _frame(3, missing=True)
    task = _task(frame)
    X = _native(frame)
    y = frame["label"] if classes == 3 else (frame["label"] == "low").astype(int)
    if library == "xgboost":
        from xgboost import XGBClassifier

        codes = {c: i for i, c in enumerate(sorted(set(y)))} if classes == 3 else None
        estimator = XGBClassifier(n_estimators=30, max_depth=4, enable_categorical=True, tree_method="hist", max_cat_to_onehot=1)
        estimator.fit(X, y.map(codes) if codes else y)
        undesired = codes["low"] if codes else 1
    elif library == "lightgbm":
        from lightgbm import LGBMClassifier

        estimator = LGBMClassifier(n_estimators=30, num_leaves=8, min_child_samples=5, verbose=-1).fit(X, y)
        undesired = "low" if classes == 3 else 1
    else:
        from sklearn.ensemble import HistGradientBoostingClassifier

        estimator = HistGradientBoostingClassifier(max_iter=30, categorical_features="from_dtype", random_state=0).fit(X, y)
        undesired = "low" if classes == 3 else 1
    model = fc.FittedModel.from_estimator(estimator, task, undesired=undesired)
    form = _agrees(model, task)
    assert (~form.numeric[form.feature >= 0]).any()  # it did read category splits
    if library == "xgboost":  # XGBoost's float32 margin, to the bit (its sigmoid may be one float32 step off elsewhere)
        codes = _points(task)
        margin = estimator.get_booster().inplace_predict(model.estimator_input(decode_rows(task, codes)), predict_type="margin")
        np.testing.assert_array_equal(form.raw(codes).reshape(margin.shape), margin)


def test_lightgbm_linear_trees_are_refused():
    from lightgbm import LGBMClassifier

    frame = _frame(4)
    task = _task(frame)
    X = frame.drop(columns=["label"])[["x", "z"]]
    estimator = LGBMClassifier(n_estimators=5, linear_tree=True, verbose=-1).fit(X, frame["label"] == "low")
    small = fc.make_task(frame[["x", "z", "label"]], target="label", undesirable="low", kinds={"z": "continuous"})
    model = fc.FittedModel.from_estimator(estimator, small, undesired=True)
    del task
    with pytest.raises(fc.ConfigError, match="linear trees"):
        tree_form(model, small)


def test_logistic_regression_is_refused():
    task = _task(_frame())
    with pytest.raises(fc.ConfigError, match="does not read LogisticRegression"):
        tree_form(fc.fit_model(task, model="lr", cv_folds=0), task)


def test_split_bounds_at_their_float_edges():
    # scikit-learn: float32(x) <= 0.1 (a float64 threshold); the float32 nearest 0.1 is above it, so goes right
    b = left_bound(0.1, strict=False, float32=True)
    assert np.float32(b) <= 0.1 and not float(np.float32(np.nextafter(b, np.inf))) <= 0.1
    # XGBoost: float32(x) < 2.5: 2.5 itself goes right, the largest float64 that rounds below it goes left
    b = left_bound(2.5, strict=True, float32=True)
    assert np.float32(b) < np.float32(2.5) and not np.float32(np.nextafter(b, np.inf)) < np.float32(2.5)
    # float64 rules: <= keeps the threshold, < the float just below it
    assert left_bound(3.0, strict=False, float32=False) == 3.0
    assert left_bound(3.0, strict=True, float32=False) == np.nextafter(3.0, -np.inf)
    # a column rounded half to even before the model: round(x) <= 2.7  <=>  x <= 2.5 (2.5 rounds to 2)
    assert rounded_bound(2.7) == 2.5
    assert rounded_bound(3.2) == np.nextafter(3.5, -np.inf)  # 3.5 rounds to 4


@pytest.mark.parametrize("library", ["xgboost", "lightgbm", "hist"])
def test_tree_generator_counterfactuals_are_valid_by_predict_proba(library):
    """The generator on each library's native-categorical booster: it reads the trees, and predict_proba agrees."""

    frame = _frame(5, missing=False)
    task = _task(frame)
    X, y = _native(frame), (frame["label"] == "low").astype(int)
    if library == "xgboost":
        from xgboost import XGBClassifier

        estimator = XGBClassifier(n_estimators=30, max_depth=4, enable_categorical=True, tree_method="hist").fit(X, y)
    elif library == "lightgbm":
        from lightgbm import LGBMClassifier

        estimator = LGBMClassifier(n_estimators=30, num_leaves=8, min_child_samples=5, verbose=-1).fit(X, y)
    else:
        from sklearn.ensemble import HistGradientBoostingClassifier

        estimator = HistGradientBoostingClassifier(max_iter=30, categorical_features="from_dtype", random_state=0).fit(X, y)
    model = fc.FittedModel.from_estimator(estimator, task, undesired=1)
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(task, model), 15, seed=0)
    result = fc.counterfactuals.make_generator("tree").generate(model, task, task.frame.loc[rows, task.feature_names], n_cf=6)
    assert result.coverage()["tree"]["ran"] == "tree"
    assert _valid_by_predict_proba(model, task, result) >= 15


def _valid_by_predict_proba(model, task, result) -> int:
    """How many counterfactuals were returned; each is checked valid under the robust rule by the model itself."""
    from flex_core.counterfactuals._validity import Validity

    q, c = np.nonzero(result.found)
    codes = fc.counterfactuals.encode_rows(task, task.frame[task.feature_names])
    spans = np.array([np.nanmax(codes[:, j]) - np.nanmin(codes[:, j]) if f.is_continuous else np.nan
                      for j, f in enumerate(task.features)])
    rule = Validity().on(task, spans)
    assert rule.check(lambda r: model.predict_proba(decode_rows(task, r))[:, 1], result.counterfactuals[q, c],
                      result.factuals[q]).all()
    return len(q)


@pytest.mark.parametrize("library", ["xgboost", "lightgbm", "hist", "rf-onehot", "gb-label"])
@pytest.mark.parametrize("classes", [2, 3])
def test_grid_profiles_equal_predict_proba_on_every_cell(library, classes):
    """Each factual's one-feature profiles, read by the compiled walk, equal predict_proba at every cell of every
    feature: every library, binary and multi-class, native categorical splits and missing values in the factuals."""
    frame = _frame(6, missing=library in ("xgboost", "lightgbm", "hist"))
    task = _task(frame)
    if library in ("rf-onehot", "gb-label"):
        labels = frame["label"] if classes == 3 else np.where(frame["label"] == "low", "low", "other")
        small = _task(frame.assign(label=labels))
        model = fc.fit_model(small, model=library[:2], encoding=library[3:], cv_folds=0, seed=0)
        task = small
    else:
        y = frame["label"].map({"high": 0, "low": 1, "mid": 2}) if classes == 3 else (frame["label"] == "low").astype(int)
        model = fc.FittedModel.from_estimator(native_booster(library, _native(frame), y), task, undesired=1)
    codes = _points(task, n=12, missing=library in ("xgboost", "lightgbm", "hist"))
    assert profiles_agree(model, task, codes) > 100


@pytest.mark.parametrize("library", ["lightgbm", "hist", "xgboost"])
def test_boosters_two_feature_tradeoffs_compiled_equal_numpy(library, monkeypatch):
    """Binary boosting in float64 goes through the compiled pair search, XGBoost's float32 sums through numpy: the
    compiled search gives what the numpy pair profiles give."""
    frame = _frame(7)
    task = _task(frame)
    model = fc.FittedModel.from_estimator(native_booster(library, _native(frame), (frame["label"] == "low").astype(int)), task,
                                          undesired=1)
    compiled, numpy_read = compiled_and_numpy(model, task, monkeypatch)
    np.testing.assert_array_equal(compiled.counterfactuals, numpy_read.counterfactuals)
    assert compiled.coverage()["tree"]["pairs_read"] > 0


@pytest.mark.parametrize("library", ["lightgbm", "xgboost"])
def test_boosters_read_in_threads_give_the_same_counterfactuals(library, monkeypatch):
    """Chunks read in two threads: XGBoost's cells next to the threshold are rescored by the model itself from both
    threads at once, LightGBM's by the form; the sets equal the one-thread ones."""
    from flex_core.counterfactuals import _tree

    frame = _frame(7)
    task = _task(frame)
    model = fc.FittedModel.from_estimator(native_booster(library, _native(frame), (frame["label"] == "low").astype(int)), task,
                                          undesired=1)
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(task, model), 24, seed=0)
    queries = task.frame.loc[rows, task.feature_names]
    one = _tree.TreeGenerator().generate(model, task, queries, n_cf=8)
    monkeypatch.setattr(_tree, "CHUNK_QUERIES", 4)  # six chunks for two threads
    two = _tree.TreeGenerator(n_jobs=2).generate(model, task, queries, n_cf=8)
    np.testing.assert_array_equal(two.counterfactuals, one.counterfactuals)
    assert two.notes == one.notes and one.found.any()


def test_left_bounds_are_the_largest_values_sent_left_for_many_thresholds_at_once():
    """The vectorised bounds: every bound goes left by the library's own comparison and the next float64 does not."""
    from flex_core.counterfactuals._treeform import left_bounds, rounded_bounds

    rng = np.random.default_rng(0)
    thresholds = np.r_[rng.normal(0, 1e3, 500), rng.uniform(-3, 3, 500).round(1), np.float32(2.5), 0.1, -0.0]
    for strict in (False, True):
        b = left_bounds(thresholds, strict=strict, float32=True)
        after = np.nextafter(b, np.inf)
        if strict:  # XGBoost: float32(x) < threshold
            assert (b.astype(np.float32) < thresholds).all() and not (after.astype(np.float32) < thresholds).any()
        else:  # scikit-learn: float32(x) <= float64 threshold
            assert (b.astype(np.float32) <= thresholds).all() and not (after.astype(np.float32) <= thresholds).any()
        b64 = left_bounds(thresholds, strict=strict, float32=False)
        assert ((b64 < thresholds) if strict else (b64 <= thresholds)).all()
        assert not ((np.nextafter(b64, np.inf) < thresholds) if strict else (np.nextafter(b64, np.inf) <= thresholds)).any()
    r = rounded_bounds(thresholds)
    assert (np.round(r) <= thresholds).all() and not (np.round(np.nextafter(r, np.inf)) <= thresholds).any()


@pytest.mark.parametrize("library", ["xgboost", "lightgbm", "hist", "rf"])
def test_multiclass_counterfactuals_are_valid_by_predict_proba(library):
    """Three classes, the undesired one of them: every counterfactual the tree generator returns is valid by the
    model's own predict_proba under the robust rule (softmax boosting goes through the numpy pair profiles)."""

    frame = _frame(8, missing=False)
    task = _task(frame)
    if library == "rf":
        model = fc.fit_model(task, model="rf", encoding="label", cv_folds=0, seed=0)
    else:
        y = frame["label"].map({"high": 0, "low": 1, "mid": 2})
        model = fc.FittedModel.from_estimator(native_booster(library, _native(frame), y), task, undesired=1)
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(task, model), 12, seed=0)
    result = fc.counterfactuals.make_generator("tree").generate(model, task, task.frame.loc[rows, task.feature_names], n_cf=6)
    assert result.coverage()["tree"]["ran"] == "tree"
    assert _valid_by_predict_proba(model, task, result) >= 12


def test_level_masks_by_hand():
    """The bits of the levels a level split sends left: ``<=`` (or ``<``) against each level's value, a missing
    level the node's missing-value way, nothing past a column's last level."""
    from flex_core.counterfactuals._treewalk import level_masks

    seen = np.array([[0.0, 1.0, 2.0], [1.0, np.nan, 3.0]])  # column 1's second level is "missing"
    n_levels = np.array([3, 3])
    cols = np.array([0, 0, 1, 1, 0])
    thresholds = np.array([0.5, 1.5, 2.0, 2.0, 1.0])
    nan_left = np.array([False, False, True, False, False])
    # levels 0 | 0, 1 | 0 and missing 1 | 0 only | 0 and 1 (1.0 <= 1.0)
    assert level_masks(cols, thresholds, nan_left, seen, n_levels, False).tolist() == [0b001, 0b011, 0b011, 0b001, 0b011]
    # strict: 1.0 < 1.0 is false, so the last split sends level 0 only
    assert level_masks(cols, thresholds, nan_left, seen, n_levels, True).tolist() == [0b001, 0b011, 0b011, 0b001, 0b001]
    assert level_masks(cols, thresholds, nan_left, seen, np.array([2, 1]), False).tolist() == [1, 3, 1, 1, 3]


def test_packed_nodes_by_hand():
    """One tree, worked out by hand: root "x0 <= 2.5" (missing goes right), left child a level split on x1 sending
    levels {0, 2} left (missing goes left), three leaves. Each row: head = feature * 4 + numeric * 2 + nan_left, the
    children, the bound's float64 bits or the level bits; rows reach the leaves a reader would send them to."""
    from flex_core.counterfactuals._treewalk import leaf_box_arrays, pack_nodes, reached_leaves, walk_near

    feature = np.array([0, 1, -1, -1, -1])
    numeric = np.array([True, False, False, False, False])
    bound = np.array([2.5, 0.0, 0.0, 0.0, 0.0])
    mask = np.array([0, 0b101, 0, 0, 0])
    nan_left = np.array([False, True, False, False, False])
    left, right = np.array([1, 3, -1, -1, -1]), np.array([2, 4, -1, -1, -1])
    nodes = pack_nodes(feature, numeric, bound, mask, nan_left, left, right)
    assert nodes[:, 0].tolist() == [0 * 4 + 2 + 0, 1 * 4 + 0 + 1, -4, -4, -4]
    assert (nodes[:, 0] >> 2).tolist() == [0, 1, -1, -1, -1]
    assert nodes[0, 3] == np.float64(2.5).view(np.int64) and nodes[1, 3] == 0b101
    fnodes = nodes.view(np.float64)
    rows = np.array([[2.5, 2.0], [2.5, 1.0], [3.0, 0.0], [np.nan, 0.0], [1.0, np.nan]])
    roots = np.array([0])
    assert reached_leaves(rows, roots, nodes, fnodes)[:, 0].tolist() == [3, 4, 2, 2, 3]
    # from (1.0, level 1): leaf 4 as it is; leaf 3 by changing x1; leaf 2 by changing x0
    q, leaf, a, b = walk_near(rows[[1]], roots, nodes, fnodes, np.array([True, True]), 1, 2)
    assert sorted(zip(leaf.tolist(), a.tolist())) == [(2, 0), (3, 1), (4, -1)]
    leaves, lo, hi, bits, nan_ok = leaf_box_arrays(roots, nodes, fnodes, 2, 2, 0b111)
    assert leaves.tolist() == [2, 3, 4]
    assert lo[:, 0].tolist() == [2.5, -np.inf, -np.inf] and hi[:, 0].tolist() == [np.inf, 2.5, 2.5]
    assert bits[:, 1].tolist() == [0b111, 0b101, 0b010] and nan_ok[:, 0].tolist() == [True, False, False]
    assert nan_ok[:, 1].tolist() == [True, True, False]


@pytest.mark.parametrize("encoding", ["onehot", "label"])
def test_a_forest_read_a_group_of_trees_at_a_time_equals_it_read_tree_by_tree(encoding, monkeypatch):
    """scikit-learn's trees are read laid end to end in groups; one tree per group gives the same form."""
    import flex_core.counterfactuals._treeform as treeform

    task = _task(_frame(3))
    model = fc.fit_model(task, model="rf", seed=0, cv_folds=2, encoding=encoding)
    grouped = tree_form(model, task)
    monkeypatch.setattr(treeform, "GROUP_NODES", 1)
    by_tree = tree_form(model, task)
    assert grouped.depth == by_tree.depth and np.array_equal(grouped.roots, by_tree.roots)
    for name in ("feature", "numeric", "bound", "mask", "nan_left", "left", "right", "value"):
        assert np.array_equal(getattr(grouped, name), getattr(by_tree, name)), name
    assert len(grouped.roots) == 100 and grouped.roots[0] == 0


def _grid(task, j):
    """Every value a scan tries for feature j, and its spacing: numbers on their 0.01 grid (integers one by one)
    over the data's range, levels all (spacing 0)."""
    f = task.features[j]
    if not f.is_continuous:
        return np.arange(len(f.levels), dtype=float), 0.0
    low, high = task.frame[f.name].min(), task.frame[f.name].max()
    step = 1.0 if f.integer else 0.01
    return np.round(np.arange(low, high + step / 2, step), 2), step


def _side_of(task, j, value, factual):
    f = task.features[j]
    return 2 + value if not f.is_continuous and not f.is_ordinal else np.sign(value - factual[j])


def _matches(value, scanned, step, factual_value):
    """The generator's value lies in the scan's cell: the scan's value is the first grid value past the boundary, so
    the exact one lies at most one step nearer the factual (levels and integers: equal)."""
    if step in (0.0, 1.0):
        return value == scanned
    if scanned > factual_value:
        return scanned - step - 1e-9 < value <= scanned + 1e-9
    return scanned - 1e-9 <= value < scanned + step + 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("library", ["xgboost", "lightgbm", "hist"])
def test_a_scan_of_each_boosters_grid_finds_no_way_out_tree_missed(library, monkeypatch):
    """Boosters with native categorical splits, an ordinal and an integer feature, learned from noisy data: a scan of
    every value on a 0.01 grid (every level, every whole number), scored by predict_proba, finds no minimal one- or
    two-feature counterfactual the generator missed (radius 0, n_cf 500): each nearest valid value per feature and
    side, and each Pareto-minimal pair on the grid, is one the generator returned, within one grid step."""
    from flex_core.counterfactuals import _tree
    from flex_core.counterfactuals._alternatives import not_alternatives

    frame = _frame(8)
    task = _task(frame)
    model = fc.FittedModel.from_estimator(native_booster(library, _native(frame), (frame["label"] == "low").astype(int)),
                                          task, undesired=1)
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(task, model), 8, seed=0)
    monkeypatch.setattr(_tree, "not_alternatives", lambda r, f, s, o: not_alternatives(r, f, s, o, tolerance=0.0))
    result = _tree.TreeGenerator(radius=0.0).generate(model, task, task.frame.loc[rows, task.feature_names], n_cf=500)
    assert result.coverage()["tree"]["ran"] == "tree"

    def valid(codes):
        return model.predict_proba(decode_rows(task, codes))[:, 1] < 0.35

    seen = {"singles": 0, "pairs": 0}
    n_f = len(task.features)
    for q in range(len(rows)):
        factual = result.factuals[q]
        got = [(tuple(np.flatnonzero(cf != factual)), cf) for cf in result.counterfactuals[q][result.found[q]]]
        nearest = {}
        for j in range(n_f):
            values, step = _grid(task, j)
            values = values[values != factual[j]]
            scanned = np.repeat(factual[None], len(values), axis=0)
            scanned[:, j] = values
            ok = valid(scanned)
            for side in np.unique([_side_of(task, j, v, factual) for v in values[ok]]):
                on = values[ok & (np.array([_side_of(task, j, v, factual) for v in values]) == side)]
                best = on[np.argmin(np.abs(on - factual[j]))]
                nearest[(j, side)] = best
                assert any(c == (j,) and _matches(cf[j], best, step, factual[j]) for c, cf in got), (q, j, best)
                seen["singles"] += 1
        for a in range(n_f):
            for b in range(a + 1, n_f):
                for ga, gb in _grid_staircase(task, factual, a, b, nearest, valid):
                    (_, step_a), (_, step_b) = _grid(task, a), _grid(task, b)
                    assert any(c == (a, b) and _matches(cf[a], ga, step_a, factual[a]) and _matches(cf[b], gb, step_b, factual[b])
                               for c, cf in got), (q, a, b, ga, gb)
                    seen["pairs"] += 1
    assert seen["singles"] >= len(rows) and seen["pairs"] >= len(rows), seen


def _grid_staircase(task, factual, a, b, nearest, valid):
    """The Pareto-minimal valid (a, b) values on the grid, per pair of sides: neither value valid alone, each nearer
    than the nearest one-feature change on its side, and no valid point nearer on both axes."""
    axes = []
    for j in (a, b):
        values, _ = _grid(task, j)
        values = values[values != factual[j]]
        sides = np.array([_side_of(task, j, v, factual) for v in values])
        single = np.array([nearest.get((j, s), np.inf) for s in sides])
        ordered = task.features[j].is_continuous or task.features[j].is_ordinal
        keep = np.abs(values - factual[j]) < np.abs(single - factual[j]) if ordered else ~np.isfinite(single)
        axes.append((values[keep], sides[keep]))
    (va, sa), (vb, sb) = axes
    if not len(va) or not len(vb):
        return []
    A, B = np.meshgrid(va, vb, indexing="ij")
    rows = np.repeat(factual[None], A.size, axis=0)
    rows[:, a], rows[:, b] = A.ravel(), B.ravel()
    ok = valid(rows).reshape(A.shape)
    out = []
    for side_a in np.unique(sa):
        r = np.flatnonzero(sa == side_a)
        r = r[np.argsort(np.abs(va[r] - factual[a]), kind="stable")]
        for side_b in np.unique(sb):
            c = np.flatnonzero(sb == side_b)
            c = c[np.argsort(np.abs(vb[c] - factual[b]), kind="stable")]
            grid, best = ok[np.ix_(r, c)], len(c)
            for i in range(len(r)):
                first = int(np.argmax(grid[i])) if grid[i].any() else len(c)
                if first < best:
                    best = first
                    out.append((va[r[i]], vb[c[first]]))
    return out


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("kind", ["decision", "extra"])
def test_a_single_decision_tree_is_read_exactly_as_a_forest_of_one(kind, classes):
    """A DecisionTreeClassifier (or ExtraTreeClassifier) after FLEX's encoders, binary and multi-class: the form
    equals predict_proba (missing values too), and the tree generator reads it, says so in words, and every
    counterfactual is valid by predict_proba."""
    from sklearn.tree import DecisionTreeClassifier, ExtraTreeClassifier

    frame = _frame(9)
    task = _task(frame)
    estimator = (DecisionTreeClassifier if kind == "decision" else ExtraTreeClassifier)(max_depth=6, random_state=0)
    pipeline = _pipeline_with(task, estimator, encoding="label" if classes == 3 else "onehot")
    y = task.frame["label"] if classes == 3 else (task.frame["label"] == "low").astype(int)
    pipeline.fit(task.X, y)
    model = fc.FittedModel.from_estimator(pipeline, task, undesired="low" if classes == 3 else 1, fitted_on="task")
    form = _agrees(model, task)
    assert form.n_trees == 1
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(task, model), 12, seed=0)
    result = fc.counterfactuals.make_generator("tree").generate(model, task, task.frame.loc[rows, task.feature_names], n_cf=5)
    assert result.coverage()["tree"] == {**result.coverage()["tree"], "ran": "tree",
                                         "why": "sklearn decision tree read exactly (1 tree)"}
    assert _valid_by_predict_proba(model, task, result) >= 12
