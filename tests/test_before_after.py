"""Issue 34's one door moved no number: what the pages compute (through ``ui.cache`` and the explainer's public
methods) and the CLI's JSON equal what commit 023d6a9 computed its own way, on a built-in dataset and on loan;
``flex reproduce --quick``'s numbers equal what commit cae8fe1 computed before the reproduction went through the
explainer only (``tests/data/reproduce_quick.json``).

The fixture ``tests/data/before_after.json`` was written on commit 023d6a9, before the refactor, by::

    FLEX_DATA_DIR=/work/shared/data python -m tests.before_after tests/data/before_after.json

(``tests/before_after.py`` says how that commit's pages computed each number.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import before_after as ba
from tests.conftest import paper_file
from ui import cache
from ui import state as S
from ui.shelf import Shelf

BEFORE = json.loads((Path(__file__).parent / "data" / "before_after.json").read_text())
REPRODUCTION = json.loads((Path(__file__).parent / "data" / "reproduce_quick.json").read_text())


@pytest.fixture
def shelf(monkeypatch, tmp_path):
    monkeypatch.setenv("FLEX_CACHE_DIR", str(tmp_path / "flex_cache"))
    monkeypatch.setattr(cache, "SHELF", Shelf(2**30, ttl=1800))


def page_numbers(name: str) -> dict:
    """The fixture's numbers as the pages compute them now: ``ui.cache``'s wrappers over the explainer's methods."""
    explainer = ba.explainer_for(name)
    where_text, rule_data, feature = ba._criteria(name, explainer.task)
    where, rule = S.criterion_of(where_text), S.rule_of(rule_data)  # as Session State keeps them
    identity, n = cache.store_id(explainer), ba.N_FACTUALS
    rows = explainer.sample_factuals(n)
    cache.ensure_rows(explainer, rows)
    result = cache.global_result(explainer, identity, n, 0.1)
    per_feature = cache.global_result(explainer, identity, n, {feature: 0.3, "*": 0.1})
    query = explainer.random_query(where=where)
    members = explainer.region_members(query, k=ba.K, where=where)
    regional = cache.regional_result(explainer, identity, n, 0.1, query, ba.K, where)
    plain_query = explainer.random_query()
    plain = cache.regional_result(explainer, identity, n, 0.1, plain_query, ba.K, None)
    ruled = cache.rule_region(explainer, identity, n, 0.1, rule)
    sweep = cache.tau_sweep(explainer, identity, n)
    proba = cache.factual_probabilities(explainer, "model").to_numpy()
    return {
        "features": list(result.feature_names),
        "global_rows": [int(r) for r in rows],
        "global_frequency": ba._numbers(result.frequency_mean),
        "per_feature_tau": {"feature": feature, "frequency": ba._numbers(per_feature.frequency_mean)},
        "where": S.criterion_text(where),
        "query": int(query),
        "candidates": [int(r) for r in explainer.factuals_meeting(where)],
        "members": [int(r) for r in members],
        "regional_members": [int(r) for r in regional.members],
        "regional_frequency": ba._numbers(regional.importance.frequency_mean),
        "regional_r": ba._numbers([regional.pearson_r]),
        "plain_query": int(plain.query),
        "plain_frequency": ba._numbers(plain.importance.frequency_mean),
        "rule": [c.as_dict() for c in rule],
        "rule_members": [int(r) for r in ruled.members],
        "rule_frequency": ba._numbers(ruled.importance.frequency_mean),
        "tau_sweep": {str(c): ba._numbers(sweep[c]) for c in sweep.columns if sweep[c].dtype.kind in "fi"},
        "pool_probability_head": ba._numbers(proba[:50]),
        "pool_probability_sum": round(float(proba.sum()), 8),
    }


#: What the data dictionary (issue 35) changed on purpose and no number depends on: labels, sentences, and the
#: data's fingerprint (a cache key that now covers the words, so results cached with other labels are not reused).
WORD_KEYS = {"label", "notes", "rule_text", "data_fingerprint"}


def _numbers_only(out):
    """The CLI's JSON less :data:`WORD_KEYS`, at every depth."""
    if isinstance(out, dict):
        return {k: _numbers_only(v) for k, v in out.items() if k not in WORD_KEYS}
    if isinstance(out, list):
        return [_numbers_only(v) for v in out]
    return out


def _same_json(name: str, level: str, *extra: str) -> None:
    assert _numbers_only(ba.cli_json(name, level, *extra)) == _numbers_only(BEFORE[name][f"cli_{level}"])


def _same(name: str, now: dict) -> None:
    before = {k: v for k, v in BEFORE[name].items() if not k.startswith("cli_")}
    assert set(now) == set(before)
    for key in before:
        assert now[key] == before[key], key


def test_the_pages_numbers_on_builtin_data_are_unchanged(shelf):
    _same("builtin", page_numbers("builtin"))


@pytest.mark.slow
def test_the_clis_json_on_builtin_data_is_unchanged():
    _same_json("builtin", "global")
    _same_json("builtin", "regional", "--neighbours", str(ba.K))


@pytest.mark.slow
def test_the_pages_numbers_and_the_clis_json_on_loan_are_unchanged(shelf):
    paper_file("loan_approval_dataset.csv")  # skips without the paper's data
    _same("loan", page_numbers("loan"))
    _same_json("loan", "global")
    _same_json("loan", "regional", "--neighbours", str(ba.K))


@pytest.mark.slow  # both paper datasets, two generators, SHAP and LIME: about 20 s
def test_the_quick_reproductions_numbers_are_unchanged(quick_reproduction):
    """``flex reproduce --quick`` through the explainer's public methods gives cae8fe1's results.json, times aside."""
    out, _ = quick_reproduction
    now = ba.reproduction_numbers(json.loads((out / "results.json").read_text()))
    for key in REPRODUCTION["results"]:  # the first part that moved, named
        assert now["results"][key] == REPRODUCTION["results"][key], key
    assert now == REPRODUCTION
