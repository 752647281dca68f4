"""What if a case's values were different? Its prediction and its minimal counterfactuals, for a case that
need not be a row of the data.

:func:`check_case` validates edited values once (unknown feature, a value outside the data's range, an
unknown level, a changed immutable feature: :class:`~flex_core.ConfigError` naming it);
:func:`what_if` scores the case and searches its counterfactuals with the store's generator and
settings, as for any factual.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from .._errors import ConfigError
from .._format import format_number, listing, read_number
from ..data._columns import category_text
from ..data._task import TaskSpec
from ._scoring import scorer_for
from ._set import CounterfactualSet, encode_rows
from ._store import CounterfactualStore

__all__ = ["WhatIf", "check_case", "what_if", "data_limits"]


def data_limits(task: TaskSpec, name: str) -> tuple[float, float]:
    """(min, max) of a continuous feature over the data's rows: the range an edited value must stay in."""
    column = task.frame[name]
    return float(column.min()), float(column.max())


def check_case(task: TaskSpec, values: Mapping, *, row: int | None = None) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The case as a one-line frame in the task's format, and the features edited from ``row``'s values.

    Parameters
    ----------
    values : mapping feature -> value
        The case's values. With ``row``, features left out keep the row's values; without it, every
        feature is needed.
    row : int, optional
        The row of the data the case starts from (its id in ``task.frame``).

    Raises
    ------
    ConfigError
        An unknown feature or row, a missing feature, a number that is not one (or not whole for an
        integer feature) or outside the data's range, an unknown level, or an immutable feature changed.
    """
    names = task.feature_names
    unknown = [str(n) for n in values if n not in names]
    if unknown:
        raise ConfigError(f"Unknown {listing('feature', unknown)}; the features are: {', '.join(names)}.")
    if row is not None:
        if int(row) not in task.frame.index:
            raise ConfigError(f"Row {row} is not in the data (it may have been dropped).")
        base = task.frame.loc[int(row), names]
    else:
        missing = [n for n in names if n not in values]
        if missing:
            raise ConfigError(f"The case needs a value for every feature; missing: {', '.join(missing)}.")
        base = None
    case: dict = {}
    edited: list[str] = []
    for feature in task.features:
        name = feature.name
        if name not in values:
            case[name] = base[name]
            continue
        value = values[name]
        if feature.is_continuous:
            number = read_number(value, name=feature.label)
            if feature.integer and not number.is_integer():
                raise ConfigError(f"{feature.label} takes whole numbers only; got {format_number(number)}.")
            low, high = data_limits(task, name)
            if not low <= number <= high:
                raise ConfigError(
                    f"{feature.label} = {format_number(number)} is outside the data's range "
                    f"{format_number(low)} to {format_number(high)}: the model has seen no such case."
                )
            case[name] = number
            changed = base is not None and abs(number - float(base[name])) > 0
        else:
            text = category_text(value)
            levels = tuple(feature.categories or ())
            if text not in levels:
                raise ConfigError(
                    f"{feature.label}: {text!r} is not a level of the data; the levels are: {', '.join(map(str, levels))}."
                )
            case[name] = text
            changed = base is not None and text != category_text(base[name])
        if changed and feature.immutable:
            raise ConfigError(f"{feature.label} is immutable: a case's value of it cannot be edited.")
        if changed:
            edited.append(name)
    frame = pd.DataFrame([case], index=[int(row) if row is not None else 0], columns=names)
    return frame.astype({f.name: float for f in task.features if f.is_continuous}), tuple(edited)


@dataclass(frozen=True)
class WhatIf:
    """A case's prediction and minimal counterfactuals.

    Attributes
    ----------
    case : DataFrame
        One line, the task's features in its format; its index is ``row`` (0 without one).
    row : int or None
        The row of the data the case started from.
    edited : tuple of str
        Features whose value differs from the row's. A case with edits is not a row of the data.
    probability : float
        P(undesirable) of the case.
    predicted_undesirable : bool
        ``probability`` above 0.5, as FLEX's factuals.
    counterfactuals : CounterfactualSet or None
        The store's counterfactuals of the case, one query whose id is ``case``'s index (for an unedited
        row, the stored ones); None when the case is predicted desirable (nothing to change).
        ``counterfactuals.to_frame(task)`` shows them in the data's values.
    seconds : float
        Wall time of the call.
    """

    case: pd.DataFrame
    row: int | None
    edited: tuple[str, ...]
    probability: float
    predicted_undesirable: bool
    counterfactuals: CounterfactualSet | None
    seconds: float

    @property
    def query_id(self) -> int:
        """The id of the case in ``counterfactuals`` (its row, or 0 for a case typed in)."""
        return int(self.case.index[0])

    @property
    def n_valid(self) -> int:
        """Distinct valid counterfactuals found (0 when none was searched)."""
        return 0 if self.counterfactuals is None else int(self.counterfactuals.valid.sum())

    @property
    def is_row(self) -> bool:
        """The case is a row of the data, unedited."""
        return self.row is not None and not self.edited

    @property
    def is_factual(self) -> bool:
        """An unedited row the model predicts undesirable: one FLEX explains (a region's query can be one)."""
        return self.is_row and self.predicted_undesirable

    def why_not_a_query(self, undesirable: str = "undesirable") -> str | None:
        """Why this case cannot be a Regional explorer's query, in a sentence; None when it can."""
        if self.row is None:
            return "This case was typed in, not taken from the data: a region's query must be a row of the data."
        if self.edited:
            return (f"This case is row {self.row} with {len(self.edited)} edited "
                    f"{'value' if len(self.edited) == 1 else 'values'}, so it is not a row of the data; a region is a "
                    "query row and its nearest neighbours among the data's rows. Reset the edits to send row "
                    f"{self.row}.")
        if not self.predicted_undesirable:
            return (f"Row {self.row} is predicted not {undesirable}: a region's query must be a case the model "
                    f"predicts {undesirable}.")
        return None


def what_if(store: CounterfactualStore, values: Mapping, *, row: int | None = None) -> WhatIf:
    """The prediction and minimal counterfactuals of a case (``values``, optionally starting from ``row``).

    The case is validated by :func:`check_case`. An unedited row's counterfactuals come from the store
    (generated once, then reused); an edited case's are searched by the store's generator with the
    store's settings (n_cf, seed, refine, constraints), seeded by the row id, and not stored. A case
    predicted desirable has no counterfactuals to search.
    """
    start = time.perf_counter()
    task, model = store.task, store.model
    case, edited = check_case(task, values, row=row)
    # the store's scorer: the model's own P to the bit (a forest's trees summed in its order), without predict_proba's
    # per-call bookkeeping (3 of the 12 ms a loan case took)
    probability = float(scorer_for(model, task)(encode_rows(task, case))[0])
    undesirable = probability > 0.5
    cfset = None
    if undesirable:
        if row is not None and not edited:
            cfset = store.ensure([int(row)])
        else:
            cfset = store.generate_cases(case)
    return WhatIf(
        case=case, row=None if row is None else int(row), edited=edited, probability=probability,
        predicted_undesirable=bool(undesirable), counterfactuals=cfset,
        seconds=time.perf_counter() - start,
    )


