"""XGBoost's and LightGBM's trees read into the tree form (:mod:`._treeform`): each library's documented structure,
XGBoost's JSON model (``save_raw("json")``, gbtree) and LightGBM's ``dump_model``, with their split rules, missing-value
directions, native categorical splits, base scores and links.

A reader takes the form's builder and the fitted estimator, adds its trees, and returns the link and base score.
"""

from __future__ import annotations

import json

import numpy as np

from .._errors import ConfigError
from ._treewalk import depth_of

__all__ = ["IDENTITY_OBJECTIVES", "read_xgboost", "read_lightgbm"]

#: Regression objectives whose prediction is the raw sum itself (no link), by library: the tree generator reads these.
IDENTITY_OBJECTIVES = {
    "xgboost": ("reg:squarederror", "reg:absoluteerror", "reg:pseudohubererror", "reg:quantileerror"),
    "lightgbm": ("regression", "regression_l1", "huber", "fair", "quantile"),
    "sklearn": ("squared_error", "absolute_error", "huber", "quantile"),
}


def read_xgboost(builder, estimator) -> dict:
    booster = estimator.get_booster()
    model = json.loads(booster.save_raw("json"))
    learner = model["learner"]
    gbm = learner["gradient_booster"]
    if gbm.get("name") != "gbtree":
        raise ConfigError(f"The tree generator reads XGBoost's gbtree booster only (this one is {gbm.get('name')!r}).")
    objective = learner["objective"]["name"]
    if objective not in ("binary:logistic", "multi:softprob", "multi:softmax", *IDENTITY_OBJECTIVES["xgboost"]):
        raise ConfigError(f"The tree generator does not read the XGBoost objective {objective!r}.")
    trees, info = gbm["model"]["trees"], gbm["model"]["tree_info"]
    best = booster.attr("best_iteration")
    if best is not None:
        per_iteration = max(1, len(trees) // max(1, int(gbm["model"]["gbtree_model_param"]["num_trees"]) // max(1, booster.num_boosted_rounds())))
        trees, info = trees[: (int(best) + 1) * per_iteration], info[: (int(best) + 1) * per_iteration]
    regression = objective in IDENTITY_OBJECTIVES["xgboost"]
    k = 1 if objective == "binary:logistic" or regression else int(learner["learner_model_param"]["num_class"])
    for tree, group in zip(trees, info):
        left, right = np.asarray(tree["left_children"]), np.asarray(tree["right_children"])
        split = left >= 0
        values = np.zeros((len(left), k))
        values[:, int(group)] = np.asarray(tree["split_conditions"], dtype=float)
        kinds = np.asarray(tree.get("split_type", [0] * len(left)))
        sets = {}
        for node, start, size in zip(tree.get("categories_nodes", []), tree.get("categories_segments", []),
                                     tree.get("categories_sizes", [])):
            sets[int(node)] = np.asarray(tree["categories"][start: start + size], dtype=float)

        def category_left(node, values, kinds=kinds, sets=sets):
            if kinds[node] != 1:
                return None
            if values is None:
                return True
            return ~np.isin(values, sets.get(int(node), np.empty(0)))  # the listed categories go right

        builder.add(column=np.where(split, np.asarray(tree["split_indices"]), -1),
                    numeric_threshold=np.asarray(tree["split_conditions"], dtype=np.float32).astype(float),
                    strict=True, float32=True, nan_left=np.asarray(tree["default_left"], dtype=bool),
                    left=left, right=right, leaf_value=np.where(split[:, None], 0.0, values),
                    category_left=category_left if (kinds == 1).any() else None, depth=depth_of(left, right))
    base = _xgboost_margin(booster, learner, k, objective)
    return dict(link="band" if regression else "sigmoid" if k == 1 else "softmax", base=base, float32=True)


def _xgboost_margin(booster, learner, k, objective) -> np.ndarray:
    text = str(learner["learner_model_param"]["base_score"]).strip("[]")
    scores = np.array([float(s) for s in text.split(",") if s.strip()], dtype=np.float32)
    if objective == "binary:logistic":  # XGBoost's ProbToMargin, in float32: -logf(1/p - 1) (logf correctly rounded)
        one = np.float32(1.0)
        scores = -np.log((one / scores - one).astype(np.float64)).astype(np.float32)
    return np.broadcast_to(scores, (k,)).astype(float)


def read_lightgbm(builder, estimator) -> dict:
    dump = estimator.booster_.dump_model()
    objective = str(dump.get("objective", ""))
    name = objective.split(" ")[0]
    if name not in ("binary", "multiclass", *IDENTITY_OBJECTIVES["lightgbm"]):
        raise ConfigError(f"The tree generator does not read the LightGBM objective {objective!r}.")
    sigmoid = 1.0
    for part in objective.split(" ")[1:]:
        if part.startswith("sigmoid:"):
            sigmoid = float(part.split(":")[1])
    regression = name in IDENTITY_OBJECTIVES["lightgbm"]
    k = 1 if name == "binary" or regression else int(dump["num_class"])
    per_iteration = int(dump.get("num_tree_per_iteration", k))
    infos = dump["tree_info"]
    scale = sigmoid
    if dump.get("average_output"):
        scale /= max(1, len(infos) // per_iteration)
    for t, info in enumerate(infos):
        _lightgbm_tree(builder, info["tree_structure"], k, t % per_iteration, scale)
    return dict(link="band" if regression else "sigmoid" if k == 1 else "softmax", base=np.zeros(k))


def _lightgbm_tree(builder, root, k, group, scale) -> None:
    nodes: list[dict] = []
    order = []
    stack = [(root, -1, False)]
    parents: list[tuple[int, bool]] = []
    while stack:  # pre-order: children come after their parent
        node, parent, is_left = stack.pop()
        index = len(nodes)
        nodes.append(node)
        parents.append((parent, is_left))
        order.append(index)
        if "split_index" in node:
            stack.append((node["right_child"], index, False))
            stack.append((node["left_child"], index, True))
    n = len(nodes)
    left, right = np.full(n, -1), np.full(n, -1)
    for index, (parent, is_left) in enumerate(parents):
        if parent >= 0:
            (left if is_left else right)[parent] = index
    column, thr, nan_left, values = np.full(n, -1), np.zeros(n), np.zeros(n, bool), np.zeros((n, k))
    sets: dict[int, np.ndarray] = {}
    for index, node in enumerate(nodes):
        if "leaf_coeff" in node or node.get("is_linear"):
            raise ConfigError("LightGBM linear trees are not piecewise constant; the tree generator does not read them.")
        if "split_index" not in node:
            values[index, group] = scale * float(node.get("leaf_value", 0.0))
            continue
        column[index] = int(node["split_feature"])
        missing = node.get("missing_type", "None")
        if missing == "Zero":
            raise ConfigError("LightGBM's zero-as-missing splits are not read by the tree generator.")
        if node["decision_type"] == "==":
            sets[index] = np.array([float(v) for v in str(node["threshold"]).split("||")])
            nan_left[index] = False  # a missing category goes right
        elif node["decision_type"] == "<=":
            thr[index] = float(node["threshold"])
            # missing "None": NaN is taken as 0 and compared; "NaN": the default direction
            nan_left[index] = bool(node["default_left"]) if missing == "NaN" else thr[index] >= 0.0
        else:
            raise ConfigError(f"The LightGBM split rule {node['decision_type']!r} is not read by the tree generator.")

    def category_left(node, values):
        if node not in sets:
            return None
        if values is None:
            return True
        return np.isin(values, sets[node]) & ~np.isnan(values)

    builder.add(column=column, numeric_threshold=thr, strict=False, float32=False, nan_left=nan_left,
                left=left, right=right, leaf_value=values, category_left=category_left if sets else None,
                depth=depth_of(left, right))
