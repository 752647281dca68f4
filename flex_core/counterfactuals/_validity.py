"""When a counterfactual counts as valid: one rule, used by every generator, the refinement and the necessity check.

A forest's P(undesirable) is a vote. A counterfactual at P = 0.50 is a tie, one at 0.49 a
knife edge, and one a hair past the forest's split on a number sits where another fit of the same
data puts its split a hair further: Pawelczyk, Broelemann and Kasneci (UAI 2020) show that
counterfactuals near the decision boundary are invalidated by equally accurate models
(*predictive multiplicity*). Dutta et al. (ICML 2022, RobX) measure a counterfactual's
*stability* as the mean minus the standard deviation of the model's score over a Gaussian
neighbourhood of it, robust above a threshold. The rule here asks the same two things
deterministically, at the cost of at most one more model row per row checked:

1. **Margin**: P(undesirable) < 0.5 - ``margin`` (the desirable class's score above 0.5 + margin;
   with 100 trees, at least 100 x margin more trees vote desirable than undesirable);
2. **Neighbourhood**: the same holds with every changed number moved back toward the factual's
   value by ``radius`` x its training range (to the factual's value where the change is smaller):
   the corner of the neighbourhood that lies toward the decision boundary. Levels have no
   neighbourhood (a level is a level).

Why not RobX's Gaussian samples: they cost K model rows for every row a search or a refinement
scores (tens of thousands), are random, and are undefined for categorical features; the pulled-back
corner is the sample that fails first where the model is monotone near the counterfactual. A tie is
never valid (the inequality is strict). ``margin=0, radius=0`` is the paper's setting: P(undesirable) < 0.5.

3. **Constraints between features** (a task's ``rules``, attached by :meth:`Validity.on`): a row that breaks
   one is never valid, and is not even scored. Every step that asks this rule (a search's candidates, a
   revert, a shrink, the necessity check) therefore keeps them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from .._errors import ConfigError
from ._rulecheck import RuleCheck

__all__ = ["Validity", "DEFAULT_MARGIN", "DEFAULT_RADIUS", "validity_of", "training_ranges"]

#: The default margin on P(undesirable): valid below 0.5 - 0.15 = 0.35 (see the module docstring).
DEFAULT_MARGIN = 0.15
#: The default neighbourhood: changed numbers pulled back by 1% of their training range must stay valid.
DEFAULT_RADIUS = 0.01


@dataclass(frozen=True, eq=False)
class Validity:
    """The validity rule: P(undesirable) < 0.5 - ``margin``, also ``radius`` x range nearer the factual.

    Parameters
    ----------
    margin : float in [0, 0.5), default :data:`DEFAULT_MARGIN`
    radius : float in [0, 1), default :data:`DEFAULT_RADIUS`
        Share of a number's training range. ``margin=0, radius=0`` is the paper's setting (P < 0.5;
        a tie at 0.5 is still not valid).
    steps : ndarray of shape (F,), optional
        ``radius`` x each feature's range, 0 for levels: set by :meth:`on`; without it only the margin applies.
    rules : RuleCheck, optional
        The task's constraints between features (set by :meth:`on`): a row that breaks one is not valid.
    """

    margin: float = DEFAULT_MARGIN
    radius: float = DEFAULT_RADIUS
    steps: np.ndarray | None = field(default=None, repr=False)
    rules: RuleCheck | None = field(default=None, repr=False)

    def __post_init__(self):
        margin, radius = float(self.margin), float(self.radius)
        if not 0.0 <= margin < 0.5:
            raise ConfigError(f"The validity margin must be at least 0 and below 0.5 (got {self.margin!r}).")
        if not 0.0 <= radius < 1.0:
            raise ConfigError(f"The validity radius must be at least 0 and below 1 (got {self.radius!r}).")
        object.__setattr__(self, "margin", margin)
        object.__setattr__(self, "radius", radius)

    def on(self, task, ranges=None) -> Validity:
        """This rule with its neighbourhood sized for ``task`` (``ranges``: training ranges, default the data's)."""
        ranges = task.ranges() if ranges is None else np.asarray(ranges, dtype=float)
        continuous = np.array([f.is_continuous for f in task.features])
        return replace(self, steps=np.where(continuous, self.radius * np.nan_to_num(ranges), 0.0),
                       rules=RuleCheck.of(task))

    def with_rules(self, rules: RuleCheck | None) -> Validity:
        """This rule checking ``rules`` (e.g. a fresh tally for one chunk of a search)."""
        return replace(self, rules=rules)

    def _holding(self, rows: np.ndarray, factuals) -> np.ndarray | None:
        """Which rows hold the constraints between features (None: there are none, every row does)."""
        if self.rules is None or len(rows) == 0:
            return None
        return self.rules(rows, np.broadcast_to(np.asarray(factuals, dtype=float), rows.shape))

    @property
    def threshold(self) -> float:
        """Valid strictly below this P(undesirable)."""
        return 0.5 - self.margin

    def desirable(self, p_undesirable) -> np.ndarray:
        """Which P(undesirable) values (any shape) meet the margin."""
        return np.asarray(p_undesirable, dtype=float) < self.threshold

    def pulled(self, rows: np.ndarray, factuals: np.ndarray) -> np.ndarray:
        """Rows (n, F) with every changed number moved ``steps`` toward the factual's value (no further than it)."""
        rows = np.asarray(rows, dtype=float)
        if self.steps is None:
            return rows.copy()
        delta = rows - factuals
        pulled = np.where(np.abs(delta) <= self.steps, factuals, rows - np.sign(delta) * self.steps)
        return np.where(self.steps > 0, pulled, rows)

    def score(self, p_undesirable, rows: np.ndarray, factuals: np.ndarray, *, only: np.ndarray | None = None) -> np.ndarray:
        """The rows' worst P(undesirable) over the neighbourhood: the larger of the row's and its pulled corner's.

        ``p_undesirable`` scores coded rows (n, F); ``only`` (bool, (n,)): score the corner of these rows
        only (the others keep their own P). The rule is ``desirable(score)``.
        """
        rows = np.asarray(rows, dtype=float)
        hold = self._holding(rows, factuals)
        if hold is not None and not hold.all():  # a row that breaks a constraint scores 1 (never valid), unscored
            p = np.ones(len(rows))
            if hold.any():
                p[hold] = replace(self, rules=None).score(p_undesirable, rows[hold], _rows_of(factuals, hold, rows.shape),
                                     only=None if only is None else only[hold])
            return p
        p = np.asarray(p_undesirable(rows), dtype=float).copy()
        corner = self.pulled(rows, factuals)
        moved = (corner != rows).any(axis=1) if only is None else only & (corner != rows).any(axis=1)
        if moved.any():
            p[moved] = np.maximum(p[moved], p_undesirable(corner[moved]))
        return p

    def check(self, p_undesirable, rows: np.ndarray, factuals: np.ndarray) -> np.ndarray:
        """Which coded rows (n, F) are valid counterfactuals of their factuals (n, F): margin and neighbourhood.

        The corner is scored only for rows that meet the margin themselves (the others fail either way).
        """
        rows = np.asarray(rows, dtype=float)
        if len(rows) == 0:
            return np.zeros(0, dtype=bool)
        hold = self._holding(rows, factuals)
        if hold is not None and not hold.all():  # a row that breaks a constraint is not valid, and not scored
            ok = np.zeros(len(rows), dtype=bool)
            if hold.any():
                ok[hold] = replace(self, rules=None).check(p_undesirable, rows[hold], _rows_of(factuals, hold, rows.shape))
            return ok
        p = np.asarray(p_undesirable(rows), dtype=float)
        ok = self.desirable(p)
        corner = self.pulled(rows, factuals)
        moved = ok & (corner != rows).any(axis=1)
        if moved.any():
            ok[moved] = self.desirable(p_undesirable(corner[moved]))
        return ok

    def describe(self) -> dict:
        """The rule as the JSON ``generator`` block and a set's config name it."""
        return {
            "criterion": "P(undesirable) < 0.5 - margin, also with every changed number moved radius x its range "
                         "toward the factual's value",
            "margin": self.margin,
            "radius": self.radius,
            "threshold": self.threshold,
            "setting": "paper" if self.margin == 0 and self.radius == 0 else "robust",
        }


def _rows_of(factuals, keep: np.ndarray, shape) -> np.ndarray:
    """The factuals of the kept rows (``factuals`` may be one row for all)."""
    return np.broadcast_to(np.asarray(factuals, dtype=float), shape)[keep]


def training_ranges(task, model) -> np.ndarray:
    """range(X_j) = max - min over the model's training rows (Algorithm 1's ``range``); NaN for categorical."""
    train = task.frame.loc[model.train_index]
    return np.array(
        [float(train[f.name].max() - train[f.name].min()) if f.is_continuous else np.nan for f in task.features]
    )


def validity_of(generator) -> Validity:
    """The rule a generator was given (its ``margin`` and ``radius`` settings), or the default for one without them."""
    return Validity(getattr(generator, "margin", DEFAULT_MARGIN), getattr(generator, "radius", DEFAULT_RADIUS))
