"""Every kind of result, and reading one whose kind is not known in advance."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ._contract import Result, load_json
from ._errors import ConfigError

__all__ = ["DATA_KINDS", "result_classes", "read_result"]

#: Kinds the CLI writes as plain data, with no result object to read them back.
DATA_KINDS = ("reproduction", "reproduction_summary")


def result_classes() -> dict[str, type[Result]]:
    """kind -> the result class that writes and reads it."""
    from ._results import FlexResult, GeneratorSensitivity, RegionalResult
    from .compare import LimeImportance, RankAgreement, ShapImportance
    from .compare._permutation import PermutationImportance
    from .importance import NecessitySufficiency
    from .models._curves import ModelCurves
    from .regions import GroupsResult, RegionsResult

    classes = (FlexResult, RegionalResult, ShapImportance, LimeImportance, RankAgreement, NecessitySufficiency,
               GeneratorSensitivity, RegionsResult, GroupsResult, ModelCurves, PermutationImportance)
    return {cls.kind: cls for cls in classes}


def read_result(source: str | os.PathLike | Mapping | Any) -> Result:
    """The result in a dict, a JSON text, a file path or an open file, of whichever kind it says it is."""
    data = source if isinstance(source, Mapping) else load_json(source)
    kind = data.get("kind")
    classes = result_classes()
    if kind in DATA_KINDS:
        raise ConfigError(f"A {kind!r} file is plain data with no result object; read it with json.load.")
    if kind not in classes:
        known = ", ".join(sorted(classes))
        raise ConfigError(f"Unknown result kind {kind!r}; a result's JSON has a kind among {known}.")
    return classes[kind].from_dict(data)
