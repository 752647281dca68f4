"""Scan a page's rendered text against a task's data dictionary (issue 35): what a reader should never see.

:func:`problems` lists, each with the text around it, the raw column names the dictionary renames, the word
"undesirable" (and "not Rejected"), the paper's symbols F_j, μ_j, F, necessary F and Pearson r (the sidebar's
switch is off), a number written right after a feature's display name without the unit or
currency the dictionary gives it ("CIBIL score ≥ 650" instead of "CIBIL score ≥ 650 points"), and a table column
named like such a feature whose header does not carry the unit ("CIBIL score" instead of "CIBIL score (points)").
"""

from __future__ import annotations

import re

import flex_core as fc

__all__ = ["raw_names", "problems", "table_text"]

#: The one column whose cells are the file's own column names by design: the dictionary editor's key (ui/words.py).
KEY_COLUMN = "column in the file"

#: a number as the pages write one: 650, 6,000,000, 0.38, −3
_NUMBER = r"[-−]?\d[\d,]*(?:\.\d+)?"
#: what may stand between a feature's name and its value on one line: "CIBIL score ≥ 650", "Loan term: 12",
#: "CIBIL score of 650" (lines, table cells and a chart's labels are apart: a chart's axis ticks are not a value)
_BETWEEN = r"[ \t\u00a0]*(?:[:=<>≥≤]=?|\bis\b|\bof\b|\bat\b|\bfrom\b|\bto\b)?[ \t\u00a0]*"
#: a share said after the number instead of a unit: "40%", "57 in 100"
_SHARE = r"%|[ \t\u00a0]+in[ \t\u00a0]+100\b"


def raw_names(task: fc.TaskSpec) -> list[str]:
    """The ways a column's own name could show: as written (cibil_score) and with spaces only (cibil score), for
    every feature whose display name is other words."""
    out = []
    for f in task.features:
        spaced = f.name.replace("_", " ")
        out += ([f.name] if f.name != f.label else []) + ([spaced] if spaced.lower() != f.label.lower() else [])
    return sorted(set(out))


def table_text(tables: list[list[list[str]]]) -> str:
    """The tables' cells as text, one row a line, cells apart; the dictionary editor's key column left out."""
    lines = []
    for table in tables:
        keep = [j for j, name in enumerate(table[0] if table else []) if name != KEY_COLUMN]
        lines += [" | ".join(row[j] for j in keep if j < len(row)) for row in table]
    return "\n".join(lines)


def _around(text: str, start: int, end: int) -> str:
    return " ".join(text[max(0, start - 50): end + 30].split())


def _unit_problems(text: str, feature: fc.data.Feature) -> list[str]:
    """Numbers written right after ``feature``'s label without its currency before or its unit after."""
    words = feature.words
    # the currency right before the digits (₹6,000,000); after them the unit, a share (40%), or a range's end in it
    before = rf"(?P<currency>{re.escape(words.currency)} ?)?" if words.currency else r"(?P<currency>)"
    after = rf"(?:[ \t\u00a0]*(?:[–-]|to)[ \t\u00a0]*{before.replace('currency', 'currency2')}{_NUMBER})?"
    unit = rf"[ \t\u00a0]*{re.escape(words.unit)}\b|" if words.unit else ""
    unit = rf"(?P<unit>{unit}{_SHARE})?"
    pattern = re.compile(rf"(?<!\w){re.escape(feature.label)}(?![\w(]){_BETWEEN}{before}(?P<number>{_NUMBER}){after}{unit}",
                         re.IGNORECASE)
    out = []
    for m in pattern.finditer(text):
        if not (m.group("currency") or m.group("unit")):
            out.append(f"{feature.label} without its unit ({feature.unit}): {_around(text, m.start(), m.end())!r}")
    return out


def _header_problems(tables: list[list[list[str]]], feature: fc.data.Feature) -> list[str]:
    """Table columns headed by ``feature``'s bare label whose cells are numbers (the header should name the unit)."""
    out = []
    for table in tables:
        if not table:
            continue
        header, rows = table[0], table[1:]
        for j, name in enumerate(header):
            cells = [row[j] for row in rows if j < len(row) and row[j].strip()]
            numbers = [c for c in cells if re.fullmatch(_NUMBER, c.strip())]
            if name.strip().lower() == feature.label.lower() and numbers and len(numbers) == len(cells):
                out.append(f"column {name!r} holds numbers ({numbers[0]}) without its unit ({feature.unit}) in the header")
    return out


#: The analyst's terms a page shows only with the sidebar's switch on: F_j, μ_j, F and necessary F as names of
#: numbers ("F (95% interval)", "F: changed", "F 0.41", "F per feature"), Pearson r (the pages say "agreement with all cases"), "factual"
#: (the pages say "case") and "counterfactual" (the pages say "way out"; it stays as the name of a page, "Counterfactuals
#: of one case", and of the report's file counterfactuals.csv).
_SYMBOLS = re.compile(r"\b(?:F|μ)_j\b|\bnecessary F\b|\bF(?: \(95% interval\)|: | \d| per\b)|\bPearson r\b|\bquadrant [A-D]\b|δ|"
                      r"\bN_(?:F|cf)\b|\b[Ff]actuals?\b|\b[Cc]ounterfactuals?\b(?! of one case|\.csv)")


def problems(text: str, task: fc.TaskSpec, tables: list[list[list[str]]] = (), *, terms: bool = False) -> list[str]:
    """What ``text`` (a page's rendered words) and ``tables`` (each a header row, then rows of cells) say that the
    dictionary of ``task`` says otherwise, and the paper's symbols F_j and μ_j unless ``terms`` (the sidebar's
    switch) asks for them; empty when nothing."""
    found = [f"raw column name {name!r}: {_around(text, m.start(), m.end())!r}"
             for name in raw_names(task)
             for m in re.finditer(rf"(?<![\w.]){re.escape(name)}(?![\w])", text)]
    found += [f"{m.group(0)!r}: {_around(text, m.start(), m.end())!r}"
              for m in re.finditer(rf"undesirable|not {re.escape(task.undesirable_words)}\b", text, re.IGNORECASE)]
    found += [f"the paper's symbol {m.group(0)!r} with its terms switched off: {_around(text, m.start(), m.end())!r}"
              for m in re.finditer(_SYMBOLS, text)] if not terms else []
    for feature in task.features:
        if feature.is_continuous and feature.unit:
            found += _unit_problems(text, feature) + _header_problems(list(tables), feature)
    return found
