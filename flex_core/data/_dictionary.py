"""The data dictionary: the expert's own words and units for a dataset's features and outcome.

One small TOML file per dataset (read with the standard library's :mod:`tomllib`)::

    [outcome]
    undesirable = "Rejected"          # how the undesirable outcome is said
    desirable = "Approved"            # and the other one

    [features.loan_amount]
    name = "Loan amount"              # the display name
    currency = "₹"                    # written before the number
    format = ",.0f"                   # a Python format spec for the number
    unit = ""                         # written after the number ("months", "points")

    [features.self_employed]
    name = "Self-employed"
    levels = { Yes = "self-employed", No = "salaried" }   # words for a categorical feature's levels

Every key is optional. A library user passes the file's path (or TOML text, or a mapping of the same
shape) as ``dictionary=`` to :func:`flex_core.make_task`, the loaders, :func:`flex_core.load_dataset` or
:class:`flex_core.FlexExplainer`; the CLI takes ``--dictionary FILE``. :func:`load_dictionary` reads and
checks the file's shape;
:func:`flex_core.data.make_task` checks it against the task's features (a feature or level the
data lacks, a unit on a categorical feature) and each refusal is one :class:`ConfigError`.
Without a dictionary a feature's name is tidied (:func:`tidy_name`) and its numbers formatted by
its type (whole numbers without decimals).
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from .._errors import ConfigError
from .._format import format_number

__all__ = ["FeatureWords", "DataDictionary", "load_dictionary", "tidy_name", "shipped_dictionary", "SHIPPED_DICTIONARIES"]

#: Keys a feature's table may hold, and those the file's top level may hold.
FEATURE_KEYS = ("name", "unit", "format", "currency", "levels")
TOP_KEYS = ("outcome", "features")
OUTCOME_KEYS = ("undesirable", "desirable")
#: A dictionary is a small file: more than this is refused before it is parsed.
MAX_DICTIONARY_BYTES = 1_000_000
#: The folder of the dictionaries shipped for the paper's datasets and the built-ins, by dataset kind.
SHIPPED_FOLDER = Path(__file__).with_name("dictionaries")
SHIPPED_DICTIONARIES = {
    "loan": "loan.toml",
    "accidents": "accidents.toml",
    "synthetic-regional": "synthetic-regional.toml",
    "toy2d": "toy2d.toml",
}


def tidy_name(name) -> str:
    """A column name as a label: underscores and runs of spaces become one space, the first letter a capital.

    ``"cibil_score"`` -> ``"Cibil score"``, ``"Age_band_of_driver"`` -> ``"Age band of driver"``.
    """
    text = " ".join(str(name).replace("_", " ").split())
    return text[:1].upper() + text[1:]


@dataclass(frozen=True)
class FeatureWords:
    """The dictionary's words for one feature; every field optional ("" or empty when not given).

    ``format`` is a Python format spec (``",.0f"``, ``".1%"``); ``levels`` pairs each level of a
    categorical feature with its words.
    """

    name: str = ""
    unit: str = ""
    format: str = ""
    currency: str = ""
    levels: tuple[tuple[str, str], ...] = ()

    @property
    def has_number_words(self) -> bool:
        """True when a unit, format or currency is given (they apply to numbers only)."""
        return bool(self.unit or self.format or self.currency)

    def level(self, value) -> str:
        """The words for a level (the level itself when the dictionary has none for it)."""
        return dict(self.levels).get(str(value), str(value))

    def number(self, value, *, integer: bool = False, bare: bool = False) -> str:
        """A number with the currency before it and the unit after: ``"₹6,000,000"``, ``"24 months"``.

        Without a format, whole-number features are written without decimals and others by
        :func:`flex_core.formatting.format_number`; NaN and None are "n/a". ``bare``: the number
        alone, for a table whose header names the unit.
        """
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "n/a"
        if self.format:
            text = format(float(value), self.format)
        elif integer:
            text = f"{round(float(value)):,}"
        else:
            text = format_number(value)
        if bare:
            return text
        sign, text = ("-", text[1:]) if text.startswith("-") else ("", text)
        return f"{sign}{self.currency}{text}" + (f" {self.unit}" if self.unit else "")


@dataclass(frozen=True)
class DataDictionary:
    """A dataset's words: per feature (:class:`FeatureWords`, by column name) and the outcome's two names."""

    features: tuple[tuple[str, FeatureWords], ...] = ()
    undesirable: str = ""
    desirable: str = ""
    source: str = ""

    def words(self, name: str) -> FeatureWords:
        """The words for feature ``name`` (empty ones when the dictionary does not name it)."""
        return dict(self.features).get(str(name), FeatureWords())

    @classmethod
    def from_mapping(cls, data: Mapping, *, source: str = "the data dictionary") -> DataDictionary:
        """A dictionary from parsed TOML (or any mapping of the same shape), its shape checked.

        Raises
        ------
        ConfigError
            One message naming ``source`` and what to fix: an unknown key, a value that is not
            text, or a format spec Python cannot apply to a number.
        """
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: expected a table of [outcome] and [features.NAME] entries.")
        _check_keys(data, TOP_KEYS, source, "at the top level")
        outcome = data.get("outcome", {})
        if not isinstance(outcome, Mapping):
            raise ConfigError(f"{source}: [outcome] must be a table with undesirable and desirable.")
        _check_keys(outcome, OUTCOME_KEYS, source, "in [outcome]")
        undesirable, desirable = (_text(outcome.get(k, ""), source, f"outcome.{k}") for k in OUTCOME_KEYS)
        features = data.get("features", {})
        if not isinstance(features, Mapping):
            raise ConfigError(f"{source}: features must be tables, one per feature ([features.NAME]).")
        words = tuple((str(name), _feature_words(name, entry, source)) for name, entry in features.items())
        return cls(features=words, undesirable=undesirable, desirable=desirable, source=source)

    def to_dict(self) -> dict:
        """The dictionary as plain data, in the file's shape (:meth:`from_mapping` reads it back)."""
        features = {}
        for name, w in self.features:
            entry = {k: getattr(w, k) for k in ("name", "unit", "format", "currency") if getattr(w, k)}
            if w.levels:
                entry["levels"] = dict(w.levels)
            features[name] = entry
        outcome = {k: getattr(self, k) for k in OUTCOME_KEYS if getattr(self, k)}
        return {**({"outcome": outcome} if outcome else {}), **({"features": features} if features else {})}


