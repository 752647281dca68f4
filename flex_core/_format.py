"""Numbers and counts as a reader expects them: thousands separators, no scientific notation, "1 case";
and numbers a person types, read back the same way.
"""

from __future__ import annotations

import math
import re

from ._errors import ConfigError

__all__ = ["format_number", "format_share", "format_duration", "plural", "listing", "rows_not_in_data", "read_number"]

#: Commas between groups of three digits, as :func:`format_number` writes them ("21,500,000", "1,234.5").
_GROUPED_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][+-]?\d+)?")


def format_number(value, *, digits: int = 4) -> str:
    """A number for people: ``21,500,000``, ``1,234.5``, ``0.0123``; never ``2.15e+07``.

    Numbers of 1,000 and more are rounded to whole units (money, counts) and grouped by
    thousands; smaller ones keep ``digits`` significant digits. NaN and None become "n/a".
    """
    if value is None:
        return "n/a"
    value = float(value)
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if value == int(value) or abs(value) >= 1000:
        return f"{round(value):,}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:,.{decimals}f}".rstrip("0").rstrip(".")


def format_share(value, *, decimals: int = 0) -> str:
    """A share in [0, 1] as a percentage ("83%"); NaN and None become "n/a"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{100 * float(value):.{decimals}f}%"


def plural(n: int, word: str, many: str | None = None) -> str:
    """``"1 case"``, ``"3 cases"``, ``"1,200 cases"``."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def listing(word: str, items, *, many: str | None = None, limit: int = 5) -> str:
    """``word`` before the items it names, in the number they come in: "feature age", "rows 3 and 8",
    "columns a, b, c, d, e and 2 more" (``limit`` items at most)."""
    names = [str(item) for item in items]
    if not names:
        raise ValueError("listing() needs at least one item.")
    head = word if len(names) == 1 else (many or word + "s")
    shown = names[:limit]
    rest = len(names) - len(shown)
    if rest:
        return f"{head} {', '.join(shown)} and {rest:,} more"
    return f"{head} {shown[0]}" if len(shown) == 1 else f"{head} {', '.join(shown[:-1])} and {shown[-1]}"


def rows_not_in_data(rows) -> str:
    """"Row 7 is not in the data (it may have been dropped).", with every row named up to five."""
    rows = list(rows)
    one = len(rows) == 1
    return f"{listing('Row', rows)} {'is' if one else 'are'} not in the data ({'it' if one else 'they'} may have been dropped)."


def format_duration(seconds: float) -> str:
    """A wait in words: "under 5 seconds", "about 40 seconds", "about 2 minutes"."""
    if seconds < 5:
        return "under 5 seconds"
    if seconds < 90:
        return f"about {int(round(seconds, -1 if seconds >= 20 else 0))} seconds"
    return f"about {round(seconds / 60)} minutes"


def read_number(value, *, name: str) -> float:
    """A number a person typed or gave, as a finite float: one reading for every place that takes one.

    Text may have white space around it, a sign, a decimal point, an exponent ("1e6") and commas
    between thousands as :func:`format_number` writes them ("21,500,000"), so a number copied from
    the app reads back. A comma anywhere else is refused rather than guessed at: "1,5" is 1.5 to some
    readers and 15 to others. Numbers (int, float, NumPy) pass as they are.

    Parameters
    ----------
    value : str or number
    name : str
        What the number is for, as the reader knows it (a feature's label, or its quoted name in a
        rule); every message starts with it.

    Raises
    ------
    ConfigError
        An empty text, anything that is not a number, or NaN or infinity.
    """
    text = value
    if isinstance(value, str):
        text = value.strip()
        if not text:
            raise ConfigError(f"{name} is a number: the value is empty.")
        if "," in text:
            if not _GROUPED_THOUSANDS.fullmatch(text):
                raise ConfigError(f"{name} is a number: {value!r} is not a number (a comma may only separate "
                                  "thousands, as in 1,500; the decimal mark is a point, as in 1.5).")
            text = text.replace(",", "")
    try:
        number = float(text)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} is a number: {value!r} is not a number (write e.g. 1500, 1,500, -2.5 or 1e6).") from None
    if not math.isfinite(number):
        raise ConfigError(f"{name}: {value!r} is not a finite number.")
    return number
