"""Constraints between features (:mod:`flex_core.data._rules`) held over coded counterfactuals.

:func:`constraints_hold` is the one check every generator uses: ``batch`` and ``batch-plausible`` through
their validity rule (a candidate that breaks a constraint is never valid, so neither the search, nor a
revert or a shrink while making it minimal, keeps one), the others when their output is packed (what
breaks a constraint is dropped, counted per constraint). :class:`RuleCheck` also tallies which
constraint rejected how many rows, so a user sees which rule bites.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..data import TaskSpec

__all__ = ["RuleCheck", "constraints_hold", "constraint_breaks", "rules_report"]


def constraint_breaks(task: TaskSpec, rows: np.ndarray, factuals: np.ndarray) -> np.ndarray:
    """Which row breaks which of the task's constraints between features, shape (n, n_constraints) bool.

    ``rows`` and ``factuals`` are coded (n, F) (as :func:`~._set.encode_rows` makes them); row i's factual is
    ``factuals[i]`` (one factual row (F,) is used for every row).
    """
    rows = np.atleast_2d(np.asarray(rows, dtype=float))
    factuals = np.broadcast_to(np.asarray(factuals, dtype=float), rows.shape)
    index = {name: j for j, name in enumerate(task.feature_names)}
    out = np.zeros((len(rows), len(task.rules)), dtype=bool)
    for k, rule in enumerate(task.rules):
        out[:, k] = ~rule.holds(rows, factuals, index)
    return out


def constraints_hold(task: TaskSpec, rows: np.ndarray, factuals: np.ndarray) -> np.ndarray:
    """Which coded rows (n, F) hold every constraint between features of ``task``, given their factuals; (n,) bool.

    All True for a task without such constraints. A generator that proposes candidates calls this to
    keep only those that hold, before it makes them minimal (see :class:`RuleCheck`).
    """
    return ~constraint_breaks(task, rows, factuals).any(axis=1)


@dataclass(frozen=True, eq=False)
class RuleCheck:
    """The task's constraints between features as a check on coded rows, with a tally of what each rejected.

    ``rejected[k]``: rows checked so far that broke constraint k (a row breaking two counts for both);
    ``checked``: rows checked. :meth:`fresh` gives a copy with a zero tally (one per chunk of a search).
    """

    texts: tuple[str, ...]
    task: TaskSpec = field(repr=False)
    rejected: np.ndarray = field(default=None, repr=False)  # type: ignore[assignment]
    checked: np.ndarray = field(default=None, repr=False)  # type: ignore[assignment]

    def __post_init__(self):
        if self.rejected is None:
            object.__setattr__(self, "rejected", np.zeros(len(self.texts), dtype=np.int64))
        if self.checked is None:
            object.__setattr__(self, "checked", np.zeros(1, dtype=np.int64))

    @classmethod
    def of(cls, task: TaskSpec) -> RuleCheck | None:
        """The check of ``task``'s constraints between features, or None when it has none."""
        return cls(tuple(task.rule_texts), task) if task.rules else None

    def fresh(self) -> RuleCheck:
        return RuleCheck(self.texts, self.task)

    def for_task(self, task: TaskSpec) -> RuleCheck:
        """The same check over ``task`` (e.g. one without its rows, for a worker process)."""
        return RuleCheck(self.texts, task, self.rejected, self.checked)

    def __call__(self, rows: np.ndarray, factuals: np.ndarray) -> np.ndarray:
        """Which rows hold every constraint; the rows that do not are added to the tally."""
        breaks = constraint_breaks(self.task, rows, factuals)
        self.rejected[:] += breaks.sum(axis=0)
        self.checked[0] += len(breaks)
        return ~breaks.any(axis=1)


def rules_report(texts, rejected, dropped, at_factual) -> dict:
    """The ``config["constraints_between"]`` block: per constraint, the rows it rejected, its share, drops.

    ``rejected``: candidates each constraint rejected while a generator searched (None: it does not
    search with them); ``dropped``: returned counterfactuals dropped for breaking each; ``at_factual``:
    queries whose own values break each (their counterfactuals must fix that).
    """
    rejected = np.zeros(len(texts), dtype=np.int64) if rejected is None else np.asarray(rejected, dtype=np.int64)
    total = int(rejected.sum() + np.asarray(dropped).sum())
    return {
        "constraints": [
            {
                "constraint": text,
                "rejected_while_searching": int(r),
                "dropped_from_output": int(d),
                "share_of_rejections": (int(r) + int(d)) / total if total else 0.0,
                "queries_breaking_it_as_they_are": int(a),
            }
            for text, r, d, a in zip(texts, rejected, dropped, at_factual)
        ],
    }
