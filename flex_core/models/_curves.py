"""How well the model ranks held-out cases, whatever the cutoff: ROC and precision-recall curves with their
areas against the no-skill line, the cumulative gain curve, and precision by bin of predicted probability.

Everything is of the undesirable class (1 = undesirable), on rows the model was not trained on
(:func:`model_curves` refuses a model without such rows). :func:`quality_curves` is the pure part: it takes
true outcomes and probabilities, so any scores can be checked by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._contract import Result, json_floats
from .._errors import ConfigError
from ..data import TaskSpec
from ._fit import FittedModel
from ._quality import held_out_only

__all__ = ["ModelCurves", "quality_curves", "model_curves"]


@dataclass(frozen=True, eq=False)
class ModelCurves(Result):
    """ROC, precision-recall, cumulative gain and precision by bin of one model on held-out rows.

    Attributes
    ----------
    thresholds : ndarray of shape (n_points,)
        Every distinct P(undesirable) of the rows, from high to low, after a first point above all of them
        (``inf`` in scikit-learn, written as null): the cutoffs the curves' points stand for.
    fpr, tpr : ndarray of shape (n_points,)
        The ROC curve (``roc_curve(drop_intermediate=False)``): false and true positive rates when the rows with
        P(undesirable) >= the threshold are predicted undesirable.
    precision, recall : ndarray of shape (n_pr_points,)
        The precision-recall curve (``precision_recall_curve``), recall from 1 down to 0.
    roc_auc, average_precision : float
        ``roc_auc_score`` and ``average_precision_score``. No skill scores 0.5 and ``prevalence``.
    prevalence : float
        Share of the rows that are undesirable: the precision of a model that cannot tell cases apart.
    gain_share, gain_found : ndarray of shape (n_points,)
        Cumulative gain: taking the rows with the highest P(undesirable) first, the share of rows taken at each
        threshold and the share of all undesirable rows among them (no skill: the diagonal).
    bin_low, bin_high : ndarray of shape (n_bins,)
        Equal-width bins of P(undesirable) over [0, 1] (a row at a bin's upper edge is in the next bin; 1 is in
        the last).
    bin_rows, bin_undesirable : ndarray of int, shape (n_bins,)
        Rows in each bin, and how many of them are undesirable.
    config : dict
        ``rows``, ``undesirable_rows``, ``n_bins`` and ``evaluated_on`` (which rows, in words).
    """

    thresholds: np.ndarray
    fpr: np.ndarray
    tpr: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    roc_auc: float
    average_precision: float
    prevalence: float
    gain_share: np.ndarray
    gain_found: np.ndarray
    bin_low: np.ndarray
    bin_high: np.ndarray
    bin_rows: np.ndarray
    bin_undesirable: np.ndarray
    config: dict = field(default_factory=dict)
    versions: dict | None = field(default=None, repr=False)

    kind = "model_quality"

    @property
    def bin_precision(self) -> np.ndarray:
        """Share undesirable in each bin: the precision of predicting its rows undesirable; NaN for an empty bin."""
        rows = self.bin_rows.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(rows > 0, self.bin_undesirable / rows, np.nan)

    @property
    def gain_lift(self) -> np.ndarray:
        """Lift: gain_found / gain_share (how many times the no-skill share is found); NaN at the first point."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.gain_share > 0, self.gain_found / self.gain_share, np.nan)

    def to_frame(self) -> pd.DataFrame:
        """Precision by bin, one row per bin: its edges, rows, undesirable rows and precision."""
        return pd.DataFrame({"bin_low": self.bin_low, "bin_high": self.bin_high, "rows": self.bin_rows,
                             "undesirable": self.bin_undesirable, "precision": self.bin_precision})

    def _body(self) -> dict:
        return {
            "roc_auc": self.roc_auc,
            "average_precision": self.average_precision,
            "prevalence": self.prevalence,
            "roc": {"thresholds": self.thresholds, "fpr": self.fpr, "tpr": self.tpr},
            "precision_recall": {"precision": self.precision, "recall": self.recall},
            "gain": {"share": self.gain_share, "found": self.gain_found},
            "bins": [
                {"low": lo, "high": hi, "rows": int(n), "undesirable": int(u)}
                for lo, hi, n, u in zip(self.bin_low, self.bin_high, self.bin_rows, self.bin_undesirable)
            ],
            "config": self.config,
        }

    @classmethod
    def _from_body(cls, data: Mapping) -> ModelCurves:
        roc, pr, gain, bins = data["roc"], data["precision_recall"], data["gain"], data["bins"]
        thresholds = json_floats(roc["thresholds"])
        thresholds[np.isnan(thresholds)] = np.inf  # the first point, above every probability
        return cls(
            thresholds=thresholds, fpr=json_floats(roc["fpr"]), tpr=json_floats(roc["tpr"]),
            precision=json_floats(pr["precision"]), recall=json_floats(pr["recall"]),
            roc_auc=float(data["roc_auc"]), average_precision=float(data["average_precision"]),
            prevalence=float(data["prevalence"]), gain_share=json_floats(gain["share"]),
            gain_found=json_floats(gain["found"]),
            bin_low=json_floats([b["low"] for b in bins]), bin_high=json_floats([b["high"] for b in bins]),
            bin_rows=np.array([b["rows"] for b in bins], dtype=int),
            bin_undesirable=np.array([b["undesirable"] for b in bins], dtype=int),
            config=dict(data.get("config") or {}), versions=data.get("versions"),
        )


