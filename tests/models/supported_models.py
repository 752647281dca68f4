"""Every model kind FLEX supports from a ``.skops`` file, small and fitted: the allowlist's completeness test saves each."""

from __future__ import annotations

import numpy as np
import pandas as pd

import flex_core as fc


def _frames(n: int = 120, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "speed": rng.uniform(20, 120, n).round(1),
        "zone": rng.choice(["urban", "rural"], n),
        "lighting": rng.choice(["daylight", "dark", "dusk"], n),
        "noise": rng.normal(0, 1, n),
    })
    binary = np.where((X["speed"] > 70) | (X["zone"] == "rural"), "severe", "mild")
    multi = np.select([X["speed"] > 90, X["zone"] == "rural"], ["fatal", "severe"], "mild")
    return X, pd.Series(binary), pd.Series(multi)


def supported_models() -> dict[str, tuple[object, pd.DataFrame]]:
    """Name -> (fitted estimator, a frame it predicts on): FLEX's own pipelines and the bring-your-own kinds."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        GradientBoostingClassifier,
        HistGradientBoostingClassifier,
        RandomForestClassifier,
    )
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MinMaxScaler, OneHotEncoder, OrdinalEncoder, StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    X, y2, y3 = _frames()
    numeric = X[["speed", "noise"]]
    categorical = X.assign(zone=X["zone"].astype("category"), lighting=X["lighting"].astype("category"))
    models: dict[str, object] = {}
    task = fc.data.load_builtin("synthetic-regional")
    own = {f"flex-{kind}-{encoding}": (fc.fit_model(task, model=kind, encoding=encoding, seed=0, cv_folds=2).pipeline, task.X)
           for kind in fc.models.MODELS for encoding in ("onehot", "label")}
    bare = {
        "decision-tree": DecisionTreeClassifier(max_depth=3, random_state=0),
        "random-forest": RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0),
        "extra-trees": ExtraTreesClassifier(n_estimators=3, max_depth=3, random_state=0),
        "gradient-boosting": GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0),
        "hist-gradient-boosting": HistGradientBoostingClassifier(max_iter=3, random_state=0),
        "logistic-regression": LogisticRegression(max_iter=500),
    }
    for name, estimator in bare.items():
        from sklearn.base import clone

        models[name] = clone(estimator).fit(numeric, y2)
        models[f"{name}-multiclass"] = clone(estimator).fit(numeric, y3)
    models["gradient-boosting-exponential"] = GradientBoostingClassifier(
        loss="exponential", n_estimators=3, max_depth=2, random_state=0).fit(numeric, y2)
    models["hist-gradient-boosting-categories"] = HistGradientBoostingClassifier(
        max_iter=3, categorical_features="from_dtype", random_state=0).fit(categorical, y3)
    encode = ColumnTransformer([
        ("onehot", OneHotEncoder(handle_unknown="ignore"), ["zone"]),
        ("ordinal", OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1), ["lighting"]),
        ("scale", Pipeline([("impute", SimpleImputer()), ("standard", StandardScaler())]), ["speed"]),
    ], remainder=MinMaxScaler())
    models["pipeline-column-transformer"] = Pipeline([("encode", encode), ("classify", LogisticRegression(max_iter=500))]).fit(X, y3)
    inputs = {"hist-gradient-boosting-categories": categorical, "pipeline-column-transformer": X}
    models.update(_regressors(numeric, X["speed"] * 2 + X["noise"]))
    boosters = _boosters(numeric, categorical, y2, y3)
    inputs.update({name: categorical if name.endswith("categories") else numeric for name in boosters})
    banded = fc.make_task(X.assign(amount=X["speed"] * 2 + X["noise"]), target="amount", undesirable={"above": 150})
    own |= {f"flex-{kind}-regressor": (fc.fit_model(banded, model=kind, seed=0, cv_folds=0).pipeline, banded.X)
            for kind in fc.models.MODELS}
    return own | {name: (model, inputs.get(name, numeric)) for name, model in (models | boosters).items()}


def _regressors(numeric, amount) -> dict[str, object]:
    """The regressors a band of a number target explains (issue 38), every loss the tree generator reads."""
    from sklearn.ensemble import (
        ExtraTreesRegressor,
        GradientBoostingRegressor,
        HistGradientBoostingRegressor,
        RandomForestRegressor,
    )
    from sklearn.linear_model import LinearRegression

    small = {"n_estimators": 3, "max_depth": 3, "random_state": 0}
    models = {"random-forest-regressor": RandomForestRegressor(**small),
              "extra-trees-regressor": ExtraTreesRegressor(**small),
              "linear-regression": LinearRegression(),
              **{f"gradient-boosting-regressor-{loss}": GradientBoostingRegressor(loss=loss, **small)
                 for loss in ("squared_error", "absolute_error", "huber", "quantile")},
              **{f"hist-gradient-boosting-regressor-{loss}": HistGradientBoostingRegressor(loss=loss, max_iter=3)
                 for loss in ("squared_error", "absolute_error")},
              "hist-gradient-boosting-regressor-quantile": HistGradientBoostingRegressor(loss="quantile", quantile=0.5,
                                                                                         max_iter=3)}
    try:
        import lightgbm as lgb
        import xgboost as xgb

        models |= {"xgboost-regressor": xgb.XGBRegressor(n_estimators=3, max_depth=2, n_jobs=1),
                   "lightgbm-regressor": lgb.LGBMRegressor(n_estimators=3, num_leaves=4, verbose=-1, n_jobs=1)}
    except ImportError:  # the boosters extra is not installed
        pass
    return {name: model.fit(numeric, amount) for name, model in models.items()}


def _boosters(numeric, categorical, y2, y3) -> dict[str, object]:
    try:
        import lightgbm as lgb
        import xgboost as xgb
    except ImportError:  # the boosters extra is not installed: nothing of theirs to save
        return {}
    codes2, codes3 = pd.factorize(y2)[0], pd.factorize(y3)[0]
    small = {"n_estimators": 3, "n_jobs": 1}
    return {
        "xgboost": xgb.XGBClassifier(max_depth=2, **small).fit(numeric, codes2),
        "xgboost-multiclass-categories": xgb.XGBClassifier(max_depth=2, enable_categorical=True, tree_method="hist",
                                                           **small).fit(categorical, codes3),
        "lightgbm": lgb.LGBMClassifier(num_leaves=4, min_child_samples=5, verbose=-1, **small).fit(numeric, y2),
        "lightgbm-multiclass-categories": lgb.LGBMClassifier(num_leaves=4, min_child_samples=5, verbose=-1,
                                                             **small).fit(categorical, y3),
    }
