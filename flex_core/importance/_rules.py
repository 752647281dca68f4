"""Rule-defined regions: a conjunction of conditions on feature values, checked once at the boundary.

A rule is a list of conditions ``{"feature", "op", "value"}``, all of which a row must meet:

=========  ==========================================  =====================================
op         value                                       features
=========  ==========================================  =====================================
``=``      one level (or one number)                   categorical, ordinal, continuous
``in``     a list of levels (or numbers)               categorical, ordinal, continuous
``>=``     a number, or a level (at or above it)       continuous, ordinal
``<``      a number, or a level (below it)             continuous, ordinal
between    ``[low, high]``, both ends included         continuous, ordinal
=========  ==========================================  =====================================

Ordinal comparisons follow the feature's level order. :func:`check_rule` turns what a user
gives (dicts, :class:`Condition` values, or texts such as ``"age>=70"``) into the canonical form
every other function takes: a tuple of dicts, levels as text, numbers as int or float.

A front end keeps a rule as :class:`Condition` values (frozen, hashable, comparable) and a Hamming
region's criterion as one ``=`` condition: they cross to the explainer as they are, never as text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._errors import ConfigError
from .._format import format_number, read_number
from .._typing import Rows
from ..data._columns import category_text
from ..data._task import TaskSpec

__all__ = ["OPS", "Condition", "parse_condition", "check_rule", "rule_mask", "rule_text", "condition_text"]

OPS = ("=", "in", ">=", "<", "between")
_ORDERED_OPS = (">=", "<", "between")
_CONDITION = re.compile(r"^(.*?)(>=|<=|>|<|=)(.*)$", re.DOTALL)


@dataclass(frozen=True, eq=False)
class Condition(Mapping):
    """One condition of a region, ``feature op value``: a value, hashable and comparable, that reads as the
    mapping ``{"feature", "op", "value"}`` wherever a condition is taken (a list value is kept as a tuple).

    A rule is a tuple of them; a Hamming region's criterion is one with op ``=`` (:meth:`criterion`).
    Unchecked until a run takes it (:func:`check_rule` says what is wrong).
    """

    feature: str
    op: str
    value: Any

    def __post_init__(self) -> None:
        if isinstance(self.value, list | np.ndarray):
            object.__setattr__(self, "value", tuple(self.value))

    @classmethod
    def of(cls, condition: Mapping) -> Condition:
        """A condition from a mapping ``{"feature", "op", "value"}`` (a Condition stays itself)."""
        if isinstance(condition, Condition):
            return condition
        return cls(str(condition["feature"]), str(condition["op"]), condition["value"])

    @classmethod
    def criterion(cls, feature: str, value) -> Condition:
        """A Hamming region's criterion: ``feature = value``."""
        return cls(str(feature), "=", value)

    def as_dict(self) -> dict:
        """``{"feature", "op", "value"}`` as JSON holds it (a tuple value as a list)."""
        return {"feature": self.feature, "op": self.op,
                "value": list(self.value) if isinstance(self.value, tuple) else self.value}

    def __getitem__(self, key: str):
        if key not in ("feature", "op", "value"):
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(("feature", "op", "value"))

    def __len__(self) -> int:
        return 3

    def __str__(self) -> str:
        return condition_text(self)

    def __eq__(self, other) -> bool:  # a value: equal fields, not Mapping's comparison with any dict
        return isinstance(other, Condition) and (self.feature, self.op, self.value) == (other.feature, other.op, other.value)

    def __hash__(self) -> int:
        return hash((self.feature, self.op, self.value))


