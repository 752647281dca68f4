"""The Data & model page's editor of the data dictionary: the words of each feature as a table, and back.

No widgets here (the page draws them): the table the editor shows, and the dictionary (in the TOML file's
shape, :meth:`flex_core.data.DataDictionary.to_dict`) an edited table stands for. The dictionary is checked
against the data where it is applied (:meth:`flex_core.TaskSpec.with_dictionary`).
"""

from __future__ import annotations

import pandas as pd

import flex_core as fc

__all__ = ["KEY_COLUMN", "WORDS_COLUMNS", "words_table", "dictionary_from_table", "level_words_text"]

#: The column of the editor naming each feature as the file does (not editable): the dictionary's key.
KEY_COLUMN = "column in the file"
#: The editor's columns: the data's name, then the words.
WORDS_COLUMNS = [KEY_COLUMN, "display name", "unit", "currency", "level words"]


def level_words_text(levels) -> str:
    """A feature's level words as the editor writes them: ``Yes = self-employed; No = not self-employed``."""
    return "; ".join(f"{level} = {words}" for level, words in levels)


def words_table(task: fc.TaskSpec) -> pd.DataFrame:
    """One line per feature: its column name and the words it is shown in (label, unit, currency, level words)."""
    return pd.DataFrame(
        [{KEY_COLUMN: f.name, "display name": f.label, "unit": f.words.unit, "currency": f.words.currency,
          "level words": level_words_text(f.words.levels)} for f in task.features],
        columns=WORDS_COLUMNS,
    )


def _levels(text: str, label: str) -> dict[str, str]:
    """``"Yes = self-employed; No = salaried"`` as ``{"Yes": "self-employed", "No": "salaried"}``."""
    out: dict[str, str] = {}
    for part in (p.strip() for p in str(text or "").split(";")):
        if not part:
            continue
        level, sep, words = (s.strip() for s in part.partition("="))
        if not sep or not level or not words:
            raise fc.ConfigError(f"Level words of {label}: write LEVEL = words, separated by ';' "
                                 f"(e.g. Yes = self-employed; No = salaried), not {part!r}.")
        out[level] = words
    return out


def dictionary_from_table(table: pd.DataFrame, task: fc.TaskSpec, undesirable: str, desirable: str) -> dict:
    """The dictionary an edited :func:`words_table` and two outcome words stand for (the number formats kept).

    Raises
    ------
    ConfigError
        A display name left empty, or level words not written as ``LEVEL = words; ...``.
    """
    features: dict[str, dict] = {}
    for row in table.to_dict("records"):
        feature = task.feature(row[KEY_COLUMN])
        name = str(row.get("display name") or "").strip()
        if not name:
            raise fc.ConfigError(f"{feature.label} has no display name: write one (the column is {feature.name}).")
        entry = {"name": name, "unit": str(row.get("unit") or "").strip(), "format": feature.words.format,
                 "currency": str(row.get("currency") or "").strip(), "levels": _levels(row.get("level words"), name)}
        features[feature.name] = {k: v for k, v in entry.items() if v}
    outcome = {"undesirable": str(undesirable or "").strip(), "desirable": str(desirable or "").strip()}
    return {"outcome": {k: v for k, v in outcome.items() if v}, "features": features}
