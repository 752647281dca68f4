"""Result objects: plain frozen data that carries its own configuration, kept apart from plotting.

Every result shares :class:`flex_core._contract.Result`: ``to_dict`` / ``from_dict``,
``to_json`` / ``from_json``, ``to_frame``, and a ``format_version``.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from ._contract import Result, json_floats, json_int, json_matrix, json_number, json_pair
from ._uncertainty import frequency_intervals

__all__ = [
    "FeatureScores",
    "FlexResult",
    "RegionalResult",
    "GeneratorSensitivity",
    "importance_rank",
]

def importance_rank(values: np.ndarray) -> np.ndarray:
    """Ranks of shape (n,): 1 for the largest value, ties share the best rank (as the paper's tables), NaN ranks last."""
    values = np.nan_to_num(np.asarray(values, dtype=float), nan=-np.inf)
    return rankdata(-values, method="min").astype(int)


class FeatureScores(Result):
    """Per-feature scores and their ranks: the base of FlexResult, ShapImportance and LimeImportance.

    A subclass is a frozen dataclass with ``feature_names``, ``display_names`` and
    ``immutable`` (one entry per feature) that names the vector ranking its features
    (:attr:`scores`) and keeps the result contract (:class:`flex_core._contract.Result`).
    """

    feature_names: tuple[str, ...]

    @property
    def scores(self) -> np.ndarray:
        """The importance that ranks the features, shape (n_features,)."""
        raise NotImplementedError

    @property
    def rank(self) -> np.ndarray:
        """1 for the most important feature; ties share the best rank, NaN ranks last."""
        return importance_rank(self.scores)

    def score_of(self, name: str) -> float:
        """The score of one feature by name."""
        return float(self.scores[list(self.feature_names).index(name)])


@dataclass(frozen=True, eq=False)
class FlexResult(FeatureScores):
    """FLEX importances at one level (local, regional or global).

    Arrays are indexed by feature (length n_features) unless said otherwise.

    Attributes
    ----------
    level : {"local", "regional", "global"}
    frequency_mean, frequency_std : ndarray of shape (n_features,)
        F_j and its std across factuals (Eq. 4).
    magnitude_mean : ndarray of shape (n_features,)
        μ_j, mean relative change size |Δ|/range; NaN for categorical features.
    dice_frequency : ndarray of shape (n_features,)
        DiCE's Algorithm 2 on the same counterfactuals.
    local_frequencies : ndarray of shape (n_queries, n_features)
        f_j(i) per factual; a NaN row for a factual with no counterfactual.
    query_index : ndarray of shape (n_queries,)
    counts : ndarray of shape (n_queries,)
        Valid counterfactuals per factual.
    tau : ndarray of shape (n_features,)
        τ_j used; NaN for categorical features.
    necessary_frequency, necessary_std : ndarray of shape (n_features,) or None
        F_j and its std counting only *necessary* changes: those whose revert alone (back to
        the factual's value) makes the counterfactual invalid. None when no model was at hand.
    local_necessary : ndarray of shape (n_queries, n_features) or None
        f_j(i) counting only necessary changes.
    frequency_ci : ndarray of shape (n_features, 2) or None
        95% Wilson score interval of F_j (continuity-corrected) over the factuals with
        counterfactuals, which covers their counterfactual draws too (``config["intervals"]``);
        [0, 0] for an immutable feature that never changed.
    rank_interval : ndarray of shape (n_features, 2) or None
        [best, worst] rank that the F intervals allow (1 = most changed, ties share the best).
    flip_alone, needed : ndarray of shape (n_features,) or None
        Share of factuals that changing j alone flips, and share for which no flip was found
        with j held at the factual's value (see :mod:`flex_core.importance._necessity`). NaN for
        features that may not change. None unless asked for (two generator runs per feature).
    flip_alone_interval, needed_interval : ndarray of shape (n_features, 2) or None
        Their 95% Wilson intervals over the factuals.
    necessity_ratio, sufficiency_ratio : ndarray of shape (n_features,) or None
        Kommiya Mothilal et al. (2021): share of requested counterfactuals found when only j may
        change; 1 - share found when j is frozen. They count alternatives a generator finds, so a
        binary feature's necessity ratio is at most 1 / N_cf however decisive it is.
    frequency_seed_sd : ndarray of shape (n_features,) or None
        Std of F_j across generator seeds (``config["repeats"]``); None unless asked for.
    generator_sensitivity : dict or None
        The same factuals rerun with other generators: each one's F_j with its interval and whether
        they overlap (:func:`flex_core.importance.generator_sensitivity`); None unless asked for.
    counterfactual_set : CounterfactualSet or None
        The counterfactuals the numbers come from (see :meth:`counterfactuals_frame`); not in ``to_dict``.
    features : tuple of Feature
        The task's features, to decode ``counterfactual_set`` into original values and labels.
    versions : dict or None
        The library versions recorded in the JSON it was read from; None when computed here.
    """

    kind = "flex"
    reads_kinds = ("flex", "regional")  # a regional dict holds the region's FlexResult

    level: str
    feature_names: tuple[str, ...]
    display_names: tuple[str, ...]
    kinds: tuple[str, ...]
    immutable: tuple[bool, ...]
    tau: np.ndarray
    frequency_mean: np.ndarray
    frequency_std: np.ndarray
    magnitude_mean: np.ndarray
    dice_frequency: np.ndarray
    local_frequencies: np.ndarray
    local_magnitudes: np.ndarray
    query_index: np.ndarray
    counts: np.ndarray
    generator: dict = field(default_factory=dict)
    model: dict = field(default_factory=dict)
    config: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    necessary_frequency: np.ndarray | None = None
    necessary_std: np.ndarray | None = None
    local_necessary: np.ndarray | None = None
    frequency_ci: np.ndarray | None = None
    rank_interval: np.ndarray | None = None
    flip_alone: np.ndarray | None = None
    flip_alone_interval: np.ndarray | None = None
    needed: np.ndarray | None = None
    needed_interval: np.ndarray | None = None
    necessity_ratio: np.ndarray | None = None
    sufficiency_ratio: np.ndarray | None = None
    frequency_seed_sd: np.ndarray | None = None
    generator_sensitivity: GeneratorSensitivity | None = None
    #: F and the counterfactuals under K refits of the model (plain data; see flex_core.importance._retrain).
    retrain: dict | None = None
    #: The CounterfactualSet behind the result, or None (typed Any: counterfactuals builds on this module).
    counterfactual_set: Any = field(default=None, repr=False)
    features: tuple = field(default=(), repr=False)
    versions: dict | None = field(default=None, repr=False)

    @property
    def scores(self) -> np.ndarray:
        """F_j: the change frequency ranks the features (1 = most frequently changed)."""
        return self.frequency_mean

    @property
    def n_factuals_used(self) -> int:
        return int((self.counts > 0).sum())

    def only_necessary(self) -> FlexResult:
        """The same result counting only necessary changes (F, std, f_j(i), intervals and ranks)."""
        if self.necessary_frequency is None or self.necessary_std is None or self.local_necessary is None:
            raise ValueError("This result has no necessary-change frequencies (it was computed without a model).")
        settings = self.config.get("intervals", {})
        ci, ranks = frequency_intervals(
            self.local_necessary, level=settings.get("level", 0.95), fixed=np.array(self.immutable, dtype=bool)
        )
        return replace(
            self,
            frequency_mean=self.necessary_frequency,
            frequency_std=self.necessary_std,
            local_frequencies=self.local_necessary,
            frequency_ci=ci,
            rank_interval=ranks,
            config={**self.config, "count": "necessary changes only"},
        )

    def _optional_columns(self) -> dict[str, np.ndarray]:
        """Per-feature scores that exist only when computed, by JSON/frame column name."""
        out = {}
        for name in _OPTIONAL_SCORES:
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per feature, sorted by rank."""
        columns = {
            "feature": self.feature_names,
            "label": self.display_names,
            "kind": self.kinds,
            "immutable": self.immutable,
            "frequency_mean": self.frequency_mean,
            "frequency_std": self.frequency_std,
            "magnitude_mean": self.magnitude_mean,
            "dice_frequency": self.dice_frequency,
            "tau": self.tau,
            "rank": self.rank,
            **self._optional_columns(),
        }
        if self.frequency_ci is not None:
            columns.update(frequency_ci_low=self.frequency_ci[:, 0], frequency_ci_high=self.frequency_ci[:, 1])
        if self.rank_interval is not None:
            columns.update(rank_best=self.rank_interval[:, 0], rank_worst=self.rank_interval[:, 1])
        for name in _OPTIONAL_INTERVALS:
            if getattr(self, name) is not None:
                columns.update({f"{name}_low": getattr(self, name)[:, 0], f"{name}_high": getattr(self, name)[:, 1]})
        frame = pd.DataFrame(columns)
        return frame.sort_values(["rank", "feature"], kind="stable").reset_index(drop=True)

    def counterfactuals_frame(self) -> pd.DataFrame:
        """Every counterfactual the result was computed from, one row each.

        Columns: ``factual`` (the factual's row id), ``cf`` (0-based index within the factual),
        ``valid`` (the model predicts the desirable outcome), then every feature under its
        original name, in original units (integer features as integers) and category labels.
        """
        from ._errors import ConfigError

        if self.counterfactual_set is None:
            raise ConfigError("This result does not carry its counterfactuals (it was built without them).")
        frame = self.counterfactual_set.to_frame(SimpleNamespace(features=self.features))
        frame = frame[frame["cf"] >= 0].rename(columns={"row": "factual"}).reset_index(drop=True)
        for f in self.features:
            if f.is_continuous and f.integer:
                frame[f.name] = frame[f.name].round().astype("Int64")
        return frame

    def local_frame(self) -> pd.DataFrame:
        """f_j(i) per factual: rows are factual row ids, columns features, plus the counterfactual count."""
        frame = pd.DataFrame(self.local_frequencies, columns=list(self.feature_names), index=self.query_index)
        frame.index.name = "row"
        frame.insert(0, "counterfactuals", self.counts)
        return frame

    def feature_records(self) -> list[dict]:
        ranks = self.rank
        optional = self._optional_columns()
        records = []
        for j, name in enumerate(self.feature_names):
            record = {
                "name": name,
                "label": self.display_names[j],
                "kind": self.kinds[j],
                "immutable": bool(self.immutable[j]),
                "frequency_mean": json_number(self.frequency_mean[j]),
                "frequency_std": json_number(self.frequency_std[j]),
                "magnitude_mean": json_number(self.magnitude_mean[j]),
                "rank": int(ranks[j]),
                "dice_frequency": json_number(self.dice_frequency[j]),
                "tau": json_number(self.tau[j]),
                **{key: json_number(values[j]) for key, values in optional.items()},
            }
            if self.frequency_ci is not None:
                record["frequency_ci"] = json_pair(self.frequency_ci[j])
            if self.rank_interval is not None:
                record["rank_interval"] = [json_int(v) for v in self.rank_interval[j]]
            for name in _OPTIONAL_INTERVALS:
                if getattr(self, name) is not None:
                    record[name] = json_pair(getattr(self, name)[j])
            records.append(record)
        return records

    def _body(self) -> dict:
        """The CLI's JSON format (docs/json-format.md); :meth:`from_dict` reads it back."""
        return {
            "level": self.level,
            "features": self.feature_records(),
            "factuals": [int(r) for r in self.query_index],
            "counterfactuals_per_factual": [int(c) for c in self.counts],
            "local": {
                "frequencies": json_matrix(self.local_frequencies),
                "magnitudes": json_matrix(self.local_magnitudes),
                **({} if self.local_necessary is None else {"necessary": json_matrix(self.local_necessary)}),
            },
            "generator": self.generator,
            **({} if self.generator_sensitivity is None else {"generator_sensitivity": _sensitivity(self.generator_sensitivity)}),
            **({} if self.retrain is None else {"retrain": copy.deepcopy(self.retrain)}),
            "model": self.model,
            "config": self.config,
            "notes": list(self.notes),
        }

    @classmethod
    def _from_body(cls, data: Mapping) -> FlexResult:
        """The result the CLI's JSON (global or regional: the region's importance) describes."""
        records = data["features"]
        n_features, n_factuals = len(records), len(data["factuals"])
        local = data.get("local") or {}
        present = set(records[0]) if records else set()
        optional: dict[str, Any] = {name: json_floats(r[name] for r in records) for name in _OPTIONAL_SCORES if name in present}
        if "frequency_ci" in present:
            optional["frequency_ci"] = np.array([json_floats(r["frequency_ci"]) for r in records]).reshape(n_features, 2)
        for name in _OPTIONAL_INTERVALS:
            if name in present:
                optional[name] = np.array([json_floats(r[name]) for r in records]).reshape(n_features, 2)
        if "rank_interval" in present:
            ranks = np.array([json_floats(r["rank_interval"]) for r in records]).reshape(n_features, 2)
            optional["rank_interval"] = ranks if np.isnan(ranks).any() else ranks.astype(int)
        if "necessary" in local:
            optional["local_necessary"] = _matrix(local["necessary"], n_factuals, n_features)
        sensitivity = data.get("generator_sensitivity")
        return cls(
            level=data["level"],
            feature_names=tuple(r["name"] for r in records),
            display_names=tuple(r.get("label", r["name"]) for r in records),
            kinds=tuple(r["kind"] for r in records),
            immutable=tuple(bool(r["immutable"]) for r in records),
            tau=json_floats(r.get("tau") for r in records),
            frequency_mean=json_floats(r["frequency_mean"] for r in records),
            frequency_std=json_floats(r["frequency_std"] for r in records),
            magnitude_mean=json_floats(r["magnitude_mean"] for r in records),
            dice_frequency=json_floats(r["dice_frequency"] for r in records),
            local_frequencies=_matrix(local.get("frequencies"), n_factuals, n_features),
            local_magnitudes=_matrix(local.get("magnitudes"), n_factuals, n_features),
            query_index=np.asarray(data["factuals"], dtype=int),
            counts=np.asarray(data["counterfactuals_per_factual"], dtype=int),
            generator=dict(data.get("generator", {})),
            generator_sensitivity=GeneratorSensitivity._from_body(sensitivity) if sensitivity is not None else None,
            retrain=copy.deepcopy(data["retrain"]) if data.get("retrain") is not None else None,
            model=dict(data.get("model", {})),
            config=dict(data.get("config", {})),
            notes=tuple(data.get("notes", ())),
            versions=data.get("versions"),
            **optional,
        )


#: Per-feature scores a FlexResult has only when they were computed (JSON/frame column = attribute name).
_OPTIONAL_SCORES = (
    "necessary_frequency", "necessary_std", "flip_alone", "needed", "necessity_ratio", "sufficiency_ratio",
    "frequency_seed_sd",
)
#: Per-feature [low, high] pairs that exist only when computed.
_OPTIONAL_INTERVALS = ("flip_alone_interval", "needed_interval")


def _sensitivity(value: Mapping) -> dict:
    """A FlexResult's generator sensitivity as it goes into its dict (a plain dict given to the result works too)."""
    if not isinstance(value, GeneratorSensitivity):
        value = GeneratorSensitivity(value)
    return value.to_dict(header=False)


def _matrix(rows, n_rows: int, n_columns: int) -> np.ndarray:
    """A (n_rows, n_columns) float matrix from JSON rows (null = NaN); all NaN when the JSON has none."""
    if rows is None:
        return np.full((n_rows, n_columns), np.nan)
    return np.array([[np.nan if v is None else float(v) for v in row] for row in rows], dtype=float).reshape(n_rows, n_columns)


_MODE_SHIFT_NUMBERS = ("p_orig", "p_cf", "delta", "rank_shift")


@dataclass(frozen=True, eq=False)
class RegionalResult(Result):
    """Regional FLEX: a query factual, its Hamming neighbours, and how the region compares to global.

    Attributes
    ----------
    importance : FlexResult
        Regional F_j ± std over the members (level "regional").
    members : tuple of int
        Row ids; the query first, then neighbours by increasing distance.
    distances : tuple of float
        Distance of each member to the query.
    mode_shift : tuple of dict
        Per feature: ``name``, ``mode``, ``p_orig``, ``p_cf``, ``delta`` (Eq. 5), ``cf_mode`` and,
        for an ordinal feature, ``rank_shift`` (mean level change along its order; NaN otherwise).
    global_frequency : ndarray of shape (n_features,)
        F_j^global the region is compared with.
    pearson_r : float
        Pearson r between regional and global F over the mutable features (NaN if undefined).
    pearson_r_interval : (float, float)
        95% interval of r from the region's sampling error, the global F held as given
        (:func:`flex_core._uncertainty.pearson_interval`); NaN where r is undefined.
    quadrants : tuple of str or None
        "A"-"D" per feature as in the paper's Fig. 4; None for immutable features.
    neighbour_ties : dict or None
        ``{"distance", "candidates", "drawn"}`` when candidates tied at the k-th distance and
        ``drawn`` of them were picked at random (with the seed); None when no draw was needed.
    rule, rule_text : tuple of {"feature", "op", "value"} and str, or None
        For a rule-defined region (``FlexExplainer.explain_region(rule=...)``): the conditions its
        members meet and the rule in words. Such a region has no query (None) and no distances (()).
    """

    kind = "regional"

    importance: FlexResult
    query: int | None
    members: tuple[int, ...]
    distances: tuple[float, ...]
    criterion: dict | None
    mode_shift: tuple[dict, ...]
    global_frequency: np.ndarray
    pearson_r: float
    quadrants: tuple
    quadrant_thresholds: tuple[float, float]
    candidates: int = 0
    pearson_r_interval: tuple[float, float] = (float("nan"), float("nan"))
    neighbour_ties: dict | None = None
    rule: tuple[dict, ...] | None = None
    rule_text: str | None = None

    @property
    def feature_names(self) -> tuple[str, ...]:
        return self.importance.feature_names

    @property
    def versions(self) -> dict | None:  # type: ignore[override]  # read-only on purpose: a region's are its importance's
        """The versions its importance was read back with (None when computed here)."""
        return self.importance.versions

    @property
    def diagonal_side(self) -> tuple[str | None, ...]:
        """Per feature, where it lies against y = x: "above" (more important here than globally),
        "below", "on", or None for an immutable feature or an undefined F."""
        sides: list[str | None] = []
        for regional, global_f, quadrant in zip(self.importance.frequency_mean, self.global_frequency, self.quadrants):
            gap = regional - global_f
            if quadrant is None or math.isnan(gap):
                sides.append(None)
            else:
                sides.append("on" if abs(gap) < 1e-12 else "above" if gap > 0 else "below")
        return tuple(sides)

    def to_frame(self) -> pd.DataFrame:
        frame = self.importance.to_frame()
        lookup = dict(zip(self.feature_names, zip(self.global_frequency, self.quadrants, self.diagonal_side)))
        frame["global_frequency"] = [lookup[f][0] for f in frame["feature"]]
        frame["quadrant"] = [lookup[f][1] for f in frame["feature"]]
        frame["diagonal"] = [lookup[f][2] for f in frame["feature"]]
        return frame

    def mode_shift_frame(self) -> pd.DataFrame:
        return pd.DataFrame(list(self.mode_shift), columns=["name", "mode", "p_orig", "p_cf", "delta", "cf_mode", "rank_shift"])

    def _body(self) -> dict:
        out = self.importance.to_dict(header=False)
        lookup = dict(zip(self.feature_names, zip(self.global_frequency, self.quadrants, self.diagonal_side)))
        for record in out["features"]:
            global_f, quadrant, side = lookup[record["name"]]
            record["global_frequency"] = json_number(global_f)
            record["quadrant"] = quadrant
            record["diagonal"] = side
        out.update(
            query=None if self.query is None else int(self.query),
            members=[int(m) for m in self.members],
            distances=[float(d) for d in self.distances],
            criterion=self.criterion,
            candidates=int(self.candidates),
            neighbour_ties=self.neighbour_ties,
            mode_shift=[{k: (json_number(v) if k in _MODE_SHIFT_NUMBERS else v) for k, v in row.items()} for row in self.mode_shift],
            pearson_r=json_number(self.pearson_r),
            pearson_r_interval=json_pair(self.pearson_r_interval),
            quadrant_thresholds={"global": json_number(self.quadrant_thresholds[0]), "regional": json_number(self.quadrant_thresholds[1])},
        )
        if self.rule is not None:
            out.update(rule=[dict(c) for c in self.rule], rule_text=self.rule_text)
        return out

    @classmethod
    def _from_body(cls, data: Mapping) -> RegionalResult:
        """The result :meth:`to_dict` (or the CLI's regional JSON) describes."""
        records = data["features"]
        interval = data.get("pearson_r_interval") or [None, None]
        thresholds = data["quadrant_thresholds"]
        return cls(
            importance=FlexResult._from_body(data),
            query=None if data.get("query") is None else int(data["query"]),
            members=tuple(int(m) for m in data["members"]),
            distances=tuple(float(d) for d in data["distances"]),
            criterion=data.get("criterion"),
            mode_shift=tuple(
                {k: (np.nan if v is None and k in _MODE_SHIFT_NUMBERS else v) for k, v in row.items()}
                for row in data["mode_shift"]
            ),
            global_frequency=json_floats(r.get("global_frequency") for r in records),
            pearson_r=json_floats([data.get("pearson_r")])[0],
            quadrants=tuple(r.get("quadrant") for r in records),
            quadrant_thresholds=tuple(json_floats([thresholds["global"], thresholds["regional"]])),
            candidates=int(data.get("candidates", 0)),
            pearson_r_interval=tuple(json_floats(interval)),
            neighbour_ties=data.get("neighbour_ties"),
            rule=None if data.get("rule") is None else tuple(dict(c) for c in data["rule"]),
            rule_text=data.get("rule_text"),
        )



class GeneratorSensitivity(dict, Result):
    """The same factuals rerun with other generators: each one's F_j with its interval, and whether they overlap.

    A dict (as :func:`flex_core.importance.generator_sensitivity` has always returned) with the
    result contract. Keys: ``generators`` (the run's own first), ``refine`` per generator,
    ``features`` (per mutable feature: ``name``, ``label``, ``frequency`` and ``frequency_ci`` per
    generator, ``intervals_overlap``), ``differ`` (features whose intervals do not all overlap),
    ``config``, and for a region ``regional``: the same over its members, with ``r``,
    ``r_interval`` and ``r_intervals_overlap``.
    """

    kind = "generator_sensitivity"

    def __init__(self, *args, versions: dict | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.versions = versions

    def _body(self) -> dict:
        return copy.deepcopy(dict(self))

    @classmethod
    def _from_body(cls, data: Mapping) -> GeneratorSensitivity:
        body = {key: copy.deepcopy(value) for key, value in data.items() if key not in ("format_version", "kind", "versions")}
        return cls(body, versions=data.get("versions"))

    def to_frame(self) -> pd.DataFrame:
        """One row per (scope, feature, generator): scope is "global" or "regional" (the members)."""
        rows = []
        for scope, part in (("global", self), ("regional", self.get("regional"))):
            for record in (part or {}).get("features", []):
                for name in self["generators"]:
                    low, high = json_floats(record["frequency_ci"][name])
                    rows.append({
                        "scope": scope, "feature": record["name"], "label": record.get("label", record["name"]),
                        "generator": name, "frequency": json_floats([record["frequency"][name]])[0],
                        "frequency_ci_low": low, "frequency_ci_high": high, "intervals_overlap": record["intervals_overlap"],
                    })
        columns = ["scope", "feature", "label", "generator", "frequency", "frequency_ci_low", "frequency_ci_high", "intervals_overlap"]
        return pd.DataFrame(rows, columns=columns)
