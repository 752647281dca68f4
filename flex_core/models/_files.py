"""Model files: scikit-learn-style classifiers in skops' ``.skops`` format, never pickle.

A ``.skops`` file describes the objects to build instead of holding code to run. Before
anything is built, :func:`load_model` lists the file's types with
``skops.io.get_untrusted_types`` and refuses the file if one of them comes from
outside :data:`TRUSTED_MODULES` and is not one of :data:`TRUSTED_TYPES` (skops' own always-safe built-ins, such as ``dict``
and ``list``, are not listed by skops and need no trust). Nothing in a refused file is
executed or even constructed.
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

from .._errors import ConfigError, DataError

__all__ = ["TRUSTED_MODULES", "TRUSTED_TYPES", "MAX_MODEL_BYTES", "load_model", "save_model", "untrusted_types"]

#: Modules whose types a model file may contain.
TRUSTED_MODULES = ("sklearn", "numpy", "scipy", "xgboost", "lightgbm")
#: Standard-library types trusted by their exact name, never their whole module: LightGBM's
#: ``.skops`` files hold an ``OrderedDict`` (its booster's parameters).
TRUSTED_TYPES = ("collections.OrderedDict",)
#: Model files larger than this are refused before reading.
MAX_MODEL_BYTES = 500 * 1024 * 1024


def _trusted(type_name: str) -> bool:
    return type_name in TRUSTED_TYPES or any(type_name == m or type_name.startswith(m + ".") for m in TRUSTED_MODULES)


def _read(source) -> bytes:
    """The file's bytes from a path, bytes or a file-like object (an upload)."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.suffix.lower() in (".pkl", ".pickle", ".joblib"):
            raise ConfigError(f"{path.name} is a pickle/joblib file, which can run code when loaded; save the model with skops (.skops).")
        if not path.is_file():
            raise DataError(f"Model file not found: {path}.")
        if path.stat().st_size > MAX_MODEL_BYTES:
            raise DataError(f"The model file is larger than {MAX_MODEL_BYTES / 2**20:.0f} MB.")
        return path.read_bytes()
    data = source if isinstance(source, bytes) else source.read()
    if len(data) > MAX_MODEL_BYTES:
        raise DataError(f"The model file is larger than {MAX_MODEL_BYTES / 2**20:.0f} MB.")
    return data


def untrusted_types(data: bytes) -> list[str]:
    """Types in a skops file's bytes from outside :data:`TRUSTED_MODULES` (read from its schema; nothing is built)."""
    import skops.io as sio

    return [t for t in _listed_types(data, sio) if not _trusted(t)]


def _listed_types(data: bytes, sio) -> list[str]:
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise DataError("This is not a .skops model file (save the model with skops.io.dump).")
    try:
        return list(sio.get_untrusted_types(data=data))
    except Exception as exc:  # a damaged or foreign zip: skops says why in its own words
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"The model file could not be read as .skops ({first[:160]}).") from None


def load_model(source):
    """A fitted model from a ``.skops`` file (path, bytes or file-like), trusting only :data:`TRUSTED_MODULES`.

    Raises
    ------
    ConfigError
        The file holds a type from another module (named in the message), or is a pickle/joblib file.
    DataError
        The file is missing, too large or not a ``.skops`` file.
    """
    import skops.io as sio

    data = _read(source)
    listed = _listed_types(data, sio)
    refused = [t for t in listed if not _trusted(t)]
    if refused:
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        raise ConfigError(
            f"The model file contains the type {refused[0]}{more}, which is not trusted: only types from "
            f"{', '.join(TRUSTED_MODULES)} (and {', '.join(TRUSTED_TYPES)}) are loaded. Nothing in the file was run."
        )
    try:
        return sio.loads(data, trusted=listed)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"The model file could not be loaded ({first[:160]}).") from None


def save_model(estimator, path) -> Path:
    """Write a fitted estimator to a ``.skops`` file; returns the path."""
    import skops.io as sio

    path = Path(path)
    sio.dump(estimator, path)
    return path
