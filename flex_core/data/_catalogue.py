"""The dataset catalogue: the built-in datasets, the paper's loan and accidents files, any CSV, and ``--data`` strings.

Every loader reads its file with :func:`flex_core.data.read_csv` and ends in
:func:`flex_core.data.make_task` (``_task.py``), which validates the frame.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._errors import ConfigError, DataError
from .._format import listing
from ._columns import MAX_OUTCOME_LEVELS, is_number_target, mostly_numeric
from ._dictionary import shipped_dictionary
from ._read import MAX_FILE_BYTES, read_csv, read_notes
from ._task import TaskSpec, make_task

__all__ = [
    "load_csv",
    "load_loan",
    "load_accidents",
    "load_builtin",
    "load_dataset",
    "BUILTIN_DATASETS",
    "SYNTHETIC_GROUND_TRUTH",
    "ACCIDENT_ORDERS",
    "MIN_ROWS_FOR_IDENTIFIER",
    "identifier_columns",
]

#: Fewer rows than this are too few to call a column of unique values an identifier.
MIN_ROWS_FOR_IDENTIFIER = 20

ACCIDENT_FEATURES = (
    "Driving_experience",
    "Cause_of_accident",
    "Types_of_Junction",
    "Type_of_collision",
    "Vehicle_movement",
    "Weather_conditions",
    "Pedestrian_movement",
    "Light_conditions",
    "Road_surface_type",
    "Age_band_of_driver",
    "Sex_of_driver",
)
ACCIDENT_IMMUTABLE = ("Age_band_of_driver", "Sex_of_driver")
#: The natural order of the accident file's ordered features (no direction: the paper's runs are unchanged).
ACCIDENT_ORDERS = {
    "Driving_experience": ["No Licence", "Below 1yr", "1-2yr", "2-5yr", "5-10yr", "Above 10yr", "unknown"],
    "Age_band_of_driver": ["Under 18", "18-30", "31-50", "Over 51", "Unknown"],
    "Educational_level": [
        "Illiterate", "Writing & reading", "Elementary school", "Junior high school",
        "High school", "Above high school", "Unknown",
    ],
}
ACCIDENT_UNDESIRABLE = ("Serious Injury", "Fatal injury")


# -- files -------------------------------------------------------------------------------
def _source_label(kind: str, source) -> str:
    return f"{kind}:{source}" if isinstance(source, (str, os.PathLike)) else f"{kind}:upload"


_SHOWN_COLUMNS = 4  # columns a message names


def _outcome_problem(column: pd.Series) -> str | None:
    """Why ``column`` cannot be an outcome, in a few words; None when it can."""
    counts = column.dropna().astype(str).str.strip().replace("", np.nan).dropna().value_counts()
    if counts.empty:
        return "no values"
    if len(counts) < 2:
        return f"one value only ({counts.index[0]!r})"
    if len(counts) > MAX_OUTCOME_LEVELS:
        return f"{len(counts):,} different values"
    single = counts[counts < 2]
    if len(single):
        return f"{single.index[0]!r} in one row only" + (f" (and {len(single) - 1} more such)" if len(single) > 1 else "")
    return None


def outcome_columns(frame: pd.DataFrame) -> list[str]:
    """The columns that could hold the outcome: 2 to :data:`MAX_OUTCOME_LEVELS` values, each in at least two rows.

    Raises
    ------
    DataError
        When no column qualifies, naming why the first few do not and what to fix, so an app can
        say so before anyone picks, say, a speed column as the target.
    """
    found, problems = [], []
    for name in frame.columns:
        problem = _outcome_problem(frame[name])
        if problem is None:
            found.append(str(name))
        else:
            problems.append(f"{name}: {problem}")
    if not found:
        shown = "; ".join(problems[:_SHOWN_COLUMNS]) + (f"; and {len(problems) - _SHOWN_COLUMNS} more" if len(problems) > _SHOWN_COLUMNS else "")
        raise DataError(
            f"No column looks like an outcome: one needs 2 to {MAX_OUTCOME_LEVELS} different values, each in at "
            f"least two rows ({shown}). Add the column holding each case's outcome (e.g. approved: yes/no) and "
            "upload the file again."
        )
    return found


def number_columns(frame: pd.DataFrame) -> list[str]:
    """The columns that hold a measured number (every value a number, more than :data:`MAX_OUTCOME_LEVELS` distinct
    ones): :func:`make_task` refuses each as the target, since one of its values against the rest means nothing."""
    return [str(name) for name in frame.columns if is_number_target(frame[name])]


def identifier_columns(frame: pd.DataFrame, *, target: str | None = None) -> list[str]:
    """Columns that name rows rather than describe them: every value present and unique.

    Text columns qualify, and integer columns that count up by one from row to row
    (row numbers such as 1..n); measured numbers (floats, other integers, numbers
    with a few stray text cells) never do, since those are often all distinct too. Frames of fewer than
    :data:`MIN_ROWS_FOR_IDENTIFIER` rows have none.
    """
    n = len(frame)
    if n < MIN_ROWS_FOR_IDENTIFIER:
        return []
    found = []
    for name in frame.columns:
        col = frame[name]
        if name == target or col.isna().any() or col.nunique() != n:
            continue
        if pd.api.types.is_float_dtype(col) or pd.api.types.is_bool_dtype(col) or mostly_numeric(col):
            continue
        if pd.api.types.is_integer_dtype(col) and not (np.diff(col.to_numpy()) == 1).all():
            continue  # only row numbers counting up by one; other all-distinct integers may be measurements
        found.append(str(name))
    return found


def load_csv(
    source,
    *,
    target: str,
    undesirable,
    immutable: Iterable[str] = (),
    kinds: Mapping[str, str] | None = None,
    features: Iterable[str] | None = None,
    use_identifiers: Iterable[str] = (),
    missing: Literal["drop", "impute"] = "drop",
    name: str | None = None,
    max_bytes: int = MAX_FILE_BYTES,
    dictionary=None,
    **constraints,
) -> TaskSpec:
    """A task from any CSV: kinds are inferred from the column types and can be overridden.

    Without ``features``, every column but the target is a feature except identifier
    columns (see :func:`identifier_columns`), which are left out with a note unless
    named in ``use_identifiers``. What reading the file guessed (delimiter,
    encoding) is in the task's ``notes``. ``dictionary`` (a TOML path, TOML text or a mapping) gives
    the features and the outcome the expert's words.
    ``constraints`` are :func:`make_task`'s ``monotone``, ``bounds``, ``allowed``, ``ordinal_orders`` and
    ``constraints`` (between features).
    """
    frame = read_csv(source, max_bytes=max_bytes)
    target = str(target).strip()
    notes = read_notes(frame)
    use_identifiers = [str(c).strip() for c in use_identifiers]
    unknown = [c for c in use_identifiers if c not in frame.columns]
    if unknown:
        raise ConfigError(f"The identifier {listing('column', unknown)} to use {'is' if len(unknown) == 1 else 'are'} not in the data.")
    if features is None and target in frame.columns:
        left_out = [c for c in identifier_columns(frame, target=target) if c not in use_identifiers]
        if left_out:
            features = [c for c in frame.columns if c != target and c not in left_out]
            notes.append(
                f"Left out {', '.join(left_out)}: every value is unique, so it names a row rather than describes it. "
                "To use it as a feature anyway, name it among the identifier columns to use when loading the data."
            )
    label = name or (Path(source).stem if isinstance(source, (str, os.PathLike)) else "uploaded CSV")
    return make_task(
        frame,
        target=target,
        undesirable=undesirable,
        features=features,
        kinds=kinds,
        immutable=immutable,
        **constraints,
        missing=missing,
        dictionary=dictionary,
        name=label,
        notes=notes,
        source=_source_label("csv", source),
    )


#: The ``dictionary`` default of the paper's and the built-in loaders: the dictionary shipped for that dataset.
SHIPPED = "shipped"


def _dictionary(given, kind: str):
    """``given``, or the dictionary shipped for ``kind`` when ``given`` is :data:`SHIPPED` (None: no dictionary)."""
    return shipped_dictionary(kind) if isinstance(given, str) and given == SHIPPED else given


def load_loan(source, *, max_bytes: int = MAX_FILE_BYTES, dictionary=SHIPPED) -> TaskSpec:
    """The Kaggle loan-approval file: strip padded names and values, drop ``loan_id``, undesirable = Rejected.

    ``dictionary``: the shipped words (display names, rupees, years, "Rejected" / "Approved") by default,
    another dictionary (a TOML path, TOML text or a mapping), or None for the tidied column names.
    """
    frame = read_csv(source, max_bytes=max_bytes, skipinitialspace=True)
    frame = frame.apply(lambda c: c.str.strip() if c.dtype == object else c)
    if "loan_status" not in frame.columns:
        raise DataError("This does not look like the loan-approval file: it has no 'loan_status' column.")
    if "loan_id" in frame.columns:
        frame = frame.drop(columns="loan_id")
    return make_task(
        frame,
        target="loan_status",
        undesirable=("Rejected",),
        kinds={c: "categorical" for c in ("education", "self_employed") if c in frame.columns},
        dictionary=_dictionary(dictionary, "loan"),
        name="loan approval",
        description="Kaggle loan-approval data: 2 categorical and 9 numeric applicant features; the outcome explained: "
                    "Rejected.",
        notes=[*read_notes(frame), "Stripped padded column names and values; dropped the identifier loan_id."],
        source=_source_label("loan", source),
    )


def load_accidents(source, *, missing: Literal["drop", "impute"] = "drop", max_bytes: int = MAX_FILE_BYTES,
                   dictionary=SHIPPED) -> TaskSpec:
    """The Addis Ababa road-traffic-accident file with the paper's 11 categorical features.

    Undesirable = Serious or Fatal injury; driver age band and sex are immutable.
    Rows with a missing value (empty cell or ``na``) are dropped by default,
    or imputed with ``missing="impute"``; the count is recorded in ``notes``. ``dictionary`` as for
    :func:`load_loan` (the shipped one says "Serious or fatal injury", "Driving experience", ...).
    """
    frame = read_csv(source, max_bytes=max_bytes)
    needed = [c for c in (*ACCIDENT_FEATURES, "Accident_severity") if c not in frame.columns]
    if needed:
        raise DataError(f"This does not look like the RTA accidents file: it lacks the {listing('column', needed)}.")
    return make_task(
        frame,
        target="Accident_severity",
        undesirable=ACCIDENT_UNDESIRABLE,
        features=ACCIDENT_FEATURES,
        kinds={c: "categorical" for c in ACCIDENT_FEATURES if c not in ACCIDENT_ORDERS},
        ordinal_orders={c: order for c, order in ACCIDENT_ORDERS.items() if c in ACCIDENT_FEATURES},
        immutable=ACCIDENT_IMMUTABLE,
        missing=missing,
        dictionary=_dictionary(dictionary, "accidents"),
        name="road traffic accidents",
        notes=read_notes(frame),
        description="Addis Ababa road traffic accidents 2017-2020; the outcome explained: Serious or Fatal injury.",
        source=_source_label("accidents", source),
    )


# -- built-ins ---------------------------------------------------------------------------
def _toy2d(seed: int) -> TaskSpec:
    """The paper's Fig. 2 toy: severity from speed and visibility, a curved boundary."""
    rng = np.random.default_rng(seed)
    n = 600
    speed = rng.uniform(20, 120, n)
    visibility = rng.uniform(0, 1, n)
    # Severe when fast for the visibility: the boundary bends, so both features matter.
    score = (speed - 40) / 80 - 0.8 * visibility ** 2 + rng.normal(0, 0.08, n)
    frame = pd.DataFrame(
        {
            "vehicle_speed": speed.round(1),
            "visibility": visibility.round(3),
            "Accident_severity": np.where(score > 0.25, "Severe", "Slight"),
        }
    )
    return make_task(
        frame,
        target="Accident_severity",
        undesirable="Severe",
        dictionary=shipped_dictionary("toy2d"),
        name="toy2d",
        description="The paper's Fig. 2 toy: 600 accidents, severity from vehicle speed and visibility.",
        source="builtin:toy2d",
    )


