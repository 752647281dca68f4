"""What a generator counts adds up when its sets are cut and stacked (``_tally``): a run in chunks, a streamed run
and a region's set say what they would say of one call, never one chunk's tallies or a note per chunk.

Found 2026-11-29: loan, 200 factuals in chunks of 25 reported the first chunk's ``pairs_read`` (458 against 3,396)
and said "1 of 25 cases has more ...", "5 of 25 ..." instead of "16 of 200 cases ...".
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flex_core as fc
from flex_core.counterfactuals import CounterfactualSet
from flex_core.counterfactuals._tally import case_notes, cut, opened, stacked
from flex_core.counterfactuals._tally import spent as spent_by
from tests.factories import planted
from tests.planted_learned import planted_forest, planted_frame, planted_task

TREE = {"tree": {"ran": "tree", "why": "read", "order": "fewest"}, "time_limit": 5.0}


def _two_calls():
    """Call A made rows 1-3 (row 2 has more ways out, row 3 was skipped), call B rows 4-5 (row 5 has more)."""
    a = opened(TREE, [1, 2, 3], cases={"more_than_n_cf": [2], "skipped": [3]},
               tallies={"tree.pairs_read": 10, "model_calls": 2})
    b = opened(TREE, [4, 5], cases={"more_than_n_cf": [5], "skipped": []}, tallies={"tree.pairs_read": 7, "model_calls": 1})
    return stacked([(a, np.array([1, 2, 3])), (b, np.array([4, 5]))])


def test_numpy_tallies_are_kept_as_plain_numbers_that_survive_json():
    import json

    config = opened(TREE, np.array([7, 8]), cases={}, tallies={"tree.pairs_read": np.int64(3), "refine_seconds": np.float32(0.5),
                                                               "constraints_rejected": np.array([1, 2])})
    again = json.loads(json.dumps(config))
    assert again == config and again["tree"]["pairs_read"] == 3 and again["refine_seconds"] == 0.5


def test_stacked_calls_add_up_and_each_case_is_kept_once():
    both = _two_calls()
    assert both["tree"]["pairs_read"] == 10 + 7 and both["model_calls"] == 2 + 1
    assert both["tree"]["more_than_n_cf"] == [2, 5]
    assert both["skipped_rows"] == [3] and both["queries_skipped"] == 1


def test_a_cut_keeps_its_rows_cases_and_whole_the_calls_that_made_them():
    both = _two_calls()
    first = cut(both, [2, 1])  # call A only: its tallies whole, its one case with more
    assert first["tree"]["pairs_read"] == 10 and first["model_calls"] == 2
    assert first["tree"]["more_than_n_cf"] == [2] and first["skipped_rows"] == [] and first["queries_skipped"] == 0
    mixed = cut(both, [3, 4])  # a row of each call: both calls, no case with more, row 3 skipped
    assert mixed["tree"]["pairs_read"] == 17 and mixed["tree"]["more_than_n_cf"] == [] and mixed["skipped_rows"] == [3]


def test_pieces_of_one_call_stacked_count_it_once():
    """The streamed path stacks cuts of one stored set: each call is counted once, not once per piece."""
    both = _two_calls()
    pieces = [[1], [2, 3], [4, 5]]
    again = stacked([(cut(both, rows), np.array(rows)) for rows in pieces])
    assert again["tree"]["pairs_read"] == 17 and again["model_calls"] == 3
    assert again["tree"]["more_than_n_cf"] == [2, 5] and again["skipped_rows"] == [3]


def test_a_row_made_again_keeps_the_cases_of_the_part_it_is_taken_from():
    both = _two_calls()
    redo = opened(TREE, [2], cases={"more_than_n_cf": []}, tallies={"tree.pairs_read": 4})
    stack = stacked([(both, np.array([1, 3, 4, 5])), (redo, np.array([2]))])
    assert stack["tree"]["more_than_n_cf"] == [5]  # row 2's case came from call A, which no longer gives its row
    assert stack["tree"]["pairs_read"] == 10 + 7 + 4  # call A still made rows 1 and 3


@st.composite
def _calls_and_cuts(draw):
    """Rows 0..n-1 made by calls in consecutive runs, some flagged as having more ways out; then the rows in some
    order cut into pieces, and a subset."""
    n = draw(st.integers(1, 30))
    bounds = sorted(set(draw(st.lists(st.integers(1, n - 1), max_size=5)) if n > 1 else []))
    calls = [list(range(a, b)) for a, b in zip([0, *bounds], [*bounds, n])]
    spent = draw(st.lists(st.integers(0, 1000), min_size=len(calls), max_size=len(calls)))
    flagged = draw(st.sets(st.integers(0, n - 1)))
    order = draw(st.permutations(range(n)))
    cuts = sorted(set(draw(st.lists(st.integers(1, n - 1), max_size=6)) if n > 1 else []))
    pieces = [list(order[a:b]) for a, b in zip([0, *cuts], [*cuts, n])]
    subset = draw(st.sets(st.integers(0, n - 1), min_size=1))
    return calls, spent, flagged, pieces, subset


@settings(max_examples=200, deadline=None)
@given(_calls_and_cuts())
def test_cutting_and_stacking_never_changes_what_was_counted(case):
    calls, spent, flagged, pieces, subset = case
    parts = [opened(TREE, rows, cases={"more_than_n_cf": [r for r in rows if r in flagged]},
                    tallies={"tree.pairs_read": t, "model_rows": 2 * t, "seconds": t / 8}) for rows, t in zip(calls, spent)]
    whole = stacked([(config, np.array(rows)) for config, rows in zip(parts, calls)])
    assert whole["tree"]["pairs_read"] == sum(spent)
    assert whole["tree"]["more_than_n_cf"] == sorted(flagged)
    streamed = stacked([(cut(whole, piece), np.array(piece)) for piece in pieces])
    assert streamed["tree"]["pairs_read"] == sum(spent)
    assert sorted(streamed["tree"]["more_than_n_cf"]) == sorted(flagged)
    assert spent_by(streamed) == spent_by(whole) == (sum(spent) / 8, 2 * sum(spent))
    region = cut(whole, sorted(subset))
    assert region["tree"]["pairs_read"] == sum(t for rows, t in zip(calls, spent) if subset & set(rows))
    assert spent_by(region)[1] == 2 * sum(t for rows, t in zip(calls, spent) if subset & set(rows))
    assert sorted(region["tree"]["more_than_n_cf"]) == sorted(flagged & subset)


def test_the_constraints_block_is_written_from_the_cases_and_calls():
    """By hand: rejected while searching 3+2 and 1+0; dropped: row 1 broke a, row 4 broke a and b; row 5 breaks b as
    it is. Shares: a (5 + 2) / 9, b (1 + 1) / 9."""
    texts = ["a", "b"]
    block = {"constraints_between": fc.counterfactuals._rulecheck.rules_report(texts, None, [0, 0], [0, 0])}
    one = opened(block, [1, 2], cases={"dropped_by_rule": [{"row": 1, "slot": 0, "broken": ["a"]}]},
                 tallies={"constraints_rejected": [3, 1]})
    two = opened(block, [4, 5], cases={"dropped_by_rule": [{"row": 4, "slot": 2, "broken": ["a", "b"]}],
                                       "breaks_at_factual": [{"row": 5, "broken": ["b"]}]},
                 tallies={"constraints_rejected": [2, 0]})
    stack = stacked([(one, np.array([1, 2])), (two, np.array([4, 5]))])
    rules = stack["constraints_between"]
    a, b = rules["constraints"]
    assert (a["rejected_while_searching"], a["dropped_from_output"], a["queries_breaking_it_as_they_are"]) == (5, 2, 0)
    assert (b["rejected_while_searching"], b["dropped_from_output"], b["queries_breaking_it_as_they_are"]) == (1, 1, 1)
    assert a["share_of_rejections"] == pytest.approx(7 / 9) and b["share_of_rejections"] == pytest.approx(2 / 9)
    assert [d["row"] for d in rules["dropped"]] == [1, 4]
    a, b = cut(stack, [2, 5])["constraints_between"]["constraints"]  # row 5 breaks b as it is; both calls' rejections
    assert (a["dropped_from_output"], b["dropped_from_output"], b["queries_breaking_it_as_they_are"]) == (0, 0, 1)
    assert (a["rejected_while_searching"], b["rejected_while_searching"]) == (5, 1)


def test_the_notes_count_the_sets_own_cases_once():
    both = _two_calls()
    notes = case_notes(both, n_cases=5, n_cf=3, copies=np.array([0, 2, 0, 1, 0]), generator="tree")
    assert notes[0].startswith("1 of 5 cases skipped: the time limit of 5 s was reached")
    assert notes[1].startswith("2 of 5 cases have more different smallest ways out than the 3 returned")
    assert notes[2] == "3 copies among the ways out of 2 cases were merged: FLEX counts each different way out once."
    region = case_notes(cut(both, [2, 4]), n_cases=2, n_cf=3, copies=np.zeros(2, int), generator="tree")
    assert region == ("1 of 2 cases has more different smallest ways out than the 3 returned (those with the fewest "
                      "changed features and the smallest changes are kept; equal ones are taken in turn across features, "
                      "never in the file's order).",)


def _in_chunks(generator, model, task, queries, size, **kw) -> tuple[CounterfactualSet, CounterfactualSet]:
    """One call on every query, and the same queries in calls of ``size`` stacked."""
    whole = generator.generate(model, task, queries, **kw)
    parts = [generator.generate(model, task, queries.iloc[i:i + size], **kw) for i in range(0, len(queries), size)]
    return whole, CounterfactualSet.concat(parts)


def _tallies(cfset: CounterfactualSet) -> dict:
    """What the set says it counted, its seconds aside (two calls take their own time)."""
    coverage = {k: v for k, v in cfset.coverage().items() if k != "seconds"}
    return {"config": {k: v for k, v in cfset.config.items() if k not in ("calls", "cases")}, "coverage": coverage,
            "notes": cfset.coverage_notes}


@pytest.mark.parametrize("n_cf", [1, 3])
def test_a_learned_forest_in_chunks_says_what_one_call_says(n_cf):
    """The planted rule learned by a forest with label noise and noise features. With n_cf = 1, 39 of 40 cases have
    more ways out than one (speed down to 60, or the road to urban); with n_cf = 3 the cases short of singles have
    their pairs read (496 here), so the tallies and notes have something to count."""
    task = planted_task(800)
    model = planted_forest(task)
    rows = fc.counterfactuals.factual_rows(task, model)[:40]
    queries = task.frame.loc[rows, task.feature_names]
    whole, chunked = _in_chunks(fc.counterfactuals.make_generator("tree"), model, task, queries, 10, n_cf=n_cf)
    np.testing.assert_array_equal(chunked.counterfactuals, whole.counterfactuals)
    tree, more = whole.config["tree"], whole.config["tree"]["more_than_n_cf"]
    assert tree["ran"] == "tree" and set(more) <= set(rows)
    assert len(more) > 10 if n_cf == 1 else tree["pairs_read"] > 100
    assert any(n.startswith(f"{len(more)} of 40 cases ha") for n in whole.coverage_notes)
    assert _tallies(chunked) == _tallies(whole)
    # The streamed path: pieces of the one call stacked count it once.
    streamed = CounterfactualSet.concat([whole.subset(rows[i:i + 7]) for i in range(0, 40, 7)])
    assert _tallies(streamed) == _tallies(whole) and streamed.seconds == whole.seconds
    region = whole.subset(rows[:5])
    assert region.config["tree"]["more_than_n_cf"] == [r for r in more if r in set(rows[:5])]
    assert region.config["tree"]["pairs_read"] == tree["pairs_read"]
    # What the call spent is the call's, whole: a region made by it says what making it cost.
    assert (region.seconds, region.model_rows) == (whole.seconds, whole.model_rows)
    assert chunked.model_rows == whole.model_rows == int(whole.found.sum())


def test_the_rule_coded_as_a_model_in_chunks_adds_its_calls():
    """A rule coded as a model is not a tree ensemble: ``tree`` hands it to the batch search, whose model calls are per
    call. Stacked, they are the chunks' calls added up; the cases and notes are those of one call."""
    frame = planted_frame(400).drop(columns="outcome")
    task, model = planted(frame, lambda X: (X["speed"] > 60) & (X["road"] == "rural"))
    rows = fc.counterfactuals.factual_rows(task, model)[:12]
    queries = task.frame.loc[rows, task.feature_names]
    generator = fc.counterfactuals.make_generator("tree")
    parts = [generator.generate(model, task, queries.iloc[i:i + 4], n_cf=2) for i in range(0, 12, 4)]
    chunked = CounterfactualSet.concat(parts)
    assert chunked.config["tree"]["ran"] == "batch"
    assert chunked.config["model_calls"] == sum(p.config["model_calls"] for p in parts) > len(parts)
    assert chunked.coverage_notes == CounterfactualSet.concat([chunked.subset(rows[:6]), chunked.subset(rows[6:])]).coverage_notes
    assert CounterfactualSet.concat([chunked.subset(rows[:6]), chunked.subset(rows[6:])]).config["model_calls"] == \
        chunked.config["model_calls"]