def quality_curves(y_true, p, *, n_bins: int = 10, evaluated_on: str = "") -> ModelCurves:
    """The curves and areas of P(undesirable) ``p`` against the true outcomes ``y_true`` (1 = undesirable).

    Parameters
    ----------
    y_true : array-like of shape (n_rows,)
        1 where the true outcome is undesirable, else 0; both must occur.
    p : array-like of shape (n_rows,)
        P(undesirable) of each row, in [0, 1].
    n_bins : int
        Equal-width bins of P(undesirable) for the precision by bin (at least 2).
    evaluated_on : str
        Which rows these are, in words; kept in ``config``.

    Raises
    ------
    ConfigError
        Lengths differ, a probability lies outside [0, 1], fewer than 2 bins, or the rows hold only one outcome
        (a ROC curve then has no rates to draw).
    """
    from sklearn.metrics import average_precision_score, precision_recall_curve, roc_auc_score, roc_curve

    y, p = np.asarray(y_true, dtype=int), np.asarray(p, dtype=float)
    if y.shape != p.shape or y.ndim != 1:
        raise ConfigError("The curves need one probability per true outcome.")
    if int(n_bins) < 2:
        raise ConfigError("Precision by bin needs at least 2 bins.")
    if not np.isfinite(p).all() or p.min() < 0 or p.max() > 1:
        raise ConfigError("Probabilities must lie between 0 and 1.")
    positives = int(y.sum())
    if positives in (0, len(y)):
        raise ConfigError("The held-out rows hold only one outcome, so there is no ROC or precision-recall curve to draw.")
    fpr, tpr, thresholds = roc_curve(y, p, drop_intermediate=False)
    precision, recall, _ = precision_recall_curve(y, p)
    negatives = len(y) - positives
    n_bins = int(n_bins)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bins = np.clip(np.floor(np.round(p * n_bins, 9)).astype(int), 0, n_bins - 1)  # round: 0.3 * 10 is in [0.3, 0.4)
    return ModelCurves(
        thresholds=thresholds, fpr=fpr, tpr=tpr, precision=precision, recall=recall,
        roc_auc=float(roc_auc_score(y, p)), average_precision=float(average_precision_score(y, p)),
        prevalence=positives / len(y),
        gain_share=(tpr * positives + fpr * negatives) / len(y), gain_found=tpr,
        bin_low=edges[:-1], bin_high=edges[1:], bin_rows=np.bincount(bins, minlength=n_bins),
        bin_undesirable=np.bincount(bins, weights=y, minlength=n_bins).astype(int),
        config={"rows": len(y), "undesirable_rows": positives, "n_bins": n_bins, "evaluated_on": evaluated_on},
    )


def model_curves(task: TaskSpec, model: FittedModel, *, n_bins: int = 10) -> ModelCurves:
    """:func:`quality_curves` of ``model`` on its held-out rows.

    Raises ConfigError (:data:`flex_core.models.NOT_HELD_OUT`) when the model has no rows it was not trained on
    (a model loaded from a file is scored on every row of the data): its curves would flatter it.
    """
    held = held_out_only(task, model)
    return quality_curves(held.y_true, held.p, n_bins=n_bins, evaluated_on=held.evaluated_on)