def _synthetic_regional(seed: int) -> TaskSpec:
    """Mixed data with planted drivers (see ``SYNTHETIC_GROUND_TRUTH``)."""
    rng = np.random.default_rng(seed)
    n = 2000
    speed = rng.uniform(20, 120, n).round(0)
    road = rng.choice(["urban", "rural", "motorway"], n)
    lighting = rng.choice(["daylight", "dark"], n)
    noise_cont = rng.normal(50, 15, n).round(2)
    noise_cat = rng.choice(["A", "B", "C", "D"], n)
    age_band = rng.choice(["18-30", "31-50", "over 50"], n)
    severe = (speed > 80) | ((road == "rural") & (lighting == "dark"))
    flip = rng.random(n) < 0.03  # a little label noise, as in real data
    severe = severe ^ flip
    frame = pd.DataFrame(
        {
            "speed": speed,
            "road_type": road,
            "lighting": lighting,
            "noise_continuous": noise_cont,
            "noise_categorical": noise_cat,
            "driver_age_band": age_band,
            "severity": np.where(severe, "Severe", "Slight"),
        }
    )
    return make_task(
        frame,
        target="severity",
        undesirable="Severe",
        immutable=("road_type", "driver_age_band"),
        dictionary=shipped_dictionary("synthetic-regional"),
        name="synthetic-regional",
        description=SYNTHETIC_GROUND_TRUTH,
        source="builtin:synthetic-regional",
    )


