"""Which rows are factuals: cases the model rejects with the margin a way out must clear, and not by memory.

The validity rule (``_validity``) asks a counterfactual to be accepted with a margin. A factual the
model rejects only narrowly, or only because it memorised that very row's label, gives a way out
that is the model's noise, not its rule: on a forest trained on 3% flipped labels, 4-10% of the
factuals were training rows whose flipped label the forest had memorised, and for them a change
of a pure-noise feature really flips the model (noise F 0.03-0.05 on seeds 1-3). No rule on the
counterfactuals can remove that; the choice of factuals must. Under the robust rule a row is a
factual when

1. **Margin**: P(undesirable) > 0.5 + ``margin`` (the same margin the counterfactual must clear
   on the other side; ties and narrow rejections are borderline cases, left out and counted);
2. **Out of bag**: for a training row of a bagged forest FLEX trained (``fit_model``'s random
   forest), the same holds for its out-of-bag P(undesirable): the vote of the trees that did not
   see the row. A memorised row is rejected by the trees that saw it and accepted by the others
   (its in-bag share is about 0.63, so the margin alone keeps many of them). A regressor's forest
   (a band) is held to the off-band score of its out-of-bag mean prediction: a row whose noisy
   number the forest memorised is predicted off the band only by the trees that saw it. Models trained
   elsewhere (whose training rows and bootstrap are unknown) and models without a bootstrap get
   only the margin, and the selection says so.

Measured on ``tests/planted_learned.py`` (seeds 0-3, 200 factuals): the margin alone left 4-30 of
the disagreeing rows and noise F 0.008-0.031; margin and out of bag leave 0 and noise F 0-0.012.
The paper's setting (``margin=0, radius=0``) keeps its rule: every row with P(undesirable) > 0.5.
"""

from __future__ import annotations

import numpy as np
from sklearn.compose import ColumnTransformer

from .._format import format_number
from ..data import TaskSpec
from ..models import FittedModel
from ._validity import Validity

__all__ = ["select_factuals", "out_of_bag_undesirable", "selection_note"]


def _bagged_forest(model: FittedModel):
    """(encoder, forest) of a bagged forest FLEX trained: a classifier's with one undesired class, or a regressor's
    (a band); None for any other model."""
    if not model.trained_here:
        return None
    if model.band is None:
        parts = model.encoder_and_classifier()
        if parts is None or len(model.undesired) != 1:
            return None
    else:
        steps: list = list(getattr(model.pipeline, "steps", ()))
        if len(steps) != 2 or not isinstance(steps[0][1], ColumnTransformer):
            return None
        parts = (steps[0][1], steps[1][1])
    forest = parts[1]
    if not getattr(forest, "bootstrap", False) or not hasattr(forest, "estimators_samples_"):
        return None
    return parts


def out_of_bag_undesirable(task: TaskSpec, model: FittedModel) -> np.ndarray | None:
    """Per row of ``task.frame``: P(undesirable) from the trees that did not see it (the model's own P for rows
    no tree saw, i.e. rows outside the training set); None unless FLEX trained the model as a bagged forest.

    A regressor's (a task with a band) is the off-band score of the mean prediction of those trees, as the
    forest's own score is of the mean prediction of all its trees.
    """
    parts = _bagged_forest(model)
    if parts is None:
        return None
    encoder, forest = parts
    X = task.X
    p = model.predict_proba(X)[:, 1]
    coded = encoder.transform(model.estimator_input(X))
    train = task.frame.index.get_indexer(model.train_index)  # estimators_samples_ index the training rows in this order
    if model.band is None:
        column = list(forest.classes_).index(model.classes[model.undesired_column])

        def vote(tree, rows):
            return tree.predict_proba(coded[rows])[:, column]
    else:
        def vote(tree, rows):
            return tree.predict(coded[rows])
    in_train = np.zeros(len(X), bool)
    in_train[train] = True
    total, votes = np.zeros(len(X)), np.zeros(len(X))
    for tree, seen in zip(forest.estimators_, forest.estimators_samples_):
        drawn = np.zeros(len(X), bool)
        drawn[train[seen]] = True  # by row, not position: a bootstrap of rows may list a row twice
        rows = np.flatnonzero(in_train & ~drawn)
        total[rows] += vote(tree, rows)
        votes[rows] += 1
    mean = total / np.maximum(votes, 1)
    if model.band is not None:
        mean = model.band.score(mean, model.band_scale)
    # A training row every tree saw (possible with few trees) has no out-of-bag vote: its own P stands.
    return np.where(in_train & (votes > 0), mean, p)


def select_factuals(task: TaskSpec, model: FittedModel, rule: Validity) -> tuple[np.ndarray, dict]:
    """The factual rows under ``rule`` (see the module docstring) and what was left out, as plain data.

    Returns
    -------
    rows : ndarray of int
        Row ids of ``task.frame``.
    selection : dict
        ``criterion``, ``margin``, ``out_of_bag`` (whether the out-of-bag check applied), ``candidates``
        (rows with P(undesirable) > 0.5), ``borderline`` (of them, left out by the margin) and
        ``memorised`` (then left out by the out-of-bag check).
    """
    index = task.frame.index.to_numpy()
    p = model.predict_proba(task.X)[:, 1]
    candidates = p > 0.5
    paper = rule.margin == 0 and rule.radius == 0
    threshold = 0.5 + rule.margin
    clear = candidates & (p > threshold)
    oob = None if paper else out_of_bag_undesirable(task, model)
    kept = clear if oob is None else clear & (oob > threshold)
    selection = {
        "criterion": "P(undesirable) > 0.5" if paper else (
            "P(undesirable) > 0.5 + margin" + ("" if oob is None else ", also out of bag for a training row")),
        "margin": 0.0 if paper else rule.margin,
        "out_of_bag": oob is not None,
        "candidates": int(candidates.sum()),
        "borderline": int((candidates & ~clear).sum()),
        "memorised": int((clear & ~kept).sum()),
    }
    return index[kept], selection


def selection_note(selection: dict, undesirable: str = "undesirable", *, margin_units: float | None = None) -> str | None:
    """One sentence on the candidate cases left out (None when none were); ``undesirable`` names the outcome
    in the data's words ("P(Rejected)"). ``margin_units``: a regressor's margin in the target's units (its score is
    no probability), so borderline reads as a prediction that close to the band."""
    borderline, memorised = selection["borderline"], selection["memorised"]
    if not borderline and not memorised:
        return None
    parts = []
    if borderline and margin_units is not None:
        parts.append(f"{borderline:,} as borderline (predicted within {format_number(margin_units)} of the desired band)")
    elif borderline:
        parts.append(f"{borderline:,} as borderline (P({undesirable}) at most 0.5 + {selection['margin']:g})")
    if memorised and margin_units is not None:
        parts.append(f"{memorised:,} as memorised (the trees that did not train on the row do not predict it that far "
                     "outside the desired band)")
    elif memorised:
        parts.append(f"{memorised:,} as memorised (the trees that did not train on the row do not predict "
                     f"{undesirable} for it with that margin)")
    return (f"Of the {selection['candidates']:,} cases the model predicts {undesirable}, {' and '.join(parts)} were left "
            "out of the cases to explain: a way out of them would be the model's noise (the paper's setting, margin 0 "
            "and radius 0, keeps them).")
