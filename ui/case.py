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
    #: What the generator said of this case: it has more smallest ways out than asked for; or no one- or two-feature
    #: way out, so ``tree`` left it to the batch search (False where the generator does not say).
    more_than_asked: bool = False
    searched_further: bool = False


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
                               most_changed=most, more_than_asked=row in (cfset.cases_counted("more_than_n_cf") or ()),
                               searched_further=row in (cfset.cases_counted("batch_fallback") or ()))


def shown_row(chosen, pool: list[int], default: int) -> int:
    """The case the Counterfactuals page shows: the one chosen in its list when that is still a factual, else ``default``.

    Read before the list is drawn, so the case's counterfactuals exist when the list labels each row.
    """
    return chosen if chosen in set(pool) else default