SYNTHETIC_GROUND_TRUTH = (  # in the words its shipped dictionary gives the features
    "Generated: severe when the speed is over 80 km/h (the global driver) or when the road is rural and it is dark "
    "(lighting: a driver only inside the region Road type = rural). Road type and Driver's age cannot change; "
    "Noise (number) and Noise (category) are pure noise; 3% label noise."
)


def _breast_cancer(seed: int) -> TaskSpec:
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer(as_frame=True)
    frame = bunch.data.copy()
    frame.columns = [c.replace(" ", "_") for c in frame.columns]
    frame["diagnosis"] = np.where(bunch.target == 0, "malignant", "benign")
    return make_task(
        frame,
        target="diagnosis",
        undesirable="malignant",
        name="breast-cancer",
        description="scikit-learn's bundled Wisconsin breast-cancer data: 30 continuous features; undesirable = malignant.",
        source="builtin:breast-cancer",
    )


BUILTIN_DATASETS = {
    "toy2d": _toy2d,
    "synthetic-regional": _synthetic_regional,
    "breast-cancer": _breast_cancer,
}


def load_builtin(name: str, *, seed: int = 0, dictionary=SHIPPED) -> TaskSpec:
    """One of the built-in datasets (``toy2d``, ``synthetic-regional``, ``breast-cancer``).

    ``dictionary`` as for :func:`load_loan`: toy2d and synthetic-regional ship one (km/h, "Severe" / "Slight").
    """
    try:
        build = BUILTIN_DATASETS[name]
    except KeyError:
        raise ConfigError(f"Unknown built-in dataset {name!r}; choose one of {', '.join(BUILTIN_DATASETS)}.") from None
    task = build(seed)
    return task if isinstance(dictionary, str) and dictionary == SHIPPED else task.with_dictionary(dictionary)


