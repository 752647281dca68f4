"""One range per number a user gives (flex_core.limits), checked by the API before any work, and the memory
estimate that refuses a run too large for the budget (issue 31, finding 2)."""

from __future__ import annotations

import os

import pytest

import flex_core as fc
from flex_core.limits import LIMITS, check, check_memory, memory_budget


@pytest.mark.parametrize("name, value, got", [
    ("n_cf", 100_000_000, "got 100,000,000"), ("n_cf", 0, "got 0"), ("seed", -1, "got -1"), ("seed", 2**32, "got 4,294,967,296"),
    ("time_limit", -1.0, "got -1"), ("samples", 20_000_000, "got 20,000,000"), ("n_jobs", 0, "not 0; got 0"),
    ("cv_folds", 1, "not 1; got 1"), ("n_cf", 2.5, "got '2.5'"), ("n_cf", float("nan"), "got 'nan'"), ("seed", True, "got 'True'"),
    ("n_factuals", "20", "got '20'"),
])
def test_a_value_out_of_its_range_names_the_setting_the_range_and_the_value(name, value, got):
    limit = LIMITS[name]
    with pytest.raises(fc.ConfigError, match=rf"^{name} \(.*\) must be .* from {limit.low:,} to {limit.high:,}.*{got}\.$"):
        check(name, value)


def test_both_ends_of_a_range_are_allowed_and_a_label_replaces_the_name():
    assert check("n_cf", 1) == 1 and check("n_cf", 50) == 50 and check("seed", 2**32 - 1) == 2**32 - 1
    assert check("time_limit", 0) == 0.0 and check("n_jobs", -1) == -1 and check("n_cf", 3.0) == 3
    with pytest.raises(fc.ConfigError, match="^--n-cf "):
        check("n_cf", 51, label="--n-cf")


# -- the API refuses before it trains or generates --------------------------------------------------------------
@pytest.mark.parametrize("options, message", [
    ({"seed": -1}, "seed .* got -1"),
    ({"n_cf": 100_000_000}, "n_cf .* got 100,000,000"),
    ({"generator_settings": {"samples": 20_000_000}}, "samples .* got 20,000,000"),
    ({"generator_settings": {"max_rounds": 0}}, "max_rounds .* got 0"),
    ({"generator_settings": {"n_jobs": 100_000}}, "n_jobs .* got 100,000"),
    ({"generator": "dice-random", "generator_settings": {"time_limit": -1}}, "time_limit .* got -1"),
])
def test_the_explainer_refuses_a_setting_out_of_range_before_training(toy_task, monkeypatch, options, message):
    from flex_core.models import _fit

    def trained(*args, **kwargs):
        raise AssertionError("a model was trained")

    monkeypatch.setattr(_fit, "build_pipeline", trained)
    with pytest.raises(fc.ConfigError, match=message):
        fc.FlexExplainer.from_task(toy_task, "lr", **options)


@pytest.fixture
def explainer(toy_task, toy_model):
    return fc.FlexExplainer.from_task(toy_task, toy_model, n_cf=2)


@pytest.mark.parametrize("call, message", [
    (lambda ex: ex.explain_global(n_factuals=100_000), "n_factuals .* from 1 to 5,000; got 100,000"),
    (lambda ex: ex.explain_global(n_factuals=10, repeats=1_000), "repeats .* from 1 to 20; got 1,000"),
    (lambda ex: ex.explain_region(k=5_000, n_factuals=10), "k .* from 0 to 1,000; got 5,000"),
    (lambda ex: ex.find_regions(n_factuals=10, n_permutations=10**7), "n_permutations .* got 10,000,000"),
    (lambda ex: ex.compare_groups("visibility", bins=1_000, n_factuals=10), "bins .* from 2 to 20; got 1,000"),
    (lambda ex: ex.lime([0], num_samples=10**8), "num_samples .* from 10 to 100,000; got 100,000,000"),
])
def test_each_run_refuses_its_numbers_before_generating(explainer, monkeypatch, call, message):
    monkeypatch.setattr(explainer.store.generator, "generate", lambda *a, **k: pytest.fail("generated"))
    with pytest.raises(fc.ConfigError, match=message):
        call(explainer)


# -- the memory estimate ---------------------------------------------------------------------------------------
def test_the_batch_estimate_by_hand(toy_task):
    """toy2d: 2 continuous features, so per candidate 2*2+1 draws + 2 encoded values + 24 words = 31 words of 8 bytes."""
    assert [f.kind for f in toy_task.features] == ["continuous", "continuous"]
    batch = fc.counterfactuals.BatchGenerator(samples=1_000)
    assert batch.peak_bytes(toy_task, n_queries=20, n_cf=10) == 20 * 1_000 * 8 * 31
    # samples unset: 2 * n_cf candidates per query and round
    assert fc.counterfactuals.BatchGenerator().peak_bytes(toy_task, n_queries=20, n_cf=10) == 20 * 20 * 8 * 31
    # batch-plausible: n_cf neighbours, a window doubling to 8 times that
    plausible = fc.counterfactuals.make_generator("batch-plausible")
    assert plausible.peak_bytes(toy_task, n_queries=3, n_cf=5) == 3 * 40 * 8 * 31


