"""The trees of a loaded model, checked before its first prediction.

scikit-learn walks a fitted tree's node arrays in compiled code without bounds checks: a file whose
child or feature indices point outside them crashes the process (the whole server, for every
session) at the first prediction. skops therefore does not trust these classes by default; FLEX
must, to load forests and boosting, and checks instead that every split node's children come after
it and inside the tree (so every walk ends at a leaf) and that its feature is one the model takes.
"""

from __future__ import annotations

import numpy as np

from .._errors import DataError

__all__ = ["check_trees"]


def check_trees(model) -> None:
    """Refuse ``model`` if a scikit-learn tree or histogram-boosting predictor in it is malformed.

    Raises
    ------
    DataError
        A tree whose node indices point outside it or backwards, or split on a feature the model does not take.
    """
    for owner in _estimators(model):
        tree = getattr(owner, "tree_", None)
        if tree is not None and type(tree).__module__ == "sklearn.tree._tree":
            _check_tree(tree, min(tree.n_features, getattr(owner, "n_features_in_", tree.n_features)))
        for predictor in _predictors(owner):
            _check_predictor(predictor, owner)


def _estimators(model):
    """Every scikit-learn object inside ``model`` (pipelines, column transformers, ensembles' members)."""
    stack, seen = [model], set()
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, np.ndarray) and value.dtype == object:
            stack.extend(value.ravel())
        elif type(value).__module__.startswith("sklearn.") and hasattr(value, "__dict__"):
            yield value
            stack.extend(vars(value).values())


def _predictors(owner) -> list:
    predictors = getattr(owner, "_predictors", None) if hasattr(owner, "_bin_mapper") else None
    return [p for stage in predictors or () for p in stage]


def _malformed(what: str) -> DataError:
    return DataError(f"The model file holds a malformed tree ({what}); it was not used.")


def _children_ok(left: np.ndarray, right: np.ndarray, split: np.ndarray) -> bool:
    """Every split node's children lie after it and inside the tree: each walk from the root ends at a leaf."""
    index, n = np.arange(len(left)), len(left)
    return bool(np.all((left[split] > index[split]) & (left[split] < n) & (right[split] > index[split]) & (right[split] < n)))


def _check_tree(tree, n_features: int) -> None:
    left, right, feature = (np.asarray(a, dtype=np.int64) for a in (tree.children_left, tree.children_right, tree.feature))
    if tree.node_count < 1 or not len(left) == len(right) == len(feature) == tree.node_count:
        raise _malformed("its node arrays disagree with its node count")
    split = left != -1
    if np.any(right[~split] != -1) or not _children_ok(left, right, split):
        raise _malformed("a node points outside the tree or back up it")
    if np.any((feature[split] < 0) | (feature[split] >= n_features)):
        raise _malformed(f"a node splits on a feature beyond the {n_features} the model takes")


def _check_predictor(predictor, owner) -> None:
    nodes = predictor.nodes
    if len(nodes) < 1:
        raise _malformed("a tree has no nodes")
    split = ~nodes["is_leaf"].astype(bool)
    left, right = nodes["left"].astype(np.int64), nodes["right"].astype(np.int64)
    if not _children_ok(left, right, split):
        raise _malformed("a node points outside the tree or back up it")
    feature = nodes["feature_idx"].astype(np.int64)
    n_features = getattr(owner, "n_features_in_", 0)
    if np.any((feature[split] < 0) | (feature[split] >= n_features)):
        raise _malformed(f"a node splits on a feature beyond the {n_features} the model takes")
    categorical = split & nodes["is_categorical"].astype(bool)
    if not categorical.any():
        return
    known = getattr(owner._bin_mapper, "is_categorical_", None)
    if known is None or len(known) != n_features or not np.all(np.asarray(known, bool)[feature[categorical]]):
        raise _malformed("a node splits by category on a feature that has none")
    bitsets = nodes["bitset_idx"][categorical].astype(np.int64)
    if np.any((bitsets < 0) | (bitsets >= len(predictor.raw_left_cat_bitsets))):
        raise _malformed("a node's category set lies outside the tree")