def parse_condition(text: str) -> dict:
    """``"age>=70"``, ``"age<80"``, ``"zone=rural"``, ``"age=70..80"`` (between, both ends included)
    or ``"colour=red|blue"`` (in) as a condition dict; levels are checked later, by :func:`check_rule`.

    A value that contains ``..`` or ``|`` as part of a level name is read whole when it is one of the
    feature's levels (:func:`check_rule` does that).
    """
    text = str(text).strip()
    match = _CONDITION.match(text)  # the first operator splits: a level may hold '<' or '='
    feature, op, value = (match.group(1).strip(), match.group(2), match.group(3).strip()) if match else ("", "", "")
    if not feature or not value:
        raise ConfigError(
            f"A condition reads FEATURE>=VALUE, FEATURE<VALUE, FEATURE=VALUE, FEATURE=LOW..HIGH or FEATURE=A|B, not {text!r}."
        )
    if op in ("<=", ">"):
        raise ConfigError(f"{text!r}: the comparisons are >= and < (write FEATURE>=VALUE or FEATURE<VALUE, or FEATURE=LOW..HIGH).")
    if op != "=":
        return {"feature": feature, "op": op, "value": value}
    return {"feature": feature, "op": "=", "value": value, "_text": True}


def check_rule(task: TaskSpec, rule) -> tuple[dict, ...]:
    """The rule in canonical form, or a :class:`ConfigError` that says what to fix.

    ``rule`` is a sequence of conditions, each a mapping ``{"feature", "op", "value"}`` or a text
    that :func:`parse_condition` reads. Checked: the feature exists, the op suits its kind, levels
    are levels of the feature, numbers are numbers, a between's low is not above its high.
    """
    if isinstance(rule, (str, Mapping)):
        rule = [rule]
    if rule is None or not isinstance(rule, Sequence) or len(rule) == 0:
        raise ConfigError("A rule needs at least one condition, e.g. [{'feature': 'zone', 'op': '=', 'value': 'rural'}].")
    return tuple(_check_condition(task, c) for c in rule)


def _check_condition(task: TaskSpec, condition) -> dict:
    if isinstance(condition, str):
        condition = parse_condition(condition)
    if not isinstance(condition, Mapping) or not {"feature", "op", "value"} <= set(condition):
        raise ConfigError(f"A condition is {{'feature', 'op', 'value'}} or a text such as 'age>=70', not {condition!r}.")
    name, op, value = str(condition["feature"]), str(condition["op"]).strip(), condition["value"]
    if name not in task.feature_names:
        raise ConfigError(f"Unknown feature {name!r} in the rule; the features are: {', '.join(task.feature_names)}.")
    feature = task.feature(name)
    if op not in OPS:
        raise ConfigError(f"Unknown op {op!r} in the condition on {name!r}; use one of: {', '.join(OPS)}.")
    if condition.get("_text") and isinstance(value, str):
        op, value = _read_text_value(feature, value)
    if feature.kind == "categorical" and op in _ORDERED_OPS:
        raise ConfigError(
            f"{name!r} is categorical (its levels have no order): use = or in, not {op!r} "
            "(or give the feature an order, which makes it ordinal)."
        )
    if op == "in":
        values = list(value) if isinstance(value, (list, tuple, set, np.ndarray)) else [value]
        if not values:
            raise ConfigError(f"The condition {name} in [...] needs at least one value.")
        value = [_value(feature, v) for v in values]
    elif op == "between":
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise ConfigError(f"between on {name!r} takes [low, high] (both included), not {value!r}.")
        low, high = _value(feature, value[0]), _value(feature, value[1])
        if _position(feature, low) > _position(feature, high):
            raise ConfigError(f"between on {name!r}: the low end {low!r} lies above the high end {high!r}; swap them.")
        value = [low, high]
    else:
        value = _value(feature, value)
    return {"feature": name, "op": op, "value": value}


def _read_text_value(feature, text: str):
    """``=`` from a text: a level as it stands, else LOW..HIGH (between) or A|B (in)."""
    if feature.categories is not None and text in feature.categories:
        return "=", text
    if ".." in text:
        low, _, high = text.partition("..")
        return "between", [low.strip(), high.strip()]
    if "|" in text:
        return "in", [v.strip() for v in text.split("|") if v.strip()]
    return "=", text


