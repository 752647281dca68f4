"""The counterfactual store: counterfactuals per factual row, generated once, optionally on disk.

The store is what makes τ, k and the query cheap to change: counterfactuals are
generated once per factual row (in one batched call for all rows still missing)
and every metric is recomputed from them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from .. import __version__
from .._errors import ConfigError, GenerationError
from .._format import plural, rows_not_in_data
from .._typing import Rows
from ..data import TaskSpec
from ..limits import check, check_memory
from ..models import FittedModel
from ._factuals import select_factuals, selection_note
from ._refine import check_refine, default_refine, refine_counterfactuals
from ._registry import generator_key
from ._revert import necessary_changes
from ._set import CounterfactualGenerator, CounterfactualSet, Progress, encode_rows, encoded_width
from ._tally import TALLIES_FORMAT
from ._validity import Validity, training_ranges, validity_of

__all__ = ["CounterfactualStore", "factual_rows", "training_ranges", "check_generation_memory", "chunk_rows_setting",
           "CHUNK_ROWS", "MEMORY_ROWS"]

#: Factuals generated in one generator call and written as one chunk file when a run asks for more (the
#: ``FLEX_CHUNK_ROWS`` environment variable overrides it): a run's memory for counterfactuals is that of one chunk,
#: and a run cut short (a lost Dask scheduler, a killed process) keeps every chunk it finished.
CHUNK_ROWS = 10_000
#: A store on disk also keeps its counterfactuals in memory while it holds at most this many factuals; beyond, it
#: reads them from its chunk files when asked (a memory-only store keeps all of them).
MEMORY_ROWS = 50_000


def chunk_rows_setting() -> int:
    """The factuals per chunk: ``FLEX_CHUNK_ROWS`` when set (a whole number >= 1), else :data:`CHUNK_ROWS`."""
    text = os.environ.get("FLEX_CHUNK_ROWS", "").strip()
    if not text:
        return CHUNK_ROWS
    try:
        return check("chunk_rows", int(text), label="FLEX_CHUNK_ROWS")
    except ValueError:
        return check("chunk_rows", text, label="FLEX_CHUNK_ROWS")  # refused, saying what it takes


def factual_rows(task: TaskSpec, model: FittedModel, rule: Validity | None = None) -> np.ndarray:
    """The factuals FLEX explains under ``rule`` (default: the default rule): see :mod:`._factuals`."""
    return select_factuals(task, model, Validity() if rule is None else rule)[0]


def check_generation_memory(generator: CounterfactualGenerator, task: TaskSpec, *, n_queries: int, n_cf: int) -> None:
    """Refuse generating for ``n_queries`` factuals when the generator's estimate exceeds the memory budget.

    A generator with a ``peak_bytes(task, n_queries=, n_cf=)`` method estimates itself; any other is
    taken to hold its result and one encoded copy of it (it has no candidate setting to blow it up).
    """
    peak = getattr(generator, "peak_bytes", None)
    estimate = (peak(task, n_queries=n_queries, n_cf=n_cf) if callable(peak)
                else int(n_queries) * int(n_cf) * 8 * (len(task.features) + encoded_width(task)))
    check_memory(estimate, what=f"finding the ways out of {plural(int(n_queries), 'case')}",
                 reduce="the cases to explain (N_F), the ways out per case (N_cf) or the generator's samples")


class CounterfactualStore:
    """Counterfactuals per factual row for one (data, model, generator, n_cf, seed), optionally on disk.

    ``ensure(rows)`` generates only the rows not yet stored, in one generator call per
    ``chunk_rows`` of them (default :func:`chunk_rows_setting`), and returns the set for
    exactly those rows; :meth:`chunks` gives them a chunk at a time instead, so a large run's
    memory is that of one chunk. On disk each generator call is one ``.npz`` chunk (arrays
    and JSON only, never pickles), written as soon as it finishes, in a folder named by a
    hash of the key, so a restarted app or a run cut short pays for nothing twice.

    ``refine`` ("minimal" or "none"; default: "minimal" for the batch generators, "none" for
    DiCE) makes every counterfactual minimal before the rows are stored: passengers reverted and
    each continuous/ordinal change shrunk to about the smallest the model needs, copies merged
    (inside the search for the batch generators, else :func:`refine_counterfactuals`); it is part
    of the key.

    ``chunk_rows`` is not part of the key: each factual's counterfactuals do not depend on the call
    that made them (the tree, batch and DiCE generators seed each query by its row id), only the
    per-call tallies and notes a chunk records do.
    """

    def __init__(
        self,
        task: TaskSpec,
        model: FittedModel,
        generator: CounterfactualGenerator,
        *,
        n_cf: int = 10,
        seed: int = 0,
        features_to_vary: Sequence[str] | None = None,
        permitted_range: Mapping[str, Sequence] | None = None,
        directory: str | Path | None = None,
        refine: str | None = None,
        chunk_rows: int | None = None,
    ):
        self.task, self.model, self.generator = task, model, generator
        self.chunk_rows = chunk_rows_setting() if chunk_rows is None else check("chunk_rows", chunk_rows)
        self.n_cf, self.seed = check("n_cf", n_cf), check("seed", seed)
        self.features_to_vary = None if features_to_vary is None else list(features_to_vary)
        self.permitted_range = None if permitted_range is None else dict(permitted_range)
        self.refine = check_refine(default_refine(generator.name) if refine is None else refine)
        #: When a counterfactual counts as valid (the generator's ``margin`` and ``radius``; see ``_validity``).
        self.rule = validity_of(generator)
        self.key = {
            # The package version is part of the key: a release that changes what a generator
            # returns must not be served counterfactuals cached by an older one.
            "flex_core": __version__,
            "data": task.fingerprint,
            "model": model.key,
            "generator": generator_key(generator),
            "n_cf": self.n_cf,
            "seed": self.seed,
            "features_to_vary": self.features_to_vary,
            "permitted_range": self.permitted_range,
            "refine": self.refine,
            # Also inside the data fingerprint; named here so a reader of the key sees them.
            "constraints": task.constraints,
            # The form in which a stored set keeps what its generator counted (_tally): a set stored before it has
            # none, and stacked with a new one would lose the new one's counts, so it is not read.
            "tallies": TALLIES_FORMAT,
            # Constraints between features (named only when there are some: other keys stay as they were).
            **({"constraints_between": task.rule_texts} if task.rules else {}),
        }
        self.digest = hashlib.sha256(json.dumps(self.key, sort_keys=True, default=str).encode()).hexdigest()[:20]
        self.directory = None if directory is None else Path(directory) / self.digest
        self._lock = threading.Lock()
        self._set: CounterfactualSet | None = None  # the rows held in memory (all of them without a folder)
        self._files: dict[int, Path] = {}  # row id -> the chunk file holding it
        self._necessary: dict[int, np.ndarray] = {}  # row id -> (n_cf, n_features), see necessary_changes
        #: What a reader of the results should know about this store (e.g. damaged cache files).
        self.notes: list[str] = []
        self._probed = False  # whether the folder was found writable (once, before the first generation)
        if self.directory is not None and self.directory.is_dir():
            self._open_directory(self.directory)

    def _open_directory(self, directory: Path) -> None:
        """Read the stored chunks; set aside damaged and foreign ones (with a note) and delete stale leftovers."""
        try:
            paths = sorted(directory.glob("chunk-*.npz"))
            _clean_stale(directory)
        except OSError as exc:  # a folder this process may not list: work in memory
            self._to_memory(f"cannot be read ({type(exc).__name__})")
            return
        loaded: list[CounterfactualSet] = []
        damaged, foreign = 0, 0
        for path in paths:
            try:
                cfset, owner = _read_chunk(path)
            except Exception:  # truncated or corrupted: set aside, its rows are generated again
                damaged += 1
                _set_aside(path, "damaged")
                continue
            if not self._belongs(cfset, owner):  # another store's chunk copied here: never mixed in
                foreign += 1
                _set_aside(path, "foreign")
                continue
            self._files.update(dict.fromkeys(cfset.query_index.tolist(), path))  # a later chunk's copy of a row wins
            loaded = [*loaded, cfset] if len(self._files) <= MEMORY_ROWS else []  # read one chunk at a time beyond
        if loaded:
            self._set = CounterfactualSet.concat(loaded)  # a row two processes both stored is kept once
        if damaged:
            self.notes.append(
                f"{damaged} stored file{'s' if damaged > 1 else ''} of ways out {'were' if damaged > 1 else 'was'} "
                f"damaged (truncated or corrupted) and set aside; the ways out {'they' if damaged > 1 else 'it'} held "
                "are found again."
            )
        if foreign:
            self.notes.append(
                f"{foreign} stored file{'s' if foreign > 1 else ''} of ways out in this cache folder belonged to "
                "other settings (another dataset, model, generator, number of ways out per case or seed) and "
                f"{'were' if foreign > 1 else 'was'} set aside unused; the ways out for these settings are found "
                "again."
            )

    def _belongs(self, cfset: CounterfactualSet, owner: str | None) -> bool:
        """Whether a stored chunk is this store's: written by it (``owner``), with its features, N_cf and factuals.

        A chunk written before chunks named their store has no owner: its features, N_cf and coded factuals
        (each row's values in this task) must match, which a chunk of other data or another model's rows fails.
        """
        if owner is not None and owner != self.digest:
            return False
        if cfset.feature_names != tuple(self.task.feature_names) or cfset.n_cf != self.n_cf:
            return False
        rows = cfset.query_index
        if not np.isin(rows, self.task.frame.index.to_numpy()).all():
            return False
        expected = encode_rows(self.task, self.task.frame.loc[rows, self.task.feature_names])
        return bool(np.array_equal(expected, cfset.factuals, equal_nan=True))

    def _to_memory(self, why: str) -> None:
        """Keep counterfactuals in memory only from now on, and say why (no path: the app shows notes to users)."""
        self.directory = None
        self.notes.append(f"The cache folder for ways out {why}, so they are kept in memory only: a restart finds "
                          "them again.")

    def _probe(self) -> None:
        """Before the first generation: a folder that cannot be written sends the store to memory now, not after."""
        if self._probed or self.directory is None:
            return
        self._probed = True
        probe = self.directory / f".partial-probe-{uuid.uuid4().hex[:8]}"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            probe.touch(exist_ok=False)
            probe.unlink()
        except OSError as exc:
            self._to_memory(f"cannot be written ({type(exc).__name__})")

    @cached_property
    def _factual_selection(self) -> tuple[np.ndarray, dict]:
        rows, selection = select_factuals(self.task, self.model, self.rule)
        return _read_only(rows), selection

    @property
    def factual_rows(self) -> np.ndarray:
        """The factuals, shape (n_factuals,): rows the model rejects with the rule's margin, not by memory
        (:mod:`._factuals`); one batched call per store, not per τ."""
        return self._factual_selection[0]

    @property
    def factual_selection(self) -> dict:
        """How the factuals were chosen and how many candidate cases were left out (plain data, a copy)."""
        return dict(self._factual_selection[1])

    @property
    def factual_note(self) -> str | None:
        """One sentence on the candidate cases left out as borderline or memorised (None when none were)."""
        selection = self._factual_selection[1]
        units = self.model.margin_in_units(selection["margin"]) if self.model.band is not None else None
        return selection_note(selection, self.task.undesirable_words, margin_units=units)

    def pool_note(self, n_requested: int) -> str | None:
        """One sentence when fewer cases are factuals than ``n_requested`` asked for (None otherwise)."""
        pool = len(self.factual_rows)
        if pool >= n_requested:
            return None
        selection = self.factual_selection
        left = int(selection.get("borderline", 0)) + int(selection.get("memorised", 0))
        words = self.task.undesirable_words
        why = (f" (the model predicts {words} for {int(selection['candidates']):,}; the {left:,} others are borderline "
               "or memorised)" if left else f": the model predicts {words} for no more")
        used = "it was" if pool == 1 else f"all {pool:,} were"
        return f"Only {plural(pool, 'case')} can be explained{why}; {used} used instead of {int(n_requested):,}."

    @cached_property
    def ranges(self) -> np.ndarray:
        """range(X_j) over the training rows, shape (n_features,) (see :func:`training_ranges`)."""
        return _read_only(training_ranges(self.task, self.model))

    @cached_property
    def validity(self) -> Validity:
        """The validity rule with its neighbourhood sized by the training ranges."""
        return self.rule.on(self.task, self.ranges)

    @property
    def stored_rows(self) -> np.ndarray:
        held = [] if self._set is None else self._set.query_index.tolist()
        return np.array(list(dict.fromkeys([*self._files, *held])), dtype=int)

    def _stored_among(self, rows: list[int]) -> set[int]:
        """The rows of ``rows`` the store holds (in memory or in a chunk file)."""
        return set(rows) - set(self.missing(rows))

    def _read(self, rows: list[int]) -> CounterfactualSet:
        """The stored counterfactuals of these rows, in this order: from memory, else one chunk file at a time."""
        if self._set is not None and self._set.has_rows(rows).all():
            return self._set.subset(rows)
        held = set() if self._set is None else set(self._set.query_index.tolist())
        by_file: dict[Path, list[int]] = {}
        for row in dict.fromkeys(rows):
            if row not in held:
                by_file.setdefault(self._files[row], []).append(row)
        parts = [] if not held else [self._set.subset([r for r in dict.fromkeys(rows) if r in held])]  # type: ignore[union-attr]
        for path, wanted in by_file.items():
            try:
                parts.append(_read_chunk(path)[0].subset(wanted))
            except Exception as exc:  # deleted or damaged since the store opened it
                raise GenerationError(f"A stored counterfactual file could not be read again ({type(exc).__name__}); "
                                      "run again to generate its counterfactuals anew.") from None
        return CounterfactualSet.concat(parts).subset(rows)

    def _keep(self, cfset: CounterfactualSet) -> None:
        """Store a generated set: written as a chunk file (its rows read from it), and in memory while small."""
        path = None if self.directory is None else self._write_chunk(self.directory, cfset)
        if path is not None:
            self._files.update(dict.fromkeys(cfset.query_index.tolist(), path))
        if path is None or len(self._files) <= MEMORY_ROWS:
            self._set = cfset if self._set is None else CounterfactualSet.concat([self._set, cfset])
        elif self._set is not None and self.directory is not None:
            self._set = None  # every row is in a chunk file: read from there from now on

    def _write_chunk(self, directory: Path, cfset: CounterfactualSet) -> Path | None:
        """Write under a temporary name, then rename: a killed app never leaves half a chunk.

        The name is unique (time, then a random part), so two processes sharing the folder never
        replace each other's chunk. The chunk names its store (:attr:`digest`). A write that fails
        (a full disk, a folder made read-only since) keeps the counterfactuals in memory, with a note.
        """
        name = f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}"
        partial = directory / f".partial-{name}.npz"
        try:
            directory.mkdir(parents=True, exist_ok=True)
            cfset.save(partial, owner=self.digest)
            os.replace(partial, directory / f"chunk-{name}.npz")
        except OSError as exc:
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)
            self._to_memory(f"could not be written ({type(exc).__name__})")
            return None
        return directory / f"chunk-{name}.npz"

    @property
    def _refines_in_search(self) -> bool:
        return bool(getattr(self.generator, "refines_in_search", False))

    def _generate(self, rows: list[int], *, features_to_vary, progress: Progress | None) -> CounterfactualSet:
        return self._generate_frame(self.task.frame.loc[rows, self.task.feature_names], features_to_vary=features_to_vary,
                                    progress=progress)

    def generate_cases(self, cases, *, progress: Progress | None = None) -> CounterfactualSet:
        """Counterfactuals for cases that need not be rows of the data (e.g. an edited case), not stored.

        ``cases`` is a DataFrame with the task's feature columns in its format; its index (non-negative
        integers) names the cases and seeds each one's search as a row id would. Every setting is this
        store's, so a row of the data passed here gets the counterfactuals :meth:`ensure` gives it.
        """
        if len(cases) == 0:
            raise ConfigError("No cases were given.")
        return self._generate_frame(cases[self.task.feature_names], features_to_vary=self.features_to_vary,
                                    progress=progress)

    def _generate_frame(self, queries, *, features_to_vary, progress: Progress | None) -> CounterfactualSet:
        """One generator call with every setting of this store except ``features_to_vary``.

        A generator that makes counterfactuals minimal while it searches is told the refine mode;
        any other one's counterfactuals are refined afterwards (:func:`refine_counterfactuals`).
        """
        extra = {"refine": self.refine} if self._refines_in_search else {}
        cfset = self.generator.generate(
            self.model,
            self.task,
            queries,
            n_cf=self.n_cf,
            features_to_vary=features_to_vary,
            permitted_range=self.permitted_range,
            seed=self.seed,
            progress=progress,
            **extra,
        )
        if self.refine == "minimal" and not self._refines_in_search:
            cfset = refine_counterfactuals(
                cfset, self.task, self.model, permitted_range=self.permitted_range, ranges=self.ranges,
                n_jobs=getattr(self.generator, "n_jobs", 1),  # the cores the generator was given
                validity=self.validity,
            )
        return cfset

    @property
    def varying_features(self) -> list[str]:
        """The features the generator may change: ``features_to_vary``, or every mutable feature."""
        return list(self.features_to_vary) if self.features_to_vary is not None else list(self.task.mutable_names)

    def generate_varying(
        self, rows: Rows, features_to_vary: Sequence[str], *, progress: Progress | None = None
    ) -> CounterfactualSet:
        """Counterfactuals for these rows when only ``features_to_vary`` may change, not stored.

        Every other setting (generator, n_cf, seed, ranges) is this store's, so the answer
        differs from :meth:`ensure`'s only in what may change (necessity and sufficiency).
        """
        rows = [int(r) for r in rows]
        if not rows:
            raise ConfigError("No factual rows were given.")
        return self._generate(rows, features_to_vary=list(features_to_vary), progress=progress)

    def reseeded(self, seed: int) -> CounterfactualStore:
        """A store with the same settings and another generator seed (its own cache folder)."""
        return self._like(self.generator, seed=seed, refine=self.refine)

    def _like(self, generator: CounterfactualGenerator, *, seed: int, refine: str | None) -> CounterfactualStore:
        """A store of this one's task, model, n_cf, ranges and cache root with these settings."""
        return CounterfactualStore(
            self.task,
            self.model,
            generator,
            n_cf=self.n_cf,
            seed=seed,
            features_to_vary=self.features_to_vary,
            permitted_range=self.permitted_range,
            directory=None if self.directory is None else self.directory.parent,
            refine=refine,
        )

    def with_generator(self, generator: CounterfactualGenerator, *, refine: str | None = None) -> CounterfactualStore:
        """A store with the same data, model and settings and another generator (its default refine unless given)."""
        return self._like(generator, seed=self.seed, refine=refine)

    def missing(self, rows: Rows) -> list[int]:
        rows = [int(r) for r in dict.fromkeys(int(r) for r in rows) if int(r) not in self._files]
        if self._set is None:
            return rows
        return [r for r, have in zip(rows, self._set.has_rows(rows)) if not have]

    def check_memory(self, n_queries: int) -> None:
        """Refuse (a ConfigError saying what to reduce) generating for ``n_queries`` factuals when the generator's
        memory estimate exceeds the budget (:func:`flex_core.limits.memory_budget`); :meth:`ensure` calls it first."""
        check_generation_memory(self.generator, self.task, n_queries=n_queries, n_cf=self.n_cf)

    def _check_rows(self, rows: Rows) -> list[int]:
        rows = [int(r) for r in rows]
        if not rows:
            raise ConfigError("No factual rows were given.")
        unknown = [r for r in rows if r not in self.task.frame.index]
        if unknown:
            raise ConfigError(rows_not_in_data(unknown))
        return rows

    def _fill(self, todo: list[int], progress: Progress | None) -> Iterator[CounterfactualSet]:
        """Generate ``todo`` in chunks of :attr:`chunk_rows`, storing each one as it finishes, and yield each.

        Queries a time limit skipped are not stored: another run, with more time, may find some.
        """
        blocks = [todo[start:start + self.chunk_rows] for start in range(0, len(todo), self.chunk_rows)]
        done = 0
        for k, block in enumerate(blocks):
            step = progress if progress is None or len(blocks) == 1 else _offset(progress, done, len(todo))
            try:
                fresh = self._generate(block, features_to_vary=self.features_to_vary, progress=step)
            except GenerationError as exc:
                if not k or self.directory is None:
                    raise
                kept = f"The {k} chunks" if k > 1 else "The chunk"
                raise GenerationError(f"{exc} {kept} of up to {self.chunk_rows:,} factuals finished before it "
                                      f"{'are' if k > 1 else 'is'} kept in the cache folder: run again to resume.") from None
            skipped = set(int(r) for r in fresh.config.get("skipped_rows", ()))
            kept_rows = [int(r) for r in fresh.query_index if int(r) not in skipped]
            if kept_rows:
                self._keep(fresh if len(kept_rows) == fresh.n_queries else fresh.subset(kept_rows))
            done += len(block)
            yield fresh

    def ensure(self, rows: Rows, *, progress: Progress | None = None) -> CounterfactualSet:
        """Counterfactuals for these rows, generating only the missing ones (one call per :attr:`chunk_rows`)."""
        rows = self._check_rows(rows)
        with self._lock:
            todo = self.missing(rows)
            if todo:
                self.check_memory(len(todo))
                self._probe()
                # The rows stored before this call, taken now: their share of the time is that of the run that made them.
                missing = set(todo)
                earlier = [r for r in dict.fromkeys(rows) if r not in missing]
                parts = [self._read(earlier)] if earlier else []
                fresh = list(self._fill(todo, progress))
                # This call still answers for every row asked, the skipped ones empty; this run's time is
                # counted once (stacking it onto the updated store counted it twice).
                return CounterfactualSet.concat([*parts, *fresh]).subset(rows)
            elif progress is not None:
                progress(len(rows), len(rows))
            return self._read(rows)

    def chunks(self, rows: Rows, *, progress: Progress | None = None) -> Iterator[CounterfactualSet]:
        """The counterfactuals of these rows a chunk of :attr:`chunk_rows` rows at a time, in the rows' order.

        The missing rows are generated first, a chunk at a time, each stored as it finishes (a run cut short
        keeps them: the next one resumes there); then the chunks are read back one by one, so memory holds one
        chunk's counterfactuals, not the run's. :meth:`ensure` of all the rows gives the same set, concatenated.
        """
        rows = self._check_rows(rows)
        with self._lock:
            todo = self.missing(rows)
            skipped: list[CounterfactualSet] = []
            if todo:
                self.check_memory(min(len(todo), self.chunk_rows))
                self._probe()
                for fresh in self._fill(todo, progress):
                    if fresh.config.get("skipped_rows"):  # unstored: answered empty, as ensure does
                        skipped.append(fresh.subset([int(r) for r in fresh.config["skipped_rows"]]))
            elif progress is not None:
                progress(len(rows), len(rows))
        unstored = {int(r): s for s in skipped for r in s.query_index}
        for start in range(0, len(rows), self.chunk_rows):
            block = rows[start:start + self.chunk_rows]
            extra = list({id(unstored[r]): unstored[r] for r in block if r in unstored}.values())
            stored = [r for r in dict.fromkeys(block) if r not in unstored]
            yield CounterfactualSet.concat([*([self._read(stored)] if stored else []), *extra]).subset(block)

    def necessary_changes(self, cfset: CounterfactualSet, *, keep: bool = True) -> np.ndarray:
        """Which changes of a set from :meth:`ensure` are necessary, shape (n_queries, n_cf, n_features).

        See :func:`flex_core.counterfactuals._revert.necessary_changes`. The answer does not depend
        on τ, so each stored row is scored once (one batched call for all rows not scored yet)
        and every later τ, k or query reuses it. ``keep=False`` (a run read in chunks) keeps none of the answers.
        """
        rows = [int(r) for r in cfset.query_index]
        with self._lock:
            todo = [r for r in dict.fromkeys(rows) if r not in self._necessary]
            fresh: dict[int, np.ndarray] = {}
            if todo:
                stored = self._stored_among(todo) if keep else set()
                for row, mask in zip(todo, necessary_changes(cfset.subset(todo), self.task, self.model, self.validity)):
                    mask.setflags(write=False)
                    fresh[row] = mask
                    if row in stored:  # not a row a time limit skipped: it may get counterfactuals later
                        self._necessary[row] = mask
            masks = [self._necessary[r] if r in self._necessary else fresh[r] for r in rows]
        return np.stack(masks) if masks else np.zeros((0, cfset.n_cf, len(cfset.feature_names)), bool)



