"""Constraints between features (:mod:`flex_core.data.rules`) held over coded counterfactuals.

:meth:`~flex_core.TaskSpec.rules_hold` is the one check every generator uses: ``batch`` and ``batch-plausible`` through
their validity rule (a candidate that breaks a constraint is never valid, so neither the search, nor a
revert or a shrink while making it minimal, keeps one), the others when their output is packed (what
breaks a constraint is dropped, counted per constraint). :class:`RuleCheck` also tallies which
constraint rejected how many rows, so a user sees which rule bites.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..data import TaskSpec

__all__ = ["RuleCheck", "rules_report", "merged_rules_report"]


@dataclass(frozen=True, eq=False)
class RuleCheck:
    """The task's constraints between features as a check on coded rows, with a tally of what each rejected.

    ``rejected[k]``: rows checked so far that broke constraint k (a row breaking two counts for both);
    ``checked``: rows checked. :meth:`fresh` gives a copy with a zero tally (one per chunk of a search).
    """

    texts: tuple[str, ...]
    task: TaskSpec = field(repr=False)
    rejected: np.ndarray = field(init=False, repr=False)
    checked: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "rejected", np.zeros(len(self.texts), dtype=np.int64))
        object.__setattr__(self, "checked", np.zeros(1, dtype=np.int64))

    @classmethod
    def of(cls, task: TaskSpec) -> RuleCheck | None:
        """The check of ``task``'s constraints between features, or None when it has none."""
        return cls(tuple(task.rule_texts), task) if task.rules else None

    def fresh(self) -> RuleCheck:
        return RuleCheck(self.texts, self.task)

    def for_task(self, task: TaskSpec) -> RuleCheck:
        """The same check over ``task`` (e.g. one without its rows, for a worker process), with a zero tally."""
        return RuleCheck(self.texts, task)

    def __call__(self, rows: np.ndarray, factuals: np.ndarray) -> np.ndarray:
        """Which rows hold every constraint; the rows that do not are added to the tally."""
        breaks = self.task.rule_breaks(rows, factuals)
        self.rejected[:] += breaks.sum(axis=0)
        self.checked[0] += len(breaks)
        return np.asarray(~breaks.any(axis=1), dtype=bool)


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


def merged_rules_report(configs) -> dict | None:
    """The ``constraints_between`` blocks of several sets' configs as one (counts summed, drops listed once each).

    None when no config has one; the shares are recomputed from the summed counts.
    """
    blocks = [c["constraints_between"] for c in configs if "constraints_between" in c]
    if not blocks:
        return None
    texts = [r["constraint"] for r in blocks[0]["constraints"]]
    total = {key: np.zeros(len(texts), dtype=np.int64)
             for key in ("rejected_while_searching", "dropped_from_output", "queries_breaking_it_as_they_are")}
    for block in blocks:
        for k, rule in enumerate(block["constraints"]):
            for key in total:
                total[key][k] += int(rule[key])
    merged = rules_report(texts, total["rejected_while_searching"], total["dropped_from_output"],
                          total["queries_breaking_it_as_they_are"])
    dropped = [d for block in blocks for d in block.get("dropped", [])]
    return {**merged, **({"dropped": dropped} if dropped else {})}
