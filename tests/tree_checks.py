"""What the tree tests share: a factual's one-feature grid profiles equal predict_proba on every cell, and the small
native-categorical boosters they read."""

from __future__ import annotations

import numpy as np

from flex_core.counterfactuals import decode_rows
from flex_core.counterfactuals._treeform import FLOAT32_TOLERANCE, tree_form
from flex_core.counterfactuals._treegrid import cell_points, grids, near_walk, single_grid_profiles


def profiles_agree(model, task, factuals: np.ndarray) -> int:
    """Every cell of every feature's profile of every factual, against the model's predict_proba at a point inside
    the cell (1e-9; XGBoost's float32 probabilities to two float32 steps); exact cells to the bit. Returns the
    number of cells checked."""
    form = tree_form(model, task)
    is_number = np.array([f.is_continuous for f in task.features])
    levels = np.array([0 if f.is_continuous else len(f.levels) for f in task.features])
    vary = np.ones(len(task.features), dtype=bool)
    g = grids(form, is_number, levels)
    prof = single_grid_profiles(form, g, factuals, vary, near_walk(form, g, factuals, vary, 1))
    tolerance = FLOAT32_TOLERANCE if form.float32 else 1e-9
    checked = 0
    for j in range(len(task.features)):
        points = cell_points(g, j)
        rows = np.repeat(factuals, len(points), axis=0)
        rows[:, j] = np.tile(points, len(factuals))
        expected = model.predict_proba(decode_rows(task, rows))[:, 1].reshape(len(factuals), len(points))
        cells = slice(g.offset[j], g.offset[j] + g.n_cells[j])
        np.testing.assert_allclose(prof.p[:, cells], expected, rtol=0, atol=tolerance)
        exact = prof.exact[:, cells]
        np.testing.assert_array_equal(prof.p[:, cells][exact], expected[exact])
        checked += expected.size
    return checked


def compiled_and_numpy(model, task, monkeypatch, *, n_factuals: int = 12, n_cf: int = 8):
    """The tree generator's sets for a seeded sample of factuals, read by the compiled pair search and by the numpy
    pair profiles (``_compiled`` off): (compiled, numpy)."""
    import flex_core as fc
    from flex_core.counterfactuals import _tree

    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(task, model), n_factuals, seed=0)
    queries = task.frame.loc[rows, task.feature_names]
    compiled = _tree.TreeGenerator().generate(model, task, queries, n_cf=n_cf)
    monkeypatch.setattr(_tree, "_compiled", lambda form: False)
    return compiled, _tree.TreeGenerator().generate(model, task, queries, n_cf=n_cf)


def native_booster(library: str, X, y, *, regressor: bool = False):
    """A small XGBoost, LightGBM or HistGradientBoosting model (classifier, or ``regressor``) with native categories,
    fitted on ``X``, ``y``."""
    if library == "xgboost":
        from xgboost import XGBClassifier, XGBRegressor

        return (XGBRegressor if regressor else XGBClassifier)(n_estimators=30, max_depth=4, enable_categorical=True,
                                                              tree_method="hist", max_cat_to_onehot=1).fit(X, y)
    if library == "lightgbm":
        from lightgbm import LGBMClassifier, LGBMRegressor

        return (LGBMRegressor if regressor else LGBMClassifier)(n_estimators=30, num_leaves=8, min_child_samples=5,
                                                                verbose=-1).fit(X, y)
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    return (HistGradientBoostingRegressor if regressor else HistGradientBoostingClassifier)(
        max_iter=30, categorical_features="from_dtype", random_state=0).fit(X, y)