#: Leftovers in a cache folder are deleted when the store opens it: a ``.partial-*`` file (a write a killed
#: process never finished; a write takes seconds) after a day, a ``.damaged-*`` / ``.foreign-*`` one (kept
#: to be looked at) after a week.
STALE_PARTIAL_SECONDS = 24 * 3600
STALE_SET_ASIDE_SECONDS = 7 * 24 * 3600


def _offset(progress: Progress, done: int, total: int) -> Progress:
    """``progress`` of one chunk's call as progress of the whole run (``done`` queries before it, of ``total``)."""
    return lambda step, _of: progress(done + step, total)


def _read_chunk(path: Path) -> tuple[CounterfactualSet, str | None]:
    """A stored chunk and the store that wrote it (None: written before chunks named their store)."""
    cfset = CounterfactualSet.load(path)
    with np.load(path, allow_pickle=False) as data:
        owner = json.loads(str(data["meta"])).get("owner")
    return cfset, None if owner is None else str(owner)


def _set_aside(path: Path, why: str) -> None:
    """Rename a chunk ``.damaged-*`` / ``.foreign-*`` so no store reads it again (left where it is when it cannot)."""
    with contextlib.suppress(OSError):
        path.replace(path.with_name(f".{why}-{path.name}"))


def _clean_stale(directory: Path, now: float | None = None) -> None:
    """Delete the leftovers older than :data:`STALE_PARTIAL_SECONDS` / :data:`STALE_SET_ASIDE_SECONDS`."""
    now = time.time() if now is None else now
    for pattern, age in ((".partial-*", STALE_PARTIAL_SECONDS), (".damaged-*", STALE_SET_ASIDE_SECONDS),
                         (".foreign-*", STALE_SET_ASIDE_SECONDS)):
        for path in directory.glob(pattern):
            try:
                if now - path.stat().st_mtime > age:
                    path.unlink()
            except OSError:  # gone already (another process cleaned it), or not ours to delete
                continue


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)  # shared by every rerun that reads the store
    return array
