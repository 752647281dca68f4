"""A project folder: what :meth:`FlexExplainer.save <flex_core.FlexExplainer.save>` writes and the explainer and the
app read back (data.csv with the row ids, model.skops, settings.json)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pandas as pd

from ._errors import ConfigError, DataError
from .importance._runs import where_criterion
from .limits import check_each

if TYPE_CHECKING:
    from .data import TaskSpec
    from .models import FittedModel

__all__ = ["PROJECT_FILES", "ROW", "VIEW_KEYS", "ProjectParts", "check_project_folder", "read_project", "as_classes",
           "project_view", "plain_value", "fit_record", "restore_fit", "read_project_settings"]

#: File names inside a folder written by :meth:`FlexExplainer.save`.
PROJECT_FILES = {"data": "data.csv", "model": "model.skops", "settings": "settings.json"}
#: The column of data.csv that holds the row ids.
ROW = "__row__"


def check_project_folder(directory: str | Path) -> Path:
    """``directory`` as an absolute path, if it holds what :meth:`FlexExplainer.save` writes; else a one-line error."""
    folder = Path(directory).expanduser()
    if not folder.exists():
        raise DataError(f"There is no folder {str(directory)!r} (write a project folder with explainer.save(DIR)).")
    if not folder.is_dir():
        raise DataError(f"{str(directory)!r} is a file, not a project folder (write one with explainer.save(DIR)).")
    missing = [name for name in PROJECT_FILES.values() if not (folder / name).is_file()]
    if missing:
        raise DataError(f"{str(directory)!r} is not a FLEX project folder: {', '.join(missing)} missing "
                        "(write one with explainer.save(DIR)).")
    return folder.resolve()


class ProjectParts(NamedTuple):
    """What :meth:`FlexExplainer.load_parts` reads from a project folder."""

    task: TaskSpec
    model: FittedModel
    #: whether the outcome column holds real labels (y was given), not the model's own predictions
    y_given: bool


def read_project(directory: Path, settings: dict) -> tuple[object, pd.DataFrame, dict]:
    """(estimator, X, the keywords :func:`flex_core._adopt.adopt_model` takes) of the project folder ``directory``,
    whose settings.json :meth:`FlexExplainer.read_settings` read: the one reading that :meth:`FlexExplainer.load` and
    :meth:`FlexExplainer.load_parts` share."""
    from .data import read_csv
    from .models import load_model

    text_columns = {c: str for c, dtype in settings.get("raw_dtypes", {}).items() if dtype == "object"}
    if settings.get("model") is not None:  # FLEX trained it on the task's categories, which it holds as text
        kinds = settings.get("kinds", {})
        text_columns.update({c: str for c, kind in kinds.items() if kind in ("categorical", "ordinal")} if isinstance(kinds, dict) else {})
    # Through the library's reader, so a project's data.csv meets the same size, shape and row-count limits as any
    # upload before it is parsed (a project folder can come from anyone).
    frame = read_csv(directory / PROJECT_FILES["data"], dtype={settings["target"]: str, **text_columns})
    if ROW not in frame.columns:
        raise DataError(f"data.csv has no {ROW} column (write the project with explainer.save).")
    frame = frame.set_index(ROW)
    for column in [*text_columns, settings["target"]]:
        if column in frame.columns:  # undo to_safe_csv's quote in front of formula-like text
            frame[column] = frame[column].str.replace(r"^'(?=[=+\-@\t\r])", "", regex=True)
    target = settings["target"]
    if target not in frame.columns:
        raise DataError(f"data.csv has no outcome column {target!r}.")
    y = frame[target] if settings.get("y_given") else None
    if y is not None:
        y = as_classes(y, settings["undesired"])
    adopted = dict(
        undesired=settings["undesired"],
        desired=settings.get("desired") or (),
        immutable=settings.get("immutable"),
        kinds=settings.get("kinds"),
        y=y,
        monotone=settings.get("monotone") or None,
        bounds=settings.get("bounds") or None,
        allowed=settings.get("allowed") or None,
        ordinal_orders=settings.get("ordinal_orders") or None,
        constraints=settings.get("constraints") or None,
        dictionary=settings.get("dictionary") or None,
        name=settings.get("name", directory.name),
    )
    return load_model(directory / PROJECT_FILES["model"]), frame.drop(columns=[target]), adopted


def fit_record(model: FittedModel) -> dict | None:
    """How a model trained here was trained, for settings.json: its name, encoding, seed, metrics and the rows it
    was trained and tested on (None for a model fitted elsewhere, whose project keeps none of these)."""
    if not model.trained_here:
        return None
    return {"name": model.name, "encoding": model.encoding, "seed": int(model.seed), "metrics": dict(model.metrics),
            "train_rows": [int(r) for r in model.train_index], "test_rows": [int(r) for r in model.test_index]}


def restore_fit(model: FittedModel, record, rows: pd.Index, task=None) -> FittedModel:
    """``model`` (read back from a project) with the training :func:`fit_record` wrote: the same split, so the
    validity rule's ranges over the training rows, the held-out scores and the refits are the saved explainer's
    (a regressor's score scale too, over ``task``'s target on those rows)."""
    import dataclasses

    if record is None:
        return model
    keys = {"name": str, "encoding": str, "seed": int, "metrics": dict, "train_rows": list, "test_rows": list}
    if not isinstance(record, dict) or any(not isinstance(record.get(k), t) for k, t in keys.items()):
        raise DataError("settings.json's model record is damaged (write the project again with explainer.save).")
    split = {}
    for key in ("train_rows", "test_rows"):
        ids = record[key]
        if not all(isinstance(r, int) and not isinstance(r, bool) for r in ids) or not pd.Index(ids).isin(rows).all():
            raise DataError(f"settings.json's {key} name rows data.csv does not have (write the project again).")
        split[key] = np.asarray(ids, dtype=np.int64)
    restored = dataclasses.replace(model, name=record["name"], encoding=record["encoding"], seed=record["seed"],
                                   metrics=record["metrics"], train_index=split["train_rows"],
                                   test_index=split["test_rows"], restored=True)
    if model.band is None or task is None:
        return restored
    from .models._regression import band_scale  # a regressor's score scale is over its training rows

    return dataclasses.replace(restored, band_scale=band_scale(task, split["train_rows"]))


def as_classes(y: pd.Series, undesired) -> pd.Series:
    """Outcomes read back as text get the type of the saved classes (numbers stay numbers; a band's are numbers)."""
    if isinstance(undesired, dict):
        return pd.to_numeric(y)
    if undesired and all(isinstance(u, (int, float)) and not isinstance(u, bool) for u in undesired):
        return pd.to_numeric(y)
    return y


#: The settings a project's view may hold, and the type each is stored as.
VIEW_KEYS = {"n_factuals": int, "tau": float, "query": int, "k": int, "where": str}


def project_view(view: Mapping | None) -> dict:
    """``view`` (see :meth:`FlexExplainer.save`) as settings.json stores it; a ConfigError naming a wrong key or value."""
    if view is None:
        return {}
    if not isinstance(view, Mapping):
        raise ConfigError(f"view must be a mapping of {', '.join(VIEW_KEYS)}; got {type(view).__name__}.")
    unknown = sorted(set(map(str, view)) - set(VIEW_KEYS))
    if unknown:
        raise ConfigError(f"view has no setting {', '.join(map(repr, unknown))}: it takes {', '.join(VIEW_KEYS)}.")
    out: dict = {}
    for key, value in view.items():
        if key == "where":
            criterion = where_criterion(value)  # settings.json keeps the app's "feature=value" text
            out[key] = (f"{criterion['feature']}={criterion['value']}" if isinstance(criterion, Mapping) else criterion)
            continue
        number = isinstance(value, (int, float, np.number)) and not isinstance(value, (bool, np.bool_))
        if not number or (VIEW_KEYS[key] is int and float(value) != int(value)):
            raise ConfigError(f"view's {key} must be {'a whole number' if VIEW_KEYS[key] is int else 'a number'}; got {value!r}.")
        out[key] = VIEW_KEYS[key](value)
    if "n_factuals" in out or "k" in out:
        check_each(**{k: out[k] for k in ("n_factuals", "k") if k in out})
    return out


def plain_value(value):
    """A numpy scalar as the Python number JSON writes (anything else as it is)."""
    return value.item() if isinstance(value, np.generic) else value


def read_project_settings(directory: str | Path) -> dict:
    """The settings.json of a project folder (:meth:`FlexExplainer.read_settings`); a DataError when the folder lacks
    a project's files or settings.json is not a JSON object."""
    directory = Path(directory)
    missing = [name for name in PROJECT_FILES.values() if not (directory / name).is_file()]
    if missing:
        # The folder's name, not its path: the app shows this message, and the path it resolved names server folders.
        raise DataError(f"{directory.name or str(directory)!r} is not a FLEX project folder: {', '.join(missing)} missing (write one "
                        "with explainer.save).")
    try:
        settings = json.loads((directory / PROJECT_FILES["settings"]).read_text())
    except json.JSONDecodeError as exc:
        raise DataError(f"settings.json is not valid JSON ({exc.msg}, line {exc.lineno}).") from None
    if not isinstance(settings, dict) or not isinstance(settings.get("view", {}), dict):
        raise DataError("settings.json must hold an object whose view is an object (write the project with explainer.save).")
    return settings
