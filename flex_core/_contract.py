"""The contract every result shares: to_dict / from_dict, to_json / from_json, to_frame, and a format version.

Each result's dict starts with ``format_version`` and ``kind``, carries the ``config`` that
produced it and ends with ``versions`` (the libraries it was computed with). The JSON Schema
``flex_core/schema/result.schema.json`` (draft 2020-12) describes every kind; the JSON format
page of the docs is generated from it (``tools/json_docs.py``).

:data:`FORMAT_VERSION` is ``"MAJOR.MINOR"``. A new optional key bumps MINOR; removing or
renaming a key, changing its type or meaning, or making a key required bumps MAJOR.
``from_dict`` reads every version with this MAJOR, the older MAJORs in :data:`READS_MAJORS`, and
dicts written before the format had a version (they have no ``format_version``).

2.0 (issue 22): a rule-defined region writes ``query: null`` (it has no query), a retyping of the
regional ``query``; it added the ``regions`` and ``groups`` kinds and the optional ``rule`` and
``rule_text``. Every 1.x dict is a valid 2.0 dict, so 1.x is still read.

2.3 (issue 36): the optional ``config.constraints_between`` and ``generator.constraints_between`` (constraints
between features, and which of them rejected or dropped what).

2.4 (issue 38): the optional ``model.test_precision_undesirable``, ``model.test_recall_undesirable``,
``model.test_f1_undesirable``, ``model.cv_f1_undesirable_mean`` / ``_std`` (the undesirable outcome's own scores) and
``model.f1_average`` (what ``test_f1`` averages over), and ``model.desired`` (with ``config.desired``: the classes a
counterfactual must reach); and (issue 40) the ``model_quality`` kind
(ROC, precision-recall and gain curves on held-out rows), the ``permutation`` kind (permutation importance), the
optional ``model_quality``, ``permutation`` and ``permutation_agreement`` of a global FLEX dict written by the CLI,
and the generator's optional ``time_limit`` and ``skipped_rows`` (issue 38: every generator's time limit).

2.6: the generator block's settings (``margin``, ``radius``, ``pairs``, ``samples``, ``max_rounds``, ``plausible``,
``method``, ``posthoc_sparsity``) and the ``tree`` generator's ``tree`` block (which generator ran and why, the order,
and what it counted), all written before and described now; a ``tree`` block with another key is refused.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ._errors import ConfigError, DataError, FlexError

__all__ = [
    "FORMAT_VERSION",
    "Result",
    "library_versions",
    "result_header",
    "result_schema",
    "check_against_schema",
    "json_number",
    "json_int",
    "json_floats",
    "json_matrix",
    "json_pair",
    "json_safe",
]

#: The version of the result format every ``to_dict`` writes (and the schema's ``format_version``).
FORMAT_VERSION = "2.6"
#: Major versions ``from_dict`` reads: this one, and 1 (whose dicts 2.0 only widened).
READS_MAJORS = ("1", "2")
#: The JSON Schema of every result kind, shipped inside the package.
SCHEMA_FILE = Path(__file__).resolve().parent / "schema" / "result.schema.json"
#: Libraries every result records; a result adds the ones only it uses (shap, lime).
BASE_LIBRARIES = ("flex-studio", "numpy", "pandas", "scikit-learn", "dice-ml", "scipy")


def library_versions(*extra: str) -> dict:
    """Versions of Python, flex_core and the libraries a result depends on (``extra`` adds more, e.g. "shap")."""
    import importlib.metadata as md
    import platform

    out = {"python": platform.python_version()}
    for pkg in (*BASE_LIBRARIES, *extra):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            continue
    from . import __version__

    out["flex_core"] = __version__
    return out


def result_header(kind: str) -> dict:
    """The keys a dict of ``kind`` starts with; for the plain-data outputs that have no result object."""
    return {"format_version": FORMAT_VERSION, "kind": kind}


def result_schema() -> dict:
    """The JSON Schema (draft 2020-12) of every result kind, as a dict."""
    return json.loads(SCHEMA_FILE.read_text())


# -- JSON-safe numbers ------------------------------------------------------------------------
def json_number(x):
    """JSON-safe float: NaN becomes null."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def json_int(x):
    """JSON-safe integer: NaN becomes null."""
    x = json_number(x)
    return None if x is None else int(x)