def _value(feature, value):
    """A level as the task's text, or a number as int/float; ConfigError naming the allowed values."""
    if feature.is_continuous:
        number = read_number(value, name=repr(feature.name))
        return int(number) if number.is_integer() else number
    level = value if isinstance(value, str) else category_text(value)
    if level not in feature.categories:
        shown = ", ".join(map(str, feature.categories[:12])) + (", ..." if len(feature.categories) > 12 else "")
        raise ConfigError(f"{value!r} is not a level of {feature.name!r}; its levels are: {shown}.")
    return level


def _position(feature, value) -> float:
    return float(value) if feature.is_continuous else float(feature.categories.index(value))


def rule_mask(task: TaskSpec, rule: Sequence[Mapping], rows: Rows | None = None) -> np.ndarray:
    """Which rows meet every condition of a (checked) rule, bool array over ``rows`` (default every row)."""
    frame = task.frame if rows is None else task.frame.loc[np.asarray(rows, dtype=int)]
    mask = np.ones(len(frame), dtype=bool)
    for condition in rule:
        feature = task.feature(condition["feature"])
        mask &= condition_mask(feature, frame[feature.name], condition)
    return mask


def condition_mask(feature, column: pd.Series, condition: Mapping) -> np.ndarray:
    """One condition over a column of the task's frame (levels as text, numbers as floats)."""
    op, value = condition["op"], condition["value"]
    if feature.is_continuous:
        x = column.to_numpy(dtype=float)
    else:
        lookup = {level: i for i, level in enumerate(feature.categories)}
        x = np.array([lookup.get(v, np.nan) for v in column.to_numpy(dtype=object)], dtype=float)
        value = [lookup[v] for v in value] if isinstance(value, list) else lookup[value]
    with np.errstate(invalid="ignore"):
        if op == "=":
            return x == value
        if op == "in":
            return np.isin(x, np.asarray(value, dtype=float))
        if op == ">=":
            return x >= value
        if op == "<":
            return x < value
        return (x >= value[0]) & (x <= value[1])


def condition_text(condition: Mapping, label: str | None = None, *, feature=None) -> str:
    """``zone = rural``, ``age ≥ 70``, ``age < 80``, ``age 70–80``, ``colour in red, blue``.

    ``feature``: the condition's :class:`~flex_core.data.Feature`, for the data dictionary's words: its label, a
    number with its currency and unit ("CIBIL score ≥ 650 points", "Loan amount < ₹5,000,000"), levels in words.
    """
    name = label or (feature.label if feature is not None else condition["feature"])
    op, value = condition["op"], condition["value"]

    def show(v):
        if feature is not None:
            return feature.format_value(v)
        return format_number(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)

    if op == "=":
        return f"{name} = {show(value)}"
    if op == "in":
        return f"{name} in {', '.join(show(v) for v in value)}"
    if op == ">=":
        return f"{name} ≥ {show(value)}"
    if op == "<":
        return f"{name} < {show(value)}"
    low, high = value
    if isinstance(low, str):
        return f"{name} from {show(low)} to {show(high)}"
    if feature is not None:
        return f"{name} {feature.format_span(low, high, sep='–')}"
    return f"{name} {show(low)}–{show(high)}"


def rule_text(rule: Sequence[Mapping], labels: Mapping[str, str] | None = None, *, features=None) -> str:
    """The rule as one line: conditions joined by "and", features under their labels when given.

    ``features``: the task's features (:class:`~flex_core.data.Feature`); each condition is then written in the
    data dictionary's words, numbers with their currency and unit (:func:`condition_text`).
    """
    labels = labels or {}
    by_name = {f.name: f for f in features or ()}
    return " and ".join(condition_text(c, labels.get(c["feature"]), feature=by_name.get(c["feature"])) for c in rule)
