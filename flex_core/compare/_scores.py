"""What SHAP and LIME results share: per-feature scores ranked by mean |weight|, one export format."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import numpy as np
import pandas as pd

from .._contract import json_floats, json_matrix, json_number
from .._errors import ConfigError
from .._format import rows_not_in_data
from .._results import FeatureScores
from .._typing import Rows
from ..data import TaskSpec

__all__ = ["MethodScores", "checked_rows"]


class MethodScores(FeatureScores):
    """The export SHAP and LIME share (``method``, also their ``kind``, prefixes the columns); both rank by mean |weight|."""

    method: ClassVar[str]
    # Fields of the dataclasses built on this (ShapImportance, LimeImportance), declared for the type checker.
    display_names: tuple[str, ...]
    immutable: tuple[bool, ...]
    mean_abs: np.ndarray
    query_index: np.ndarray
    seconds: float
    config: dict

    @property
    def scores(self) -> np.ndarray:
        return self.mean_abs

    def _scores(self) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def _extra(self) -> dict:
        return {}

    def to_frame(self) -> pd.DataFrame:
        rank = f"{self.method}_rank"
        frame = pd.DataFrame(
            {
                "feature": self.feature_names,
                "label": self.display_names,
                "immutable": self.immutable,
                **self._scores(),
                rank: self.rank,
            }
        )
        return frame.sort_values([rank, "feature"], kind="stable").reset_index(drop=True)

    def _per_row(self) -> np.ndarray:
        raise NotImplementedError

    def _body(self) -> dict:
        """Plain data; with ``per_row`` (one list per explained row) :meth:`from_dict` rebuilds the result exactly."""
        ranks, scores = self.rank, self._scores()
        return {
            "method": self.method,
            **self._extra(),
            "features": [
                {"name": name, "label": self.display_names[j], "immutable": bool(self.immutable[j]),
                 **{k: json_number(v[j]) for k, v in scores.items()}, f"{self.method}_rank": int(ranks[j])}
                for j, name in enumerate(self.feature_names)
            ],
            "rows": [int(r) for r in self.query_index],
            "per_row": json_matrix(self._per_row()),
            "seconds": self.seconds,
            "config": self.config,
        }

    @classmethod
    def _common_from_dict(cls, data: Mapping) -> dict:
        records = data["features"]
        if data.get("method") != cls.method or "per_row" not in data:
            raise ConfigError(f"Not a {cls.method.upper()} result written by to_dict (method {data.get('method')!r}).")
        return {
            "feature_names": tuple(r["name"] for r in records),
            "display_names": tuple(r.get("label", r["name"]) for r in records),
            "immutable": tuple(bool(r.get("immutable", False)) for r in records),
            "query_index": np.asarray(data["rows"], dtype=int),
            "seconds": float(data["seconds"]),
            "config": dict(data.get("config") or {}),
            "per_row": np.array([json_floats(row) for row in data["per_row"]], dtype=float).reshape(len(data["rows"]), len(records)),
            "versions": data.get("versions"),
        }


def checked_rows(task: TaskSpec, rows: Rows, method: str) -> list[int]:
    """The row ids as ints; a ConfigError naming ``method`` when there are none or some are not in the data."""
    rows = [int(r) for r in rows]
    if not rows:
        raise ConfigError(f"No rows to explain with {method}.")
    missing = [r for r in rows if r not in task.frame.index]
    if missing:
        raise ConfigError(rows_not_in_data(missing))
    return rows
