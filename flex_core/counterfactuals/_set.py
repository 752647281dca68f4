"""The counterfactual-set container and the generator protocol every generator follows.

Counterfactuals are held as one float array of shape (n_queries, n_cf, n_features):
continuous features as their values, categorical and ordinal ones as the index of
the level in the task's ``Feature.categories``. NaN marks a slot the generator
left empty. Every FLEX metric is plain numpy over this array.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Protocol

import numpy as np
import pandas as pd

from .._errors import ConfigError, DataError
from .._format import listing, plural
from .._typing import Rows
from ..data._columns import category_text
from ..data._task import TaskSpec
from ..models import FittedModel
from ._tally import case_notes, cut, spent, stacked

__all__ = [
    "CounterfactualSet",
    "CHANGE_EPSILON",
    "differs",
    "CounterfactualGenerator",
    "Progress",
    "encode_rows",
    "decode_rows",
    "query_seed",
    "resolve_permitted_range",
    "check_request",
    "GeneratorParams",
    "encoded_width",
    "constraint_violations",
    "merge_copies",
    "copy_tolerance",
    "distinct_keys",
    "RELATIVE_TOLERANCE",
]

#: progress(done, total): called after each query (or batch) finishes.
Progress = Callable[[int, int], None]


#: Rows up to which levels are looked up one by one (a What-if case): pandas' vectorised path costs more there.
FEW_ROWS = 32


def encode_rows(task: TaskSpec, rows: pd.DataFrame) -> np.ndarray:
    """Rows in the original feature space to codes, shape (n_rows, n_features); NaN for unknown levels."""
    out = np.full((len(rows), len(task.features)), np.nan)
    few = len(rows) <= FEW_ROWS
    for j, f in enumerate(task.features):
        col = rows[f.name]
        if f.is_continuous:
            numbers = isinstance(col.dtype, np.dtype) and col.dtype.kind in "biuf"  # not pandas' nullable ones
            out[:, j] = col.to_numpy(dtype=float) if numbers else pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
        elif few:  # the same codes as below: the text of each value looked up among the levels
            index = {level: code for code, level in enumerate(f.levels)}
            out[:, j] = [index.get(v if isinstance(v, str) else category_text(v), np.nan) for v in col.to_numpy(dtype=object)]
        else:
            text = col.to_numpy(dtype=object)
            if pd.api.types.infer_dtype(text, skipna=False) != "string":  # the per-value rewrite only when needed
                text = np.array([v if isinstance(v, str) else category_text(v) for v in text], dtype=object)
            codes = pd.Categorical(text, categories=list(f.levels)).codes.astype(float)  # -1: unknown level
            codes[codes < 0] = np.nan
            out[:, j] = codes
    return out


def decode_rows(task: TaskSpec, codes: np.ndarray) -> pd.DataFrame:
    """Codes of shape (n_rows, n_features) back to a frame in the original feature space.

    Only ``task.features`` is read, so anything with that attribute decodes (a result keeps just its features).
    """
    data = {}
    for j, f in enumerate(task.features):
        col = codes[:, j]
        if f.is_continuous:
            data[f.name] = col
        else:
            levels = np.asarray(f.categories, dtype=object)
            decoded = np.full(len(col), None, dtype=object)
            ok = ~np.isnan(col)
            decoded[ok] = levels[col[ok].astype(int)]
            data[f.name] = decoded
    return pd.DataFrame(data)


def query_seed(seed: int, row_id: int) -> int:
    """A per-query seed, so a query's counterfactuals do not depend on which batch it came in."""
    return int((np.uint64(seed) * np.uint64(1_000_003) + np.uint64(row_id)) % np.uint64(2**31 - 1))