def load_dataset(
    spec: str,
    *,
    target: str | None = None,
    undesirable=None,
    desired=(),
    immutable: Iterable[str] = (),
    kinds: Mapping[str, str] | None = None,
    missing: Literal["drop", "impute"] = "drop",
    use_identifiers: Iterable[str] = (),
    monotone: Mapping[str, str] | None = None,
    bounds: Mapping[str, Sequence] | None = None,
    allowed: Mapping[str, Iterable] | None = None,
    ordinal_orders: Mapping[str, Sequence] | None = None,
    constraints: Sequence[str] = (),
    dictionary=None,
) -> TaskSpec:
    """Resolve a ``--data`` string: ``builtin:NAME``, ``loan:PATH``, ``accidents:PATH`` or a CSV path.

    Constraints (``monotone``, ``bounds``, ``allowed``, ``ordinal_orders``, and ``constraints`` between
    features, as :func:`make_task` takes them) apply to any data; an order given here replaces an
    adapter's order of that feature. ``dictionary`` (a TOML path, TOML text or a mapping) replaces the words
    shipped for a built-in or paper dataset, and gives a CSV its words. ``desired``: target values a counterfactual
    must reach (:meth:`TaskSpec.with_desired`), for any data.
    """
    task = _load_spec(spec, target=target, undesirable=undesirable, immutable=immutable, kinds=kinds, missing=missing,
                      use_identifiers=use_identifiers, monotone=monotone, bounds=bounds, allowed=allowed,
                      ordinal_orders=ordinal_orders, constraints=constraints)
    task = task.with_desired(desired) if desired else task
    return task if dictionary is None else task.with_dictionary(dictionary)