def test_a_set_saved_and_loaded_keeps_its_tallies(tmp_path):
    task = planted_task(400)
    model = planted_forest(task)
    rows = fc.counterfactuals.factual_rows(task, model)[:8]
    cfset = fc.counterfactuals.make_generator("tree").generate(model, task, task.frame.loc[rows, task.feature_names], n_cf=1)
    cfset.save(tmp_path / "set.npz")
    loaded = CounterfactualSet.load(tmp_path / "set.npz")
    assert _tallies(loaded) == _tallies(cfset)
    assert _tallies(CounterfactualSet.concat([loaded.subset(rows[:3]), loaded.subset(rows[3:])])) == _tallies(cfset)


def test_a_set_stored_before_tallies_were_kept_is_not_read(toy_task, toy_model):
    """The store's key names the tallies' form, so a stored set without them is made again, not stacked with new ones
    (whose counts it would drop: a stack with an old part keeps the old way, the first part's config)."""
    from flex_core.counterfactuals._tally import TALLIES_FORMAT

    store = fc.counterfactuals.CounterfactualStore(toy_task, toy_model, fc.counterfactuals.make_generator("tree"), n_cf=2)
    assert store.key["tallies"] == TALLIES_FORMAT == 1


def test_a_region_whose_rows_came_from_two_generations_counts_its_own_cases(tmp_path):
    """The app's path: the store generates the global sample, then the rows a region adds (a second call); the
    region's notes count its members, whichever call made them, and a restart that reads the chunk files agrees."""
    task = planted_task(800)
    model = planted_forest(task)
    rows = [int(r) for r in fc.counterfactuals.factual_rows(task, model)[:30]]
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("tree"), n_cf=1,
                                                   directory=tmp_path)
    store.ensure(rows[:20])
    region = rows[15:30]  # five rows of the first call, ten made now
    cfset = store.ensure(region)
    more = cfset.config["tree"]["more_than_n_cf"]
    assert len(more) > 5 and set(more) <= set(region)
    assert sum(n.endswith(f"of {len(region)} cases have more different smallest ways out than the 1 returned (those "
                          "with the fewest changed features and the smallest changes are kept; equal ones are taken in "
                          "turn across features, never in the file's order).") for n in cfset.coverage_notes) == 1
    one_call = fc.counterfactuals.make_generator("tree").generate(model, task, task.frame.loc[region, task.feature_names],
                                                                  n_cf=1)
    assert _tallies(cfset)["notes"] == _tallies(one_call)["notes"]
    assert sorted(more) == sorted(one_call.config["tree"]["more_than_n_cf"])
    reopened = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("tree"), n_cf=1,
                                                      directory=tmp_path)
    assert _tallies(reopened.ensure(region))["notes"] == _tallies(one_call)["notes"]