def resolve_permitted_range(task: TaskSpec, permitted_range: Mapping[str, Sequence] | None) -> dict[str, list]:
    """The permitted values per feature: the request's ``permitted_range`` within the task's own constraints.

    [low, high] for continuous features (an open end of a task's range is the data's
    minimum or maximum), the allowed levels for categorical and ordinal ones. A request
    and a task constraint on the same feature combine to what both allow; nothing left
    is a :class:`ConfigError`.
    """
    resolved: dict[str, list] = {}
    for feature in task.features:
        if feature.bounds is not None:
            column = task.frame[feature.name]
            low, high = feature.bounds
            resolved[feature.name] = [
                float(column.min()) if low is None else float(low),
                float(column.max()) if high is None else float(high),
            ]
        elif feature.allowed is not None:
            resolved[feature.name] = list(feature.allowed)
    for name, allowed in (permitted_range or {}).items():
        feature = task.feature(name)
        allowed = list(allowed)
        if feature.is_continuous:
            if len(allowed) != 2 or not allowed[0] <= allowed[1]:
                raise ConfigError(f"The permitted range of {name!r} must be [low, high] with low <= high.")
            low, high = float(allowed[0]), float(allowed[1])
            if name in resolved:
                low, high = max(low, resolved[name][0]), min(high, resolved[name][1])
                if low > high:
                    raise ConfigError(f"The permitted range of {name!r} lies outside the feature's own range.")
            resolved[name] = [low, high]
        else:
            unknown = [v for v in allowed if str(v) not in feature.levels]
            if unknown or not allowed:
                raise ConfigError(
                    f"The permitted values of {name!r} must be among: {', '.join(feature.levels)}."
                )
            levels = [str(v) for v in allowed]
            if name in resolved:
                levels = [v for v in levels if v in resolved[name]]
                if not levels:
                    raise ConfigError(f"None of the permitted values of {name!r} is among its allowed values.")
            resolved[name] = levels
    return resolved


def check_request(
    task: TaskSpec,
    queries: pd.DataFrame,
    *,
    n_cf: int,
    features_to_vary: Sequence[str] | None = None,
    permitted_range: Mapping[str, Sequence] | None = None,
) -> tuple[list[str], dict[str, list]]:
    """Validate a generation request once, for every generator.

    Returns the features allowed to vary (default: the mutable ones) and the
    permitted ranges as :func:`resolve_permitted_range` resolves them.
    """
    if n_cf < 1:
        raise ConfigError("n_cf must be at least 1.")
    if len(queries) == 0:
        raise ConfigError("No query rows were given.")
    vary = list(features_to_vary) if features_to_vary is not None else task.mutable_names
    unknown = [f for f in vary if f not in task.feature_names]
    if unknown:
        raise ConfigError(f"Unknown {listing('feature', unknown)} to vary.")
    immutable_asked = [f for f in vary if task.feature(f).immutable]
    if immutable_asked:
        raise ConfigError(f"The immutable {listing('feature', immutable_asked)} cannot vary.")
    if not vary:
        raise ConfigError("No feature may vary, so no counterfactual can exist.")
    return vary, resolve_permitted_range(task, permitted_range)


#: Values of a continuous feature closer than this share of its training range are the same value
#: (integers: at least one unit), for telling copies apart and for where shrinking stops.
RELATIVE_TOLERANCE = 1e-3


def copy_tolerance(task: TaskSpec, ranges: np.ndarray | None = None) -> np.ndarray:
    """Per feature, shape (F,): the size below which two values count as the same.

    ``range_j / 1000`` for continuous features (``ranges``: training ranges, default the data's),
    rounded up to whole units for integers; 1 for categorical and ordinal codes (only equal levels
    are the same). Minimal changes land on this grid (see ``_refine``), so copies are exact.
    """
    ranges = task.ranges() if ranges is None else np.asarray(ranges, dtype=float)
    stepwise = np.array([(not f.is_continuous) or f.integer for f in task.features])
    levels = np.array([np.nan if f.is_continuous else len(f.levels) - 1 for f in task.features], dtype=float)
    spans = np.where(np.isnan(ranges), levels, ranges)
    tolerance = np.maximum(np.nan_to_num(spans) * RELATIVE_TOLERANCE, 1e-12)
    # Whole units for integers (at least one) and levels (exactly one): the grid stays on their values.
    levels_only = np.array([not f.is_continuous for f in task.features])
    return np.where(levels_only, 1.0, np.where(stepwise, np.maximum(np.ceil(tolerance), 1.0), tolerance))