def _load_spec(spec, *, target, undesirable, immutable, kinds, missing, use_identifiers, monotone, bounds, allowed,
               ordinal_orders, constraints) -> TaskSpec:
    """:func:`load_dataset` before a dictionary is applied."""
    given: dict[str, Mapping | None] = {"monotone": monotone, "bounds": bounds, "allowed": allowed}
    options: dict[str, Any] = {k: dict(v) for k, v in given.items() if v}
    if constraints:
        options["constraints"] = list(constraints)
    kind, _, rest = spec.partition(":")
    if kind in ("builtin", "loan", "accidents") and rest and (target is not None or undesirable is not None):
        raise ConfigError(f"--target and --undesired (or a band) apply to a plain CSV; {kind}: data defines its own "
                          "target.")
    if kind in ("builtin", "loan", "accidents") and rest and list(use_identifiers):
        raise ConfigError(f"--use-identifier applies to a plain CSV; {kind}: data defines its own features.")
    adapters = {
        "builtin": lambda: load_builtin(rest),
        "loan": lambda: load_loan(rest),
        "accidents": lambda: load_accidents(rest, missing=missing),
    }
    if kind in adapters and rest:
        task = adapters[kind]()
        immutable, kinds = list(immutable), dict(kinds or {})
        if not immutable and not kinds and not options and not ordinal_orders:
            return task
        orders: dict[str, Sequence] | None = None
        if ordinal_orders:
            orders = {
                f.name: list(f.levels) for f in task.features if f.is_ordinal and kinds.get(f.name, "ordinal") == "ordinal"
            }
            orders.update(ordinal_orders)
        # Extra immutable features add to the adapter's own (the paper's age band and sex stay fixed).
        return task.with_overrides(
            kinds=kinds,
            immutable=list(dict.fromkeys([*task.immutable_names, *immutable])),
            ordinal_orders=orders,
            **options,
        )
    if target is None or undesirable is None:
        raise ConfigError(
            f"For a CSV file ({spec}) name the target and the undesirable class (--target COL --undesired VALUE), or "
            "for a number target its undesirable band (--above T, --below T or --band LO:HI)."
        )
    return load_csv(
        spec,
        target=target,
        undesirable=undesirable,
        immutable=immutable,
        kinds=kinds,
        missing=missing,
        use_identifiers=use_identifiers,
        ordinal_orders=ordinal_orders,
        **options,
    )

