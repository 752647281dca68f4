"""Builders shared by the tests: hand-made counterfactual sets."""

from __future__ import annotations

import numpy as np
import pandas as pd

import flex_core as fc


def make_set(task, factual_rows, cf_rows, n_cf):
    """A CounterfactualSet from frames: cf_rows[i] is the list of query i's counterfactuals (all valid)."""
    n_f = len(task.features)
    cfs = np.full((len(factual_rows), n_cf, n_f), np.nan)
    found = np.zeros((len(factual_rows), n_cf), bool)
    for i, rows in enumerate(cf_rows):
        if rows:
            cfs[i, : len(rows)] = fc.counterfactuals.encode_rows(task, pd.DataFrame(rows, columns=task.feature_names))
            found[i, : len(rows)] = True
    factuals = task.frame.loc[factual_rows, task.feature_names]
    return fc.counterfactuals.CounterfactualSet(
        tuple(task.feature_names), np.array(factual_rows), fc.counterfactuals.encode_rows(task, factuals), cfs, found, found.copy(), "hand", 0.0
    )


def accident_frame(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """Raw data as a user has it: text and integer-coded categories, a float, a label column ``severity``.

    Severe when fast (speed > 80), or on a rural road in the dark; ``district`` is an
    integer code the user treats as a category, ``noise`` is pure noise.
    """
    rng = np.random.default_rng(seed)
    speed = rng.uniform(20, 120, n).round(1)
    zone = rng.choice(["urban", "rural"], n)
    lighting = rng.choice(["daylight", "dark"], n)
    district = rng.choice([1, 2, 3], n)
    noise = rng.normal(0, 1, n).round(3)
    severe = (speed > 80) | ((zone == "rural") & (lighting == "dark"))
    return pd.DataFrame(
        {"speed": speed, "zone": zone, "lighting": lighting, "district": district, "noise": noise,
         "severity": np.where(severe, "severe", "mild")}
    )


def user_pipeline(frame: pd.DataFrame, *, target: str = "severity", seed: int = 0, steps: int = 2):
    """A model trained outside the project: OneHotEncoder on the text and integer categories, then gradient boosting.

    ``steps=3`` puts a pass-through step between them: a pipeline FLEX cannot split into encoder and classifier.
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    X = frame.drop(columns=[target])
    categorical = [c for c in X.columns if X[c].dtype == object or c == "district"]
    encode = ColumnTransformer(
        [("onehot", OneHotEncoder(handle_unknown="ignore", sparse_output=False), categorical)], remainder="passthrough"
    )
    middle = [("nothing", "passthrough")] if steps == 3 else []
    model = Pipeline([("prepare", encode), *middle, ("boost", HistGradientBoostingClassifier(max_iter=60, random_state=seed))])
    return model.fit(X, frame[target])

def noise_frame(n: int = 600, *, minority: float = 0.15, seed: int = 0) -> pd.DataFrame:
    """Features unrelated to an imbalanced outcome: no model can beat always predicting the majority."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x1": rng.normal(size=n).round(3),
            "x2": rng.integers(0, 50, n),
            "colour": rng.choice(["red", "green", "blue"], n),
            "outcome": np.where(rng.random(n) < minority, "bad", "good"),
        }
    )


class Rule:
    """A planted model: undesirable exactly where ``rule(X)`` holds (classes (good, bad), FittedModel's (0, 1))."""

    classes_ = np.array(["good", "bad"])

    def __init__(self, rule):
        self.rule = rule

    def predict_proba(self, X):
        bad = np.asarray(self.rule(X), dtype=float)
        return np.column_stack([1.0 - bad, bad])

    def predict(self, X):
        return self.classes_[(self.predict_proba(X)[:, 1] > 0.5).astype(int)]


def planted(frame: pd.DataFrame, rule, **task_options):
    """A task whose target is the rule itself, and the rule as its model (trained on every row)."""
    frame = frame.copy()
    frame["y"] = Rule(rule).predict(frame)
    task = fc.make_task(frame, target="y", undesirable="bad", **task_options)
    model = fc.FittedModel("rule", "none", 0, Rule(rule), task.frame.index.to_numpy(), np.empty(0, int))
    return task, model
