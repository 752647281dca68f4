"""One case's stored counterfactuals as the Counterfactuals page shows them: the table, its changed cells, and
the numbers read from them (the page only lays them out)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ui import reporting
from ui.context import Analysis, run_or_stop


@dataclass(frozen=True)
class CaseCounterfactuals:
    """A factual and its distinct counterfactuals, read for the page."""

    table: pd.DataFrame  # the case first, then each counterfactual (feature names, "P(undesirable)", "valid")
    changed: pd.DataFrame  # True where a counterfactual's cell differs from the case
    before: float  # P(undesirable) of the case
    n_valid: int  # counterfactuals the model really predicts desirable
    after_mean: float | None  # their mean P(undesirable), None without any
    most_changed: tuple[tuple[str, int], ...]  # (feature label, how many counterfactuals change it), most first
    #: What the generator said of this case, in sentences (:func:`generator_says`).
    said: tuple[str, ...] = ()


def case_counterfactuals(analysis: Analysis, row: int) -> CaseCounterfactuals:
    """``row``'s counterfactuals, generated first under a progress bar when they are not yet."""
    analysis.ensure([row], what="case")
    cfset = analysis.explainer.counterfactuals([row])
    table, changed = run_or_stop(reporting.counterfactual_table, analysis.task, analysis.model, cfset, row)
    valid = table["valid"].iloc[1:].astype(bool)
    after = table["P(undesirable)"].iloc[1:][valid]
    labels = {f.name: f.label for f in analysis.task.features}
    counts = changed.iloc[1:].sum().sort_values(ascending=False, kind="stable")
    most = tuple((labels.get(name, name), int(c)) for name, c in counts.items() if c > 0)
    return CaseCounterfactuals(table=table, changed=changed, before=float(table["P(undesirable)"].iloc[0]),
                               n_valid=int(valid.sum()), after_mean=None if after.empty else float(after.mean()),
                               most_changed=most, said=generator_says(cfset, row, analysis.explainer.n_cf))


def generator_says(cfset, row: int, n_cf: int) -> tuple[str, ...]:
    """What the generator counted of one case, in sentences (its per-case tallies, :meth:`cases_counted`): that the
    case has more smallest ways out than asked for, and which are shown; that no change to one or two features flips
    it, so ``tree`` left it to the batch search. Nothing where the generator does not say."""
    said = []
    if row in (cfset.cases_counted("more_than_n_cf") or ()):
        said.append(f"This case has more smallest ways out than the {n_cf} asked for: those that change the fewest "
                    "features, with the smallest changes, are shown.")
    if row in (cfset.cases_counted("batch_fallback") or ()):
        read = "one or two features" if cfset.config.get("pairs", True) else "one feature"
        said.append(f"No change to only {read} flips this case, so these ways out come from a random search that "
                    "changes more features, each made as small as the search could (not read exactly from the trees).")
    return tuple(said)


def shown_row(chosen, pool: list[int], default: int) -> int:
    """The case the Counterfactuals page shows: the one chosen in its list when that is still a factual, else ``default``.

    Read before the list is drawn, so the case's counterfactuals exist when the list labels each row.
    """
    return chosen if chosen in set(pool) else default
