"""What a generator counted, kept per case and per call so that it adds up when sets are cut and stacked.

A set is cut (:meth:`~._set.CounterfactualSet.subset`: a region, a chunk of a streamed run) and stacked
(:meth:`~._set.CounterfactualSet.concat`: the store's chunks, the rows a region adds to a session). What a generator
counted must mean the same after either, so its config keeps two kinds of tally beside its settings:

* **per case**, ``config["cases"]``: lists of the row ids a count is about. The cases a time limit skipped
  (``skipped``), those with more smallest ways out than n_cf (``more_than_n_cf``), those the tree generator left to
  the batch search and those that search served (``batch_fallback``, ``batch_fallback_found``), the ways out dropped for
  breaking a feature's constraint (``dropped_by_feature``, a row per way out), those dropped for breaking a constraint
  between features (``dropped_by_rule``: row, slot, broken), the cases breaking such a constraint as they are
  (``breaks_at_factual``: row, broken) and the cases DiCE failed on (``dice_failed``: row, why). A cut keeps its rows'
  entries; a stack keeps, for each row, the entries of the part whose counterfactuals it keeps.
* **per call**, ``config["calls"]``: what one generator (or refinement) call spent, under a call id, with the rows it
  made: its seconds and model rows (the set's ``seconds`` and ``model_rows``, :func:`spent`), model calls
  (``model_calls``), the refinement's calls, rows and seconds, the tree generator's pairs, and the candidates each
  constraint between features rejected while searching (``constraints_rejected``). These cannot be split by case: a
  cut keeps whole the calls its rows came from, and a stack unions calls by id, so stacking pieces of one call counts
  it once and stacking two calls adds them.

The entries a reader sees (``skipped_rows``, ``queries_skipped``, ``model_calls``, ``refine_model_*``,
``tree.more_than_n_cf``, ``tree.pairs_read``, ``constraints_between``, ...) are written from these by :func:`settled`
whenever a set is made, cut or stacked, and the notes that count cases by :func:`case_notes`: never carried as text,
so a note says "16 of 200 cases", not "1 of 25" once per chunk. A set saved before these were kept has neither
(:func:`settled` leaves its config as it is, and its notes carry their counts as text).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from .._format import plural
from ._rulecheck import merged_rules_report, rules_report

__all__ = ["TALLIES_FORMAT", "CASES", "CALLS", "REJECTED", "opened", "with_call", "cut", "stacked", "settled", "spent",
           "case_notes"]

CASES, CALLS = "cases", "calls"
#: The form of the tallies a set keeps, part of the counterfactual store's key: a stored set of an older form is
#: generated again rather than stacked with sets of this one (1: per case and per call, 2026-11-29).
TALLIES_FORMAT = 1

#: Per-call tallies summed over a set's calls, by their path in the config ("tree.pairs_read": config["tree"][...]).
SUMMED = ("model_calls", "refine_model_calls", "refine_model_rows", "refine_seconds",
          "tree.pairs_read", "tree.pair_candidates_cut", "tree.pairs_skipped")
REJECTED = "constraints_rejected"


def _row(entry) -> int:
    return int(entry["row"]) if isinstance(entry, Mapping) else int(entry)


def _keep(entries: Iterable, rows: set[int]) -> list:
    return [e for e in entries if _row(e) in rows]


def opened(config: Mapping, rows: Iterable[int], *, cases: Mapping | None = None,
           tallies: Mapping | None = None) -> dict:
    """A new set's config: its cases and one call over ``rows`` with ``tallies``, the public entries written."""
    config = {**config, CASES: {name: list(entries) for name, entries in (cases or {}).items()}}
    return with_call(config, rows, tallies or {})


def with_call(config: Mapping, rows: Iterable[int], tallies: Mapping) -> dict:
    """``config`` with one more call (a fresh id) over ``rows``: what it spent is added to what the set's calls spent.

    A set saved before tallies were kept gets the call's tallies as they are."""
    if CASES not in config:  # the set's own fields hold its seconds and model rows
        return {**config, **{k: v for k, v in tallies.items() if k in SUMMED and "." not in k}}
    calls = dict(config.get(CALLS, {}))
    calls[uuid.uuid4().hex[:16]] = {"rows": [int(r) for r in rows], **{k: _plain(v) for k, v in tallies.items()}}
    return settled({**config, CALLS: calls})