def distinct_keys(rows: np.ndarray, factuals: np.ndarray, tolerance: np.ndarray) -> list[bytes]:
    """One key per row, equal for copies: each change from the factual in units of ``tolerance``.

    Rows (n, F) and their factuals (n, F); two counterfactuals of one factual are copies when they
    change the same features to values less than a tolerance apart (a grid anchored at the factual).
    """
    steps = np.round((np.asarray(rows, dtype=float) - factuals) / tolerance)
    steps[steps == 0] = 0.0  # -0.0 and 0.0 are one key
    steps = np.ascontiguousarray(steps)
    return [row.tobytes() for row in steps]


@dataclass(frozen=True)
class MergedCopies:
    counterfactuals: np.ndarray
    found: np.ndarray
    valid: np.ndarray
    copies: np.ndarray  # (n_queries,) copies dropped per query


def merge_copies(
    factuals: np.ndarray, counterfactuals: np.ndarray, found: np.ndarray, valid: np.ndarray, tolerance: np.ndarray
) -> MergedCopies:
    """Keep the first of every group of copies among a query's valid counterfactuals (see :func:`distinct_keys`).

    The kept counterfactuals move to the front of the query's slots, in their order; invalid ones
    stay after them; freed slots are empty (NaN, not found). Shapes as in :class:`CounterfactualSet`.
    """
    n_q, n_cf, n_f = counterfactuals.shape
    cfs, found_out, valid_out = counterfactuals.copy(), found.copy(), valid.copy()
    copies = np.zeros(n_q, dtype=int)
    query, slot = np.nonzero(valid)
    if len(query) == 0:
        return MergedCopies(cfs, found_out, valid_out, copies)
    keys = distinct_keys(counterfactuals[query, slot], factuals[query], tolerance)
    seen: set[tuple[int, bytes]] = set()
    duplicate = np.zeros_like(valid)
    for q, c, key in zip(query, slot, keys):
        if (q, key) in seen:
            duplicate[q, c] = True
        else:
            seen.add((q, key))
    for q in np.flatnonzero(duplicate.any(axis=1)):
        keep = np.flatnonzero(found[q] & ~duplicate[q])
        keep = np.r_[keep[valid[q, keep]], keep[~valid[q, keep]]]  # distinct valid ones first
        cfs[q] = np.nan
        cfs[q, : len(keep)] = counterfactuals[q, keep]
        found_out[q] = np.arange(n_cf) < len(keep)
        valid_out[q] = False
        valid_out[q, : len(keep)] = valid[q, keep]
        copies[q] = int(duplicate[q].sum())
    return MergedCopies(cfs, found_out, valid_out, copies)


def constraint_violations(task: TaskSpec, factuals: np.ndarray, counterfactuals: np.ndarray) -> np.ndarray:
    """Which counterfactuals break a constraint of the task, shape (n,) bool.

    A changed feature breaks it when the feature is immutable, moves against its
    direction (codes of an ordinal feature follow its order), leaves its range or
    takes a level that is not allowed. A feature left at the factual's value never does.
    A counterfactual also breaks a constraint between features (``task.rules``) that it does not hold.

    Parameters
    ----------
    factuals, counterfactuals : ndarray of shape (n, n_features)
        Codes; row i of ``factuals`` is the factual of counterfactual i.
    """
    return feature_violations(task, factuals, counterfactuals) | ~task.rules_hold(counterfactuals, factuals)


def feature_violations(task: TaskSpec, factuals: np.ndarray, counterfactuals: np.ndarray) -> np.ndarray:
    """Which counterfactuals break a per-feature constraint (:func:`constraint_violations` without the rules)."""
    broken = np.zeros(len(counterfactuals), dtype=bool)
    for j, f in enumerate(task.features):
        before, after = factuals[:, j], counterfactuals[:, j]
        moved = before != after
        if not moved.any():
            continue
        bad = np.zeros(len(after), dtype=bool)
        if f.immutable:
            bad |= True
        if f.direction == "increase":
            bad |= after < before
        elif f.direction == "decrease":
            bad |= after > before
        if f.bounds is not None:
            low, high = f.bounds
            bad |= (after < (-np.inf if low is None else low)) | (after > (np.inf if high is None else high))
        if f.allowed is not None:
            allowed_codes = [f.levels.index(v) for v in f.allowed]
            bad |= ~np.isin(after, allowed_codes)
        broken |= moved & bad
    return broken