def test_a_run_over_the_budget_is_refused_before_generating_and_one_under_it_runs(explainer, monkeypatch, toy_task):
    store = fc.counterfactuals.CounterfactualStore(toy_task, explainer.model, fc.counterfactuals.BatchGenerator(samples=1_000), n_cf=10)
    need = 20 * 1_000 * 8 * 31  # 4,960,000 bytes: about 4.7 MB
    monkeypatch.setenv("FLEX_MEMORY_BUDGET_MB", "4")
    calls = []
    monkeypatch.setattr(store.generator, "generate", lambda *a, **k: calls.append(1))
    rows = store.factual_rows[:20]
    with pytest.raises(fc.ConfigError, match=r"Finding the ways out of 20 cases would need about 5 MB, more than the 4 MB "
                                             r"a run may use \(FLEX_MEMORY_BUDGET_MB\): reduce the cases to explain \(N_F\)"):
        store.ensure(rows)
    assert calls == []
    monkeypatch.setenv("FLEX_MEMORY_BUDGET_MB", str(need / 2**20 + 0.01))
    store.check_memory(20)  # fits: no error


def test_the_budget_defaults_to_a_quarter_of_the_machine_and_a_bad_setting_is_refused(monkeypatch):
    monkeypatch.delenv("FLEX_MEMORY_BUDGET_MB", raising=False)
    assert memory_budget() == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4
    monkeypatch.setenv("FLEX_MEMORY_BUDGET_MB", "512")
    assert memory_budget() == 512 * 2**20
    check_memory(512 * 2**20, what="x", reduce="y")  # at the budget: allowed
    for bad in ("-1", "lots", "nan", "0"):
        monkeypatch.setenv("FLEX_MEMORY_BUDGET_MB", bad)
        with pytest.raises(fc.ConfigError, match="FLEX_MEMORY_BUDGET_MB must be a positive number of MB"):
            memory_budget()


def test_the_docs_list_every_limit_as_defined():
    """docs/bad-input.md's table and docs/cli.md's options table are the limits themselves (kept true by this test)."""
    from pathlib import Path

    from flex_core.cli._main import BOUNDED_OPTIONS

    docs = Path(__file__).resolve().parents[1] / "docs"

    def number(x):
        return f"{x:,}" if isinstance(x, int) else f"{x:g}"

    text = (docs / "bad-input.md").read_text()
    for name, limit in LIMITS.items():
        assert f"| `{name}` | {number(limit.low)} | {number(limit.high)} | {limit.what} |" in text, name
    cli = (docs / "cli.md").read_text()
    for option, name in BOUNDED_OPTIONS.items():
        limit = LIMITS[name]
        assert f"| `--{option.replace('_', '-')}` | {number(limit.low)} to {number(limit.high)} |" in cli, option


def test_lime_and_kernel_shap_over_the_budget_are_refused_before_they_run(explainer, monkeypatch):
    """By hand on toy2d (2 continuous features, 2 encoded columns): LIME holds 8 x (8*2 + 2 + 16) = 272 bytes a
    sample, 100,000 samples about 26 MB; KernelSHAP "auto" makes 2*2 + 2048 = 2,052 evaluations of 20 background
    rows at 8 x (2*2 + 12) = 128 bytes each, about 5 MB."""
    import shap

    monkeypatch.setenv("FLEX_MEMORY_BUDGET_MB", "1")
    def ran(*args, **kwargs):
        raise RuntimeError("KernelSHAP ran")

    monkeypatch.setattr(shap, "KernelExplainer", ran)
    rows = list(explainer.store.factual_rows[:2])
    with pytest.raises(fc.ConfigError, match=r"^LIME with 100,000 samples per factual would need about 26 MB, more than "
                                             r"the 1 MB .*: reduce num_samples \(--lime-samples\)\.$"):
        explainer.lime(rows, num_samples=100_000)
    with pytest.raises(fc.ConfigError, match=r"^KernelSHAP with 2,052 evaluations of 20 background rows would need "
                                             r"about 5 MB, .*reduce nsamples or background_size\.$"):
        explainer.shap(rows, explainer="kernel")
    monkeypatch.setenv("FLEX_MEMORY_BUDGET_MB", "30")
    with pytest.raises(RuntimeError, match="KernelSHAP ran"):  # under the budget it goes on to run
        explainer.shap(rows, explainer="kernel")