def _plain(value):
    """A tally as JSON keeps it exactly (a set is saved as JSON: a NumPy number would come back as text)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in value]
    return int(value) if isinstance(value, (int, np.integer)) else float(value)


def cut(config: Mapping, rows: Iterable[int]) -> dict:
    """The config of a subset with ``rows``: their cases, and the calls that made them (whole)."""
    if CASES not in config:
        return dict(config)
    keep = set(int(r) for r in rows)
    calls = {}
    for call_id, call in config.get(CALLS, {}).items():
        mine = [r for r in call["rows"] if r in keep]
        if mine:
            calls[call_id] = {**call, "rows": mine}
    cases = {name: _keep(entries, keep) for name, entries in config[CASES].items()}
    return settled({**config, CASES: cases, CALLS: calls})


def stacked(parts: Sequence[tuple[Mapping, np.ndarray]]) -> dict:
    """The config of sets stacked: ``parts`` are each set's config and the rows whose counterfactuals it keeps.

    The first part's settings; each row's cases from the part it comes from; the calls of every part, once each.
    A part saved before tallies were kept makes the result keep the first config, with the constraints' tallies summed.
    """
    first = dict(parts[0][0])
    if any(CASES not in config for config, _ in parts):
        merged = merged_rules_report([config for config, _ in parts])
        return {**first, **({"constraints_between": merged} if merged is not None else {})}
    cases: dict[str, list] = {}
    calls: dict[str, dict] = {}
    for config, rows in parts:
        keep = set(int(r) for r in rows)
        for name, entries in config[CASES].items():
            cases.setdefault(name, []).extend(_keep(entries, keep))
        for call_id, call in config.get(CALLS, {}).items():
            mine = [r for r in call["rows"] if r in keep]
            if call_id in calls:
                calls[call_id]["rows"].extend(mine)
            elif mine:
                calls[call_id] = {**call, "rows": mine}
    return settled({**first, CASES: cases, CALLS: calls})


def spent(config: Mapping) -> tuple[float, int] | None:
    """(seconds, model rows) the set's calls spent, whole (model rows -1 when a call did not count them); None for a
    set saved before tallies were kept (its own fields hold them)."""
    if CASES not in config:
        return None
    calls = config.get(CALLS, {}).values()
    rows = [call.get("model_rows", -1) for call in calls]
    return (float(sum(call.get("seconds", 0.0) for call in calls)),
            int(sum(rows)) if all(r >= 0 for r in rows) else -1)


def settled(config: Mapping) -> dict:
    """``config`` with the entries a reader sees written from its cases and calls (as it is without them)."""
    out = dict(config)
    if CASES not in out:
        return out
    cases, calls = out[CASES], out.get(CALLS, {})
    skipped = [_row(e) for e in cases.get("skipped", [])]
    out["skipped_rows"], out["queries_skipped"] = skipped, len(skipped)
    summed = {key: sum(call[key] for call in calls.values() if key in call) for key in SUMMED
              if any(key in call for call in calls.values())}
    tree = dict(out["tree"]) if isinstance(out.get("tree"), Mapping) else None
    for key, value in summed.items():
        if key.startswith("tree."):
            if tree is not None:
                tree[key[5:]] = value
        else:
            out[key] = value
    if tree is not None and tree.get("ran") == "tree":
        tree["more_than_n_cf"] = [_row(e) for e in cases.get("more_than_n_cf", [])]
        tree["batch_fallback_queries"] = len(cases.get("batch_fallback", []))
        tree["batch_fallback_found"] = len(cases.get("batch_fallback_found", []))
    if tree is not None:
        out["tree"] = tree
    if "constraints_between" in out:
        out["constraints_between"] = _rules_block(out["constraints_between"], cases, calls)
    return out


def _rules_block(block: Mapping, cases: Mapping, calls: Mapping) -> dict:
    """The ``constraints_between`` block written from the cases and calls (:func:`~._rulecheck.rules_report`)."""
    texts = [rule["constraint"] for rule in block["constraints"]]
    rejected = np.zeros(len(texts), dtype=np.int64)
    for call in calls.values():
        if REJECTED in call:
            rejected += np.asarray(call[REJECTED], dtype=np.int64)
    drops = cases.get("dropped_by_rule", [])
    report = rules_report(texts, rejected, _per_rule(texts, drops), _per_rule(texts, cases.get("breaks_at_factual", [])))
    return {**report, **({"dropped": list(drops)} if drops else {})}


def _per_rule(texts: Sequence[str], entries: Iterable[Mapping]) -> np.ndarray:
    counts = dict.fromkeys(texts, 0)
    for entry in entries:
        for text in entry["broken"]:
            counts[text] += 1
    return np.array([counts[t] for t in texts], dtype=np.int64)


def case_notes(config: Mapping, *, n_cases: int, n_cf: int, copies: np.ndarray, generator: str) -> tuple[str, ...]:
    """The notes that count this set's cases, written from its tallies (none for a set saved before they were kept,
    whose notes carry their counts)."""
    if CASES not in config:
        return ()
    cases = config[CASES]
    notes = []
    failed: dict[str, int] = {}
    for entry in cases.get("dice_failed", []):
        failed[entry["why"]] = failed.get(entry["why"], 0) + 1
    notes += [f"DiCE failed on {plural(n, 'case')}: {why}" for why, n in failed.items()]
    if cases.get("skipped"):
        notes.append(skipped_note(len(cases["skipped"]), n_cases, config.get("time_limit")))
    more = len(cases.get("more_than_n_cf", []))
    if more:
        notes.append(f"{more:,} of {plural(n_cases, 'case')} {'has' if more == 1 else 'have'} more different smallest "
                     f"ways out than the {n_cf} returned (those with the fewest changed features and the smallest changes "
                     "are kept; equal ones are taken in turn across features, never in the file's order).")
    if cases.get("dropped_by_feature"):
        notes.append(_dropped(len(cases["dropped_by_feature"]), generator, "a feature's constraint, its allowed direction "
                              "or range (the generator cannot express every one)"))
    texts = [rule["constraint"] for rule in config.get("constraints_between", {}).get("constraints", [])]
    if cases.get("dropped_by_rule"):
        worst = ", ".join(f"{t!r} {int(c)}" for t, c in zip(texts, _per_rule(texts, cases["dropped_by_rule"])) if c)
        notes.append(_dropped(len(cases["dropped_by_rule"]), generator, f"a constraint between features ({worst})"))
    at_factual = _per_rule(texts, cases.get("breaks_at_factual", []))
    notes += [f"{int(n):,} of the {plural(n_cases, 'case')} {'breaks' if n == 1 else 'break'} {text!r} at "
              f"{'its' if n == 1 else 'their'} own values: only a way out that changes them so it holds is kept."
              for text, n in zip(texts, at_factual) if n]
    merged = int(np.sum(copies))
    if merged:
        notes.append(f"{plural(merged, 'copy', 'copies')} among the ways out of {plural(int((copies > 0).sum()), 'case')} "
                     f"{'was' if merged == 1 else 'were'} merged: FLEX counts each different way out once.")
    return tuple(notes)


def skipped_note(n_skipped: int, n_cases: int, time_limit: float | None) -> str:
    """The note of a generator that stopped starting cases at its time limit (every generator says it alike; only a
    generator with a limit skips any)."""
    limit = "" if time_limit is None else f" of {time_limit:g} s"
    return (f"{n_skipped:,} of {plural(n_cases, 'case')} skipped: the time limit{limit} was reached (they "
            "get no ways out here and are not stored; another run may serve them).")


def _dropped(n: int, generator: str, broken: str) -> str:
    """"1 way out from dice-random was dropped: it broke ...", "3 ways out ... were dropped: they broke ..."."""
    one = n == 1
    return (f"{plural(n, 'way out', 'ways out')} from {generator} {'was' if one else 'were'} dropped: "
            f"{'it' if one else 'they'} broke {broken}.")