def json_floats(values) -> np.ndarray:
    """Floats read back from JSON (null becomes NaN), shape (n,)."""
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


def json_matrix(matrix: np.ndarray) -> list[list]:
    """A 2-d array as JSON lists (NaN becomes null)."""
    return [[json_number(v) for v in row] for row in np.asarray(matrix, dtype=float)]


def json_safe(value):
    """``value`` as plain JSON data: mappings with text keys, lists for tuples and arrays, Python numbers
    for numpy scalars, and null for numbers that are not finite (NaN, ±inf)."""
    if isinstance(value, Mapping):
        return {_json_key(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [json_safe(v) for v in value]
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    return value


def _json_key(key) -> str:
    """A key as ``json.dumps`` writes it."""
    return key if isinstance(key, str) else json.dumps(key) if isinstance(key, bool) or key is None else str(key)


def json_pair(values) -> list:
    """A [low, high] pair as JSON (NaN becomes null)."""
    return [json_number(v) for v in values]


# -- the base --------------------------------------------------------------------------------
class Result:
    """What every result shares. A subclass sets :attr:`kind`, writes its own keys in ``_body``
    (``config`` among them), reads them in ``_from_body``, and has a ``versions`` attribute
    (None for a result computed here; the recorded versions for one read back).
    """

    #: The ``kind`` its dict carries.
    kind: ClassVar[str]
    #: Libraries this kind records beyond :data:`BASE_LIBRARIES`.
    libraries: ClassVar[tuple[str, ...]] = ()
    #: Kinds ``from_dict`` accepts (a regional dict holds a FlexResult, for one).
    reads_kinds: ClassVar[tuple[str, ...]] = ()
    versions: dict | None = None

    def _body(self) -> dict:
        raise NotImplementedError

    @classmethod
    def _from_body(cls, data: Mapping) -> Result:
        raise NotImplementedError

    def to_frame(self) -> pd.DataFrame:
        """A tidy frame of the result's numbers (one row per feature, unless the kind says otherwise)."""
        raise NotImplementedError

    def versions_used(self) -> dict:
        """The versions the result was computed with: the recorded ones when it was read back, else this process's."""
        return dict(self.versions) if self.versions is not None else library_versions(*self.libraries)

    def to_dict(self, *, header: bool = True) -> dict:
        """Plain JSON-ready data: ``format_version``, ``kind``, the kind's keys with ``config``, and ``versions``.

        ``header=False`` leaves out ``format_version``, ``kind`` and ``versions``: for a result
        embedded in another's dict (the CLI's ``shap`` block, a FlexResult's ``generator_sensitivity``).
        """
        body = json_safe(self._body())
        return {**result_header(self.kind), **body, "versions": self.versions_used()} if header else body

    @classmethod
    def from_dict(cls, data: Mapping) -> Result:
        """The result :meth:`to_dict` describes.

        Raises ConfigError for a dict of another kind or of another major format version, and
        DataError for one the shipped schema refuses (a missing key, a wrong type, a number out of
        its range such as a frequency above 1, or one that is not finite) or that cannot be read.
        """
        check_header(data, cls.reads_kinds or (cls.kind,), reader=cls.__name__)
        check_against_schema(data, reader=cls.__name__)
        try:
            return cls._from_body(data)
        except FlexError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, StopIteration) as exc:
            # A dict without a header (no kind to check it against) that still lacks what the reader needs.
            raise DataError(f"{cls.__name__}.from_dict cannot read this dict ({type(exc).__name__}: "
                            f"{str(exc)[:80]}); write it with to_dict.") from None

    def to_json(self, path: str | os.PathLike | None = None, **kwargs) -> str:
        """The JSON text of :meth:`to_dict` (indented; NaN is already null), also written to ``path`` when given."""
        text = json.dumps(self.to_dict(), **{"indent": 2, "allow_nan": False, **kwargs})
        if path is not None:
            Path(path).write_text(text + "\n")
        return text

    @classmethod
    def from_json(cls, source: str | os.PathLike | Any) -> Result:
        """The result in a JSON text, a file path, or an open file, as :meth:`to_json` (or the CLI) wrote it."""
        return cls.from_dict(load_json(source))


def load_json(source) -> dict:
    """A JSON object from text (starting with ``{``), a path, or an open file."""
    if hasattr(source, "read"):
        text = source.read()
    elif isinstance(source, os.PathLike) or (isinstance(source, str) and not source.lstrip().startswith("{")):
        path = Path(source)
        if not path.is_file():
            raise DataError(f"No result file {str(path)!r} (pass a path, or the JSON text itself).")
        text = path.read_text()
    else:
        text = source
    if isinstance(text, bytes | bytearray):
        try:
            text = text.decode()
        except UnicodeDecodeError:
            raise DataError("This is not a result's JSON (it is not UTF-8 text).") from None
    def refuse(token: str):
        raise DataError(f"This result's JSON holds {token}, which is not JSON; a result writes null for it.")

    try:
        data = json.loads(text, parse_constant=refuse)
    except json.JSONDecodeError as exc:
        raise DataError(f"This is not a result's JSON ({exc.msg}, line {exc.lineno}).") from None
    except RecursionError:
        raise DataError("This is not a result's JSON (nested too deeply).") from None
    if not isinstance(data, dict):
        raise DataError("A result's JSON is an object ({...}).")
    return data


@lru_cache(maxsize=1)
def _validator():
    import jsonschema

    return jsonschema.Draft202012Validator(result_schema())


def _not_finite(value, path: str = "") -> str | None:
    """The path of the first number in ``value`` that is NaN or infinite, else None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else path or "(top)"
    if isinstance(value, Mapping):
        items: Iterable = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _not_finite(item, f"{path}/{key}" if path else str(key))
        if found:
            return found
    return None


def _newer_minor(version: str) -> bool:
    """A version with this MAJOR and a later MINOR than :data:`FORMAT_VERSION` (written by a newer flex_core)."""
    major, _, minor = version.partition(".")
    mine, _, my_minor = FORMAT_VERSION.partition(".")
    return major == mine and minor.isdigit() and int(minor) > int(my_minor)


def check_against_schema(data: Mapping, *, reader: str = "Result") -> None:
    """Refuse a result's dict that the shipped schema (flex_core/schema/result.schema.json) does not accept.

    Only a dict with ``kind`` and ``format_version`` can be checked (one embedded in another result has
    neither; a 1.x dict is checked as the 2.0 dict it is; a later 2.x one, which may carry keys added since,
    is not). Numbers that are not finite are refused in any dict. A DataError names the first place that is wrong.
    """
    where = _not_finite(data)
    if where:
        raise DataError(f"{reader}.from_dict: the number at {where} is not finite (NaN or infinity); "
                        "a result writes null for those.")
    if "kind" not in data or "format_version" not in data or _newer_minor(str(data["format_version"])):
        return  # a later 2.x may add keys this schema does not know: its reader still refuses what it cannot read
    from jsonschema.exceptions import best_match

    error = best_match(_validator().iter_errors({**data, "format_version": FORMAT_VERSION}))
    if error is not None:
        place = "/".join(map(str, error.absolute_path)) or "(top)"
        raise DataError(f"{reader}.from_dict: this is not a valid {data['kind']!s:.40} result at {place}: "
                        f"{error.message[:160]}.")


def check_header(data: Mapping, kinds: tuple[str, ...], *, reader: str = "Result") -> None:
    """Refuse a dict of another kind, or written in another major format version (a dict without them passes)."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"A result is read from a dict, not {type(data).__name__}.")
    kind = data.get("kind")
    if kind is not None and kind not in kinds:
        raise ConfigError(
            f"This is a {kind!r} result; {reader}.from_dict reads {' or '.join(repr(k) for k in kinds)} "
            "(flex_core.read_result reads any kind)."
        )
    version = data.get("format_version")
    if version is not None and str(version).split(".")[0] not in READS_MAJORS:
        raise ConfigError(
            f"This result was written in format {version}; this flex_core reads formats "
            f"{' and '.join(m + '.x' for m in READS_MAJORS)} (it writes {FORMAT_VERSION})."
        )