def _check_keys(table: Mapping, allowed: tuple[str, ...], source: str, where: str) -> None:
    unknown = [str(k) for k in table if k not in allowed]
    if unknown:
        raise ConfigError(f"{source}: unknown key {unknown[0]!r} {where}; the keys are: {', '.join(allowed)}.")


def _text(value, source: str, key: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{source}: {key} must be text in quotes, not {value!r}.")
    return value.strip()


def _feature_words(name, entry, source: str) -> FeatureWords:
    """One feature's table, each value checked."""
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{source}: features.{name} must be a table (name = \"...\", unit = \"...\").")
    _check_keys(entry, FEATURE_KEYS, source, f"in features.{name}")
    text = {k: _text(entry.get(k, ""), source, f"features.{name}.{k}") for k in FEATURE_KEYS if k != "levels"}
    if text["format"]:
        try:
            format(1234.5, text["format"])
        except (ValueError, TypeError):
            raise ConfigError(f"{source}: features.{name}.format {text['format']!r} is not a number format "
                              "(write a Python format spec such as \",.0f\", \",.2f\" or \".1%\").") from None
    levels = entry.get("levels", {})
    if not isinstance(levels, Mapping):
        raise ConfigError(f"{source}: features.{name}.levels must be a table of level = \"words\".")
    pairs = tuple((str(level), _text(words, source, f"features.{name}.levels.{level}")) for level, words in levels.items())
    return FeatureWords(levels=pairs, **text)


def load_dictionary(source) -> DataDictionary:
    """A :class:`DataDictionary` from a TOML file (a path), TOML text (a string holding a newline), a file's bytes
    (an upload: never read as a path) or a mapping.

    Raises
    ------
    ConfigError
        The file cannot be read, is not TOML (with the line), or has the wrong shape.
    """
    if isinstance(source, DataDictionary):
        return source
    if isinstance(source, Mapping):
        return DataDictionary.from_mapping(source)
    if isinstance(source, bytes):
        label = "the data dictionary"
        if len(source) > MAX_DICTIONARY_BYTES:
            raise ConfigError(f"{label} is {len(source):,} bytes; a dictionary is a small TOML file (at most "
                              f"{MAX_DICTIONARY_BYTES:,} bytes).")
        try:
            text = source.decode("utf-8")
        except UnicodeDecodeError:
            raise ConfigError(f"{label} is not UTF-8 text: save the TOML file as UTF-8.") from None
    elif isinstance(source, str) and "\n" in source:
        text, label = source, "the data dictionary"
    else:
        path = Path(source)
        label = f"data dictionary {path.name!r}"
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"Cannot read {label}: {exc.strerror if isinstance(exc, OSError) else 'not UTF-8 text'}.") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{label} is not valid TOML: {exc}.") from None
    return DataDictionary.from_mapping(data, source=label)


def shipped_dictionary(kind: str) -> DataDictionary | None:
    """The dictionary shipped for a dataset kind (``"loan"``, ``"accidents"``, a built-in's name), or None."""
    file = SHIPPED_DICTIONARIES.get(kind)
    return load_dictionary(SHIPPED_FOLDER / file) if file else None


def apply_dictionary(features: list, dictionary, *, numbers=()) -> tuple[DataDictionary | None, list]:
    """(the dictionary read, the :class:`~flex_core.data.Feature` list in its words), after checking it fits them.

    ``dictionary`` is a :class:`DataDictionary`, a TOML path, TOML text, a mapping, or None (no words: every
    feature's words are emptied). A feature the dictionary names takes its display name from it. ``numbers``: other
    columns it may word as numbers (a regression's target, under ``[features.TARGET]``).
    """
    dictionary = None if dictionary is None else load_dictionary(dictionary)
    if dictionary is not None:
        check_dictionary(dictionary, {**{f.name: f.levels for f in features}, **{n: () for n in numbers}})
    out = []
    for feature in features:
        words = dictionary.words(feature.name) if dictionary is not None else FeatureWords()
        out.append(replace(feature, words=words, display_name=words.name or feature.display_name))
    return dictionary, out


def check_dictionary(dictionary: DataDictionary, features: Mapping[str, tuple]) -> None:
    """Refuse a dictionary that names a feature the task lacks, a level a feature lacks, or number words on levels.

    ``features`` maps each feature's name to its levels (``()`` for a continuous feature).
    """
    where = dictionary.source or "the data dictionary"
    for name, words in dictionary.features:
        if name not in features:
            raise ConfigError(f"{where} names feature {name!r}, which the data lacks; the features are: "
                              f"{', '.join(map(str, features))}.")
        levels = features[name]
        if levels and words.has_number_words:
            raise ConfigError(f"{where}: {name!r} has levels, not numbers, so unit, format and currency do not apply.")
        if words.levels and not levels:
            raise ConfigError(f"{where}: {name!r} is a number, so it has no levels to name.")
        unknown = [level for level, _ in words.levels if level not in set(map(str, levels))]
        if unknown:
            raise ConfigError(f"{where}: {name!r} has no level {unknown[0]!r}; its levels are: {', '.join(map(str, levels))}.")