def test_the_cases_left_to_the_batch_search_are_named_and_survive_a_cut():
    """Planted: bad when any of x1, x2, x3 is positive, learned by a forest with 3% label noise and a noise feature.
    A case with all three well above 0 has no one- or two-feature way out, so ``tree`` leaves it to the batch search;
    a case with one of them positive has a one-feature way out and is not left."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({f"x{i}": rng.uniform(-1, 1, 1500).round(3) for i in (1, 2, 3, 4)})
    bad = (frame[["x1", "x2", "x3"]] > 0).any(axis=1) ^ (rng.random(1500) < 0.03)
    frame["outcome"] = np.where(bad, "bad", "good")
    task = fc.make_task(frame, target="outcome", undesirable="bad")
    model = fc.models.fit_model(task, model="rf", seed=0, cv_folds=0)
    rows = set(int(r) for r in fc.counterfactuals.factual_rows(task, model))
    all_three = [r for r in rows if (frame.loc[r, ["x1", "x2", "x3"]] > 0.5).all()][:4]
    one = [r for r in rows if frame.loc[r, "x1"] > 0.5 and (frame.loc[r, ["x2", "x3"]] < -0.5).all()][:4]
    assert len(all_three) == len(one) == 4
    cfset = fc.counterfactuals.make_generator("tree").generate(model, task, task.frame.loc[all_three + one, task.feature_names],
                                                             n_cf=2)
    assert cfset.cases_counted("batch_fallback") == frozenset(all_three)
    assert cfset.config["tree"]["batch_fallback_queries"] == 4
    assert cfset.subset(all_three[:1] + one).cases_counted("batch_fallback") == frozenset(all_three[:1])
    assert cfset.cases_counted("no such tally") is None
    batch = fc.counterfactuals.make_generator("batch").generate(model, task, task.frame.loc[one, task.feature_names], n_cf=2)
    assert batch.cases_counted("more_than_n_cf") is None  # the batch search does not say
    # What the pages say of such a case, and of one without two-feature reading (pairs=False: one feature only).
    from ui.case import generator_says

    assert generator_says(cfset, all_three[0], 2) == (
        "No change to only one or two features flips this case, so these ways out come from a random search that "
        "changes more features, each made as small as the search could (not read exactly from the trees).",)
    assert generator_says(cfset, one[0], 2) == ()
    singles = fc.counterfactuals.make_generator("tree", pairs=False).generate(
        model, task, task.frame.loc[all_three[:1], task.feature_names], n_cf=2)
    assert generator_says(singles, all_three[0], 2)[0].startswith("No change to only one feature flips this case")
