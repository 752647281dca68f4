"""Model files: scikit-learn-style classifiers in skops' ``.skops`` format, never pickle.

A ``.skops`` file is a zip whose ``schema.json`` names every object to build; skops imports each
name and calls it. :func:`load_model` refuses the file before skops reads it unless

1. the zip is within the caps of :mod:`._archive` (size, entries, what each entry is), and
2. every node of ``schema.json`` is a kind FLEX allows and names an exact class (or function) that
   :mod:`._allowlist` lists for that kind: never a module prefix, never skops' own defaults.

Only then does skops build the model, with that list as its trusted types (skops audits again), and
its trees are checked before it is returned (:mod:`._trees`). Nothing in a refused file is built or run.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path

from .._errors import DataError
from ._allowlist import TRUSTED_BY_NODE_KIND, TRUSTED_FUNCTIONS, TRUSTED_TYPES
from ._archive import check_archive, refused
from ._trees import check_trees

__all__ = ["MAX_MODEL_BYTES", "MAX_DEPTH", "SKOPS_PROTOCOL", "load_model", "save_model", "untrusted_names"]

#: Model files larger than this are refused before reading.
MAX_MODEL_BYTES = 500 * 1024 * 1024
#: ``schema.json`` may nest at most this deep (a pipeline of encoders and a forest: under 30).
MAX_DEPTH = 200
#: The skops format version FLEX reads (what skops 0.16 writes); older versions hold nodes that read names elsewhere.
SKOPS_PROTOCOL = 2

# Node kinds left out of TRUSTED_BY_NODE_KIND, so refused: ConstructorFromReduceNode (calls the named
# callable with the file's arguments), MethodNode, OperatorFuncNode, CachedNode, MaskedArrayNode,
# QuantileForestNode, and any kind a later skops adds.


def _read(source) -> bytes:
    """The file's bytes from a path, bytes or a file-like object (an upload)."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.suffix.lower() in (".pkl", ".pickle", ".joblib"):
            raise refused(f"{path.name} is a pickle/joblib file, which can run code when loaded; save the model "
                          "with skops (.skops)")
        if not path.is_file():
            raise DataError(f"Model file not found: {path}.")
        if path.stat().st_size > MAX_MODEL_BYTES:
            raise refused(f"it is larger than {MAX_MODEL_BYTES / 2**20:.0f} MiB")
        return path.read_bytes()
    data = source if isinstance(source, bytes) else source.read(MAX_MODEL_BYTES + 1)
    if len(data) > MAX_MODEL_BYTES:
        raise refused(f"it is larger than {MAX_MODEL_BYTES / 2**20:.0f} MiB")
    return data


def _schema(data: bytes) -> dict:
    """``schema.json``, parsed (its size is checked by :func:`check_archive` first)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        text = archive.read("schema.json")
    try:
        schema = json.loads(text)
    except RecursionError:
        raise refused(f"its schema.json is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError:
        raise refused("its schema.json is not valid JSON") from None
    if not isinstance(schema, dict):
        raise refused("its schema.json does not describe an object")
    if schema.get("protocol") != SKOPS_PROTOCOL:
        raise refused(f"it was written in skops format {str(schema.get('protocol'))[:20]}; FLEX reads format "
                      f"{SKOPS_PROTOCOL} (load it where it was saved and save it again with skops 0.16)")
    return schema


def _nodes(schema: dict) -> Iterator[dict]:
    """Every node of the schema, wherever it sits (skops builds nodes only from dicts with a ``__loader__``)."""
    stack: list[tuple[object, int]] = [(schema, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise refused(f"its schema.json is nested more than {MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            if "__loader__" in value:
                yield value
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)


def _untrusted(node: dict) -> str | None:
    """What in ``node`` is not trusted, in words, or None."""
    kind, module, name = node["__loader__"], node.get("__module__"), node.get("__class__")
    full = f"{str(module)[:80]}.{str(name)[:80]}"
    if not isinstance(kind, str) or kind not in TRUSTED_BY_NODE_KIND:
        return f"a skops {str(kind)[:40]} of {full} (a kind of node FLEX never builds)"
    if not isinstance(module, str) or not isinstance(name, str):
        return f"a skops {kind} without a name"
    if full not in TRUSTED_BY_NODE_KIND[kind]:
        return f"the function {full}" if kind == "FunctionNode" else f"the type {full}"
    if kind == "RandomGeneratorNode":
        bit_generator = f"numpy.random.{_bit_generator(node)}"
        return None if bit_generator in TRUSTED_TYPES else f"the type {bit_generator[:120]}"
    return None


def _bit_generator(node: dict) -> str:
    """The bit generator a Generator node names, read where skops reads it."""
    try:
        name = json.loads(node["content"]["bit_generator"]["content"]["bit_generator"]["content"])
    except (KeyError, TypeError, ValueError):
        return "<missing>"
    return name if isinstance(name, str) else "<missing>"


def untrusted_names(data: bytes) -> list[str]:
    """What in a ``.skops`` file's bytes is not trusted, in words (empty: every node is); nothing is built.

    Raises
    ------
    ModelFileRefused
        The file breaks a cap or is not a ``.skops`` file.
    """
    check_archive(data)
    return sorted({reason for node in _nodes(_schema(data)) if (reason := _untrusted(node))})


def load_model(source):
    """A fitted model from a ``.skops`` file (path, bytes or file-like), built only from trusted names.

    Raises
    ------
    ModelFileRefused
        (A :class:`ConfigError`.) Refused before anything was built or run: a pickle/joblib file, a file
        over a cap, or one naming a kind, class or function not on :mod:`flex_core.models._allowlist`.
    DataError
        The file is missing, skops could not build the model from trusted parts, or a tree in it is
        malformed (one that would crash the process at its first prediction; :mod:`._trees`).
    """
    import skops.io as sio

    data = _read(source)
    untrusted = untrusted_names(data)
    if untrusted:
        more = f" (and {len(untrusted) - 1} more)" if len(untrusted) > 1 else ""
        raise refused(f"it names {untrusted[0]}{more}, which FLEX does not trust (docs/bring-your-own-model.md "
                      "lists the classes that load and how to ask for another)")
    try:
        model = sio.loads(data, trusted=sorted(TRUSTED_TYPES | TRUSTED_FUNCTIONS))
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"The model file could not be loaded ({first[:160]}).") from None
    check_trees(model)
    return model


def save_model(estimator, path) -> Path:
    """Write a fitted estimator to a ``.skops`` file; returns the path."""
    import skops.io as sio

    path = Path(path)
    sio.dump(estimator, path)
    return path