#: Below this a number's difference is float noise, not a change (DiCE's ε; FLEX's ``flex_importance(epsilon=)``).
CHANGE_EPSILON = 1e-6


def differs(factuals: np.ndarray, counterfactuals: np.ndarray, continuous: np.ndarray,
            epsilon: float = CHANGE_EPSILON) -> np.ndarray:
    """Cells (n_queries, n_cf, n_features) where a counterfactual differs from its factual: a number by more than
    ``epsilon``, a level when its code is another (a NaN level compares as different; callers mask empty slots)."""
    delta = np.abs(counterfactuals - factuals[:, None, :])
    with np.errstate(invalid="ignore"):
        return np.where(continuous, delta > epsilon, delta != 0)


@dataclass(frozen=True, eq=False)
class CounterfactualSet:
    """Counterfactuals for a set of query rows, in the task's coded feature space.

    Attributes
    ----------
    feature_names : tuple of str, length n_features
    query_index : ndarray of shape (n_queries,)
        Row identity (position in the input file) of each query.
    factuals : ndarray of shape (n_queries, n_features)
    counterfactuals : ndarray of shape (n_queries, n_cf, n_features)
        NaN where the generator returned fewer than n_cf counterfactuals.
    found : ndarray of bool, shape (n_queries, n_cf)
        The slot holds a counterfactual the generator returned.
    valid : ndarray of bool, shape (n_queries, n_cf)
        ``found`` and the model predicts the desirable outcome for it.
    seconds : float
        Wall time spent generating.
    copies : ndarray of int, shape (n_queries,)
        Counterfactuals merged into another of the same query because they were copies of it
        (see :func:`merge_copies`); the slots hold distinct counterfactuals only.
    dropped : ndarray of int, shape (n_queries,)
        Valid counterfactuals dropped because they only added features to a sparser one of the same
        query (:mod:`._alternatives`): not another way out.
    """

    feature_names: tuple[str, ...]
    query_index: np.ndarray
    factuals: np.ndarray
    counterfactuals: np.ndarray
    found: np.ndarray
    valid: np.ndarray
    generator: str
    seconds: float
    model_rows: int = -1
    notes: tuple[str, ...] = ()
    config: dict = field(default_factory=dict)
    #: None (not given) becomes zeros in __post_init__, so a set always holds an array here.
    copies: np.ndarray = None  # type: ignore[assignment]
    dropped: np.ndarray = None  # type: ignore[assignment]

    def __post_init__(self):
        n_q, n_cf, n_f = self.counterfactuals.shape
        for name in ("copies", "dropped"):
            if getattr(self, name) is None:
                object.__setattr__(self, name, np.zeros(n_q, dtype=int))
        if len(self.copies) != n_q or len(self.dropped) != n_q:
            raise DataError("Inconsistent counterfactual-set shapes.")
        if self.factuals.shape != (n_q, n_f) or self.found.shape != (n_q, n_cf) or self.valid.shape != (n_q, n_cf):
            raise DataError("Inconsistent counterfactual-set shapes.")
        if len(self.query_index) != n_q or len(self.feature_names) != n_f:
            raise DataError("Inconsistent counterfactual-set shapes.")
        for arr in (self.query_index, self.factuals, self.counterfactuals, self.found, self.valid, self.copies, self.dropped):
            arr.setflags(write=False)  # cached sets are shared between reruns: never mutate them

    # -- sizes -----------------------------------------------------------------------------
    @property
    def n_queries(self) -> int:
        return self.counterfactuals.shape[0]

    @property
    def n_cf(self) -> int:
        return self.counterfactuals.shape[1]

    def changed(self, task: TaskSpec) -> np.ndarray:
        """Which cells of each counterfactual differ from its factual, shape (n_queries, n_cf, n_features): a number
        by more than float noise (:data:`CHANGE_EPSILON`, whatever τ), a level when it is another level. Empty
        slots (not ``found``) are False."""
        continuous = np.array([f.is_continuous for f in task.features])
        return differs(self.factuals, self.counterfactuals, continuous) & self.found[:, :, None]

    @property
    def counts(self) -> np.ndarray:
        """Valid counterfactuals per query, shape (n_queries,): distinct ones (copies are merged)."""
        return self.valid.sum(axis=1)

    @property
    def coverage_notes(self) -> tuple[str, ...]:
        """The notes that count this set's cases: what the generator's tallies say of them (skipped at a time limit,
        more ways out than n_cf, ways out dropped or merged; :func:`~._tally.case_notes`), then how many got fewer
        than n_cf distinct valid counterfactuals, or none.

        Counted on the set's own rows when asked, not when generated: a region's set (a subset) speaks
        of its members, where a note made at generation spoke of whichever rows that call made
        ("7 of 7 queries..." under a region of five), and a set stacked from chunks speaks once of all of them.
        """
        counts = self.counts
        n, short, none = len(counts), int(((counts > 0) & (counts < self.n_cf)).sum()), int((counts == 0).sum())
        notes = list(case_notes(self.config, n_cases=n, n_cf=self.n_cf, copies=self.copies, generator=self.generator))
        if short:
            notes.append(f"{short:,} of these {plural(n, 'case')} got fewer than {self.n_cf} different valid ways out "
                         "(with every change as small as it can be, there are often no more).")
        if none:
            notes.append(f"{none:,} of these {plural(n, 'case')} got no valid way out; "
                         f"{'it is' if none == 1 else 'they are'} left out of the averages.")
        return tuple(notes)

    def cases_counted(self, name: str) -> frozenset[int] | None:
        """The rows of this set its generator counted under ``name`` (:mod:`._tally`'s per-case tallies, e.g.
        ``"more_than_n_cf"``: more smallest ways out than returned; ``"batch_fallback"``: left by ``tree`` to the
        batch search; ``"skipped"``: left at a time limit); None when the generator keeps no such tally."""
        entries = self.config.get("cases", {}).get(name)
        if entries is None:
            return None
        return frozenset(int(e["row"]) if isinstance(e, Mapping) else int(e) for e in entries)

    @property
    def copy_counts(self) -> np.ndarray:
        """Copies merged per query, shape (n_queries,) (a fresh array)."""
        return np.asarray(self.copies, dtype=int).copy()

    def coverage(self) -> dict:
        counts = self.counts
        found = int(self.found.sum())
        return {
            # Distinct valid counterfactuals per query (what FLEX averages over), and how many
            # queries had copies merged (the generator or the refinement made the same one twice).
            "distinct_mean": float(counts.mean()) if len(counts) else 0.0,
            "queries_with_copies": int((self.copies > 0).sum()),
            "copies_merged": int(self.copies.sum()),
            # Counterfactuals that only added features to a sparser one of the same factual (see _alternatives).
            "alternatives_dropped": int(self.dropped.sum()),
            "alternatives_tolerance": self.config.get("alternatives_tolerance"),
            "validity_rule": self.config.get("validity"),
            # The tree generator says which generator ran and why (the batch search for a model it does not read).
            **({"tree": self.config["tree"]} if "tree" in self.config else {}),
            # Per constraint between features: candidates it rejected, output it dropped, its share (_rulecheck).
            **({"constraints_between": self.config["constraints_between"]}
               if "constraints_between" in self.config else {}),
            "queries": int(self.n_queries),
            "counterfactuals_requested": int(self.n_queries * self.n_cf),
            "counterfactuals_found": found,
            "counterfactuals_valid": int(self.valid.sum()),
            "validity": float(self.valid.sum() / found) if found else 0.0,
            "queries_complete": int((counts == self.n_cf).sum()),
            "queries_short": int(((counts > 0) & (counts < self.n_cf)).sum()),
            "queries_without": int((counts == 0).sum()),
            # A time limit's cases left unserved (they have no counterfactuals, and FLEX counts them as such).
            **({"time_limit": self.config["time_limit"], "skipped_rows": list(self.config.get("skipped_rows", ()))}
               if self.config.get("time_limit") is not None else {}),
            "seconds": float(self.seconds),
            "model_rows": int(self.model_rows),
        }

    # -- selection and combination ---------------------------------------------------------
    def positions_of(self, rows: Rows) -> np.ndarray:
        lookup = {int(r): i for i, r in enumerate(self.query_index)}
        missing = [int(r) for r in rows if int(r) not in lookup]
        if missing:
            raise ConfigError(f"No counterfactuals are stored for {listing('row', missing)}.")
        return np.array([lookup[int(r)] for r in rows], dtype=int)

    def subset(self, rows: Rows) -> CounterfactualSet:
        """The queries with these row ids, in the given order: their cases' tallies, and whole the calls that made them
        (:func:`~._tally.cut`), so ``seconds`` and ``model_rows`` are what those calls spent."""
        pos = self.positions_of(rows)
        config = cut(self.config, self.query_index[pos])
        share = len(pos) / max(self.n_queries, 1)  # a set saved before calls were kept: its share of them
        seconds, model_rows = spent(config) or (self.seconds * share,
                                                int(self.model_rows * share) if self.model_rows >= 0 else -1)
        return CounterfactualSet(
            self.feature_names,
            self.query_index[pos].copy(),
            self.factuals[pos].copy(),
            self.counterfactuals[pos].copy(),
            self.found[pos].copy(),
            self.valid[pos].copy(),
            self.generator,
            seconds,
            model_rows,
            self.notes,
            config,
            self.copies[pos].copy(),
            self.dropped[pos].copy(),
        )

    def has_rows(self, rows: Rows) -> np.ndarray:
        known = set(int(r) for r in self.query_index)
        return np.array([int(r) in known for r in rows], dtype=bool)

    @staticmethod
    def concat(sets: Sequence[CounterfactualSet]) -> CounterfactualSet:
        """Stack sets of the same features and n_cf (a later duplicate row replaces an earlier one).

        The first set's settings; what the generators counted adds up (:func:`~._tally.stacked`), and the notes that
        count cases are written once for all of them (:attr:`coverage_notes`).
        """
        sets = [s for s in sets if s is not None]
        if not sets:
            raise ConfigError("Nothing to combine.")
        first = sets[0]
        if any(s.feature_names != first.feature_names or s.n_cf != first.n_cf for s in sets):
            raise ConfigError("Counterfactual sets differ in features or n_cf and cannot be combined.")
        index = np.concatenate([s.query_index for s in sets])
        _, last = np.unique(index[::-1], return_index=True)
        keep = np.sort(len(index) - 1 - last)
        part = np.repeat(np.arange(len(sets)), [s.n_queries for s in sets])[keep]
        config = stacked([(s.config, index[keep][part == k]) for k, s in enumerate(sets)])
        seconds, model_rows = spent(config) or (float(sum(s.seconds for s in sets)),
                                                int(sum(s.model_rows for s in sets)) if all(s.model_rows >= 0 for s in sets) else -1)
        return CounterfactualSet(
            first.feature_names,
            index[keep],
            np.concatenate([s.factuals for s in sets])[keep],
            np.concatenate([s.counterfactuals for s in sets])[keep],
            np.concatenate([s.found for s in sets])[keep],
            np.concatenate([s.valid for s in sets])[keep],
            first.generator,
            seconds,
            model_rows,
            tuple(dict.fromkeys(n for s in sets for n in s.notes)),
            config,
            np.concatenate([s.copies for s in sets])[keep],
            np.concatenate([s.dropped for s in sets])[keep],
        )

    # -- export ----------------------------------------------------------------------------
    def to_frame(self, task: TaskSpec) -> pd.DataFrame:
        """Long format: one row per factual and per found counterfactual, in original values.

        Columns: ``row`` (query row id), ``cf`` (-1 for the factual, else 0..n_cf-1),
        ``valid`` and one column per feature.
        """
        n_q, n_cf, n_f = self.counterfactuals.shape
        codes = np.concatenate([self.factuals[:, None, :], self.counterfactuals], axis=1).reshape(-1, n_f)
        present = np.concatenate([np.ones((n_q, 1), bool), self.found], axis=1).reshape(-1)
        frame = decode_rows(task, codes[present])
        frame.insert(0, "row", np.repeat(self.query_index, n_cf + 1)[present])
        frame.insert(1, "cf", np.tile(np.arange(-1, n_cf), n_q)[present])
        valid = np.concatenate([np.zeros((n_q, 1), bool), self.valid], axis=1).reshape(-1)
        frame.insert(2, "valid", valid[present])
        return frame

    def save(self, path: str | Path, *, owner: str | None = None) -> None:
        """Write to a compressed .npz (plain arrays and JSON; loading never unpickles).

        ``owner``: the store that keeps this set on disk (its key's digest), read back by the store.
        """
        meta = {
            "feature_names": list(self.feature_names),
            "generator": self.generator,
            "seconds": self.seconds,
            "model_rows": self.model_rows,
            "notes": list(self.notes),
            "config": self.config,
            **({"owner": owner} if owner is not None else {}),
        }
        np.savez_compressed(
            Path(path),
            query_index=self.query_index,
            factuals=self.factuals,
            counterfactuals=self.counterfactuals,
            found=self.found,
            valid=self.valid,
            copies=self.copies,
            dropped=self.dropped,
            meta=np.array(json.dumps(meta, default=str)),
        )

    @classmethod
    def load(cls, path: str | Path) -> CounterfactualSet:
        with np.load(Path(path), allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            return cls(
                tuple(meta["feature_names"]),
                data["query_index"].copy(),
                data["factuals"].copy(),
                data["counterfactuals"].copy(),
                data["found"].copy(),
                data["valid"].copy(),
                meta["generator"],
                float(meta["seconds"]),
                int(meta["model_rows"]),
                tuple(meta["notes"]),
                meta["config"],
                data["copies"].copy() if "copies" in data.files else np.zeros(data["counterfactuals"].shape[0], dtype=int),
                data["dropped"].copy() if "dropped" in data.files else np.zeros(data["counterfactuals"].shape[0], dtype=int),
            )


def encoded_width(task: TaskSpec) -> int:
    """Columns of a row encoded for a model: one per number, one per level of a categorical or ordinal feature."""
    return sum(1 if f.is_continuous else len(f.levels) for f in task.features)


class GeneratorParams:
    """Settings declared by ``__init__``'s signature, as scikit-learn estimators declare theirs.

    Each parameter of ``__init__`` must be readable as an attribute (or property) of
    the same name. ``execution_params`` only decide how the work is spread, never
    which counterfactuals come out, so cache keys leave them out; ``named_params``
    are fixed by the generator's registry name (e.g. DiCE's method), so the app does
    not offer them as settings.
    """

    execution_params: ClassVar[tuple[str, ...]] = ()
    named_params: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def param_names(cls) -> list[str]:
        parameters = inspect.signature(cls.__init__).parameters.values()
        return [p.name for p in parameters if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]

    def get_params(self) -> dict:
        """Every setting of ``__init__`` with its value."""
        return {name: getattr(self, name) for name in self.param_names()}

    def result_params(self) -> dict:
        """The settings that change the counterfactuals (``get_params`` without ``execution_params``)."""
        return {k: v for k, v in self.get_params().items() if k not in self.execution_params}

    @property
    def first_call_note(self) -> str | None:
        """A sentence for a progress message when this generator's first call in the process may take longer than
        its work (a compile, say); None when it will not."""
        return None

    def fallback_for(self, model: FittedModel, task: TaskSpec) -> str | None:
        """The registry name of the generator that serves ``model`` in this one's place, or None when this one
        serves it (``tree`` hands a model its tree form does not read to ``batch``)."""
        return None


class CounterfactualGenerator(Protocol):
    """What FLEX needs of a generator: counterfactuals for many queries at once."""

    name: str

    def generate(
        self,
        model: FittedModel,
        task: TaskSpec,
        queries: pd.DataFrame,
        *,
        n_cf: int,
        features_to_vary: Sequence[str] | None = None,
        permitted_range: Mapping[str, Sequence] | None = None,
        seed: int = 0,
        progress: Progress | None = None,
    ) -> CounterfactualSet:
        """Counterfactuals for each row of ``queries`` (index = row ids), toward the desirable outcome."""
        ...
