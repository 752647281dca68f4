"""The Data & model page's editor of constraints between features: each line checked live, and how the rules bite.

No widgets here (the page draws them): what the page shows, as plain data.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

import flex_core as fc
from flex_core.data.rules import constraints_from_lines, parse_constraint

__all__ = ["LANGUAGE_HELP", "checked_lines", "examples_table", "rule_notes", "rules_effect_table"]

LANGUAGE_HELP = (
    "One constraint per line (# starts a comment). cf.NAME is the value in the way out, x.NAME the case's own; "
    'quote a name with spaces (cf."loan amount"). Numbers with + - * / and ( ); comparisons == != < <= > >=; '
    "and, or, not; if ... then ...; NAME in {a, b}; an ordinal feature compares by its order "
    '(cf.grade >= "B").'
)


def checked_lines(text: str, task: fc.TaskSpec) -> tuple[list[str], pd.DataFrame, list[str]]:
    """The constraints written in ``text`` (one per line), a table of each with its check, and the errors.

    The table has columns ``constraint`` and ``check`` ("ok", or what to fix); the errors are the messages of
    the lines that do not parse on ``task``'s features, in order.
    """
    texts = constraints_from_lines(text or "")
    checks, errors = [], []
    for line in texts:
        try:
            parse_constraint(line, task.features)
        except fc.FlexError as exc:
            checks.append(str(exc))
            errors.append(str(exc))
        else:
            checks.append("ok")
    return texts, pd.DataFrame({"constraint": texts, "check": checks}, columns=["constraint", "check"]), errors


def examples_table(examples) -> pd.DataFrame:
    """(kind, example) pairs as a two-column table."""
    return pd.DataFrame(list(examples), columns=["kind", "example"])


def rules_effect_table(task: fc.TaskSpec, generator: Mapping) -> pd.DataFrame:
    """Per applied constraint: the cases of the data that break it as they are, and what it rejected and dropped
    in the global run (``generator``: a result's generator block; its ``constraints_between`` report)."""
    codes = fc.counterfactuals.encode_rows(task, task.X)
    breaking = task.rule_breaks(codes, codes).sum(axis=0)
    report = {r["constraint"]: r for r in (generator.get("constraints_between") or {}).get("constraints", [])}
    rows = []
    for text, n in zip(task.rule_texts, breaking):
        rule = report.get(text, {})
        rows.append({
            "constraint": text,
            "rows of the data breaking it as they are": int(n),
            "candidates it rejected": rule.get("rejected_while_searching"),
            "ways out dropped": rule.get("dropped_from_output"),
            "share of rejections": rule.get("share_of_rejections"),
        })
    return pd.DataFrame(rows)


def rule_notes(notes, task: fc.TaskSpec) -> list[str]:
    """The notes of a result that are about constraints: those that say "constraint" or quote one of ``task``'s
    constraints between features (e.g. how many cases break one at their own values), in their order."""
    quoted = [repr(text) for text in task.rule_texts]
    return [note for note in notes if "constraint" in note or any(q in note for q in quoted)]
