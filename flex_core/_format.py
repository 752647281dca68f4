"""Numbers and counts as a reader expects them: thousands separators, no scientific notation, "1 case"."""

from __future__ import annotations

import math

__all__ = ["format_number", "format_share", "format_duration", "plural"]


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


def format_duration(seconds: float) -> str:
    """A wait in words: "under 5 seconds", "about 40 seconds", "about 2 minutes"."""
    if seconds < 5:
        return "under 5 seconds"
    if seconds < 90:
        return f"about {int(round(seconds, -1 if seconds >= 20 else 0))} seconds"
    return f"about {round(seconds / 60)} minutes"
