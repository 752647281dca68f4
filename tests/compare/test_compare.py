"""SHAP/LIME importances per original feature, rank agreement, the paper's ranking table,
the CLI's --shap/--lime, and a quick version of the paper reproduction."""

from __future__ import annotations

import json

import numpy as np
import pytest

import flex_core as fc
from flex_core._format import plural
from flex_core._results import importance_rank
from flex_core.compare._agreement import rank_correlations
from flex_core.compare._columns import encoded_column_owners, sum_columns_to_features
from flex_core.compare._lime import normalise_to_max
from flex_core.compare._tables import format_rank_cell
from tests.contract import assert_valid, strict_json
from ui import reporting
from ui.estimates import estimate_lime, estimate_shap


# -- one-hot columns back to features --------------------------------------------------
def test_sum_columns_to_features_by_hand():
    # Columns: colour=red, colour=blue, speed, size=S, size=M, size=L  -> features colour, speed, size
    owners = np.array([0, 0, 1, 2, 2, 2])
    values = np.array(
        [
            [0.10, -0.30, 0.50, 0.00, 0.20, -0.05],
            [-0.20, 0.05, -0.10, 0.30, 0.00, 0.10],
        ]
    )
    per_feature = sum_columns_to_features(values, owners, 3)
    expected = np.array([[-0.20, 0.50, 0.15], [-0.15, -0.10, 0.40]])
    np.testing.assert_allclose(per_feature, expected)
    np.testing.assert_allclose(per_feature.sum(axis=1), values.sum(axis=1))


def test_sum_columns_rejects_a_wrong_owner_count():
    with pytest.raises(fc.ConfigError, match="columns"):
        sum_columns_to_features(np.zeros((2, 3)), np.array([0, 1]), 2)


@pytest.mark.parametrize("encoding", ["onehot", "label"])
def test_encoded_column_owners_follow_the_encoder(synthetic_task, encoding):
    model = fc.fit_model(synthetic_task, model="rf", encoding=encoding, cv_folds=2)
    names, owners = encoded_column_owners(synthetic_task, model)
    width = model.pipeline.named_steps["encode"].transform(synthetic_task.X.iloc[:2]).shape[1]
    assert len(names) == len(owners) == width
    for j, feature in enumerate(synthetic_task.features):
        expected = 1 if feature.is_continuous or encoding == "label" else len(feature.categories)
        assert (owners == j).sum() == expected
    if encoding == "onehot":
        # get_feature_names_out names one-hot columns "<feature>_<level>".
        for name, owner in zip(names, owners):
            assert name.startswith(synthetic_task.feature_names[owner])


# -- SHAP ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def factuals(synthetic_task, synthetic_model):
    return fc.importance.sample_factuals(fc.counterfactuals.factual_rows(synthetic_task, synthetic_model), 25, seed=0)


@pytest.mark.slow  # runs SHAP or LIME
def test_tree_shap_is_additive_and_per_feature_sums_match_columns(synthetic_task, synthetic_model, factuals):
    result = fc.compare.shap_importance(synthetic_model, synthetic_task, factuals)
    assert result.explainer.startswith("tree")
    frame = synthetic_task.frame.loc[factuals, synthetic_task.feature_names]
    predicted = synthetic_model.predict_proba(frame)[:, 1]
    # Local accuracy: base value plus the attributions is the forest's probability.
    np.testing.assert_allclose(result.base_value + result.values.sum(axis=1), predicted, atol=1e-6)
    assert result.values.shape == (len(factuals), len(synthetic_task.features))
    np.testing.assert_allclose(result.mean_abs, np.abs(result.values).mean(axis=0))
    # Summing |column| over a feature's columns bounds |feature| from above (triangle inequality).
    _, owners = encoded_column_owners(synthetic_task, synthetic_model)
    column_bound = np.bincount(owners, weights=result.column_mean_abs, minlength=len(synthetic_task.features))
    assert np.all(result.mean_abs <= column_bound + 1e-12)
    # The planted global driver (speed) leads.
    assert synthetic_task.feature_names[int(np.argmax(result.mean_abs))] == "speed"
    records = result.to_dict()["features"]
    assert [r["shap_rank"] for r in records] == result.rank.tolist() and min(result.rank) == 1
    assert json.loads(json.dumps(result.to_dict()))["config"]["path"] == "encoded"  # plain JSON, path recorded
    assert list(result.to_frame()["shap_rank"]) == sorted(result.to_frame()["shap_rank"])


@pytest.mark.slow  # runs SHAP or LIME
def test_kernel_shap_for_a_linear_model(synthetic_task, factuals):
    model = fc.fit_model(synthetic_task, model="lr", cv_folds=2)
    rows = factuals[:6]
    first = fc.compare.shap_importance(model, synthetic_task, rows, nsamples=300, background_size=10, seed=3)
    again = fc.compare.shap_importance(model, synthetic_task, rows, nsamples=300, background_size=10, seed=3)
    assert first.explainer.startswith("kernel")
    np.testing.assert_allclose(first.values, again.values)
    alone = fc.compare.shap_importance(model, synthetic_task, rows[2:3], nsamples=300, background_size=10, seed=3)
    np.testing.assert_allclose(alone.values[0], first.values[2])
    predicted = model.predict_proba(synthetic_task.frame.loc[rows, synthetic_task.feature_names])[:, 1]
    np.testing.assert_allclose(first.base_value + first.values.sum(axis=1), predicted, atol=1e-6)


def test_shap_errors_say_what_to_fix(synthetic_task, synthetic_model):
    with pytest.raises(fc.ConfigError, match="not in the data"):
        fc.compare.shap_importance(synthetic_model, synthetic_task, [10**9])
    lr = fc.fit_model(synthetic_task, model="lr", cv_folds=2)
    with pytest.raises(fc.ConfigError, match="kernel"):
        fc.compare.shap_importance(lr, synthetic_task, [0], explainer="tree")


# -- LIME ------------------------------------------------------------------------------
def test_normalise_to_max_by_hand():
    np.testing.assert_allclose(normalise_to_max(np.array([0.2, 0.5, 0.0, 0.1])), [0.4, 1.0, 0.0, 0.2])
    np.testing.assert_allclose(normalise_to_max(np.zeros(3)), np.zeros(3))


@pytest.mark.slow  # runs SHAP or LIME
def test_lime_region_importance_is_normalised_and_seeded(synthetic_task, synthetic_model, factuals):
    rows = factuals[:3]
    result = fc.compare.lime_importance(synthetic_model, synthetic_task, rows, num_samples=400, seed=1)
    assert result.local_weights.shape == (3, len(synthetic_task.features))
    assert np.nanmax(result.normalised) == pytest.approx(1.0)
    assert np.all((result.normalised >= 0) & (result.normalised <= 1))
    np.testing.assert_allclose(result.mean_abs, result.local_weights.mean(axis=0))
    # A factual's weights do not depend on which other factuals are explained with it.
    alone = fc.compare.lime_importance(synthetic_model, synthetic_task, rows[1:2], num_samples=400, seed=1)
    np.testing.assert_allclose(alone.local_weights[0], result.local_weights[1])
    assert result.to_frame()["lime_importance"].iloc[0] == pytest.approx(1.0)


# -- rank metrics ----------------------------------------------------------------------
def test_importance_rank_ties_share_the_best_rank():
    np.testing.assert_array_equal(importance_rank(np.array([0.2, 0.5, 0.2, np.nan, 0.1])), [2, 1, 2, 5, 4])


def test_rank_agreement_by_hand():
    a = np.array([4.0, 3.0, 2.0, 1.0])
    b = np.array([3.0, 4.0, 2.0, 1.0])  # the top two swapped
    agreement = fc.compare.rank_agreement(a, b, k=2)
    # Spearman: d = (1, 1, 0, 0) -> 1 - 6*2 / (4*15) = 0.8. Kendall: 5 concordant, 1 discordant -> 4/6.
    assert agreement.spearman == pytest.approx(0.8)
    assert agreement.kendall == pytest.approx(4 / 6)
    assert agreement.top_k_overlap == pytest.approx(1.0)
    assert fc.compare.rank_agreement(a, -a, k=1).spearman == pytest.approx(-1.0)
    assert fc.compare.rank_agreement(a, -a, k=1).top_k_overlap == 0.0


def test_rank_agreement_with_ties_and_a_mask():
    a = np.array([0.5, 0.5, 0.2, 0.0])
    b = np.array([0.9, 0.1, 0.5, 0.3])
    agreement = fc.compare.rank_agreement(a, b, k=1, names=["p", "q", "r", "s"])
    # Top-1 of a holds both tied features {p, q}; of b only {p}: overlap 1 / max(2, 1).
    assert agreement.top_k_overlap == pytest.approx(0.5)
    # Spearman on average ranks: a -> (1.5, 1.5, 3, 4), b -> (1, 4, 2, 3).
    ra, rb = np.array([1.5, 1.5, 3, 4]), np.array([1, 4, 2, 3])
    assert agreement.spearman == pytest.approx(np.corrcoef(ra, rb)[0, 1])
    # Kendall tau-b by hand: pq tied in a; pr, ps, rs concordant; qr, qs discordant
    # -> (C - D) / sqrt((n0 - ties_a) * (n0 - ties_b)) = (3 - 2) / sqrt(5 * 6).
    assert agreement.kendall == pytest.approx(1 / np.sqrt(30))
    masked = fc.compare.rank_agreement(a, b, include=np.array([True, False, True, True]), names=["p", "q", "r", "s"])
    assert masked.features == ("p", "r", "s")
    # Without q both orders are p > r > s.
    assert masked.spearman == pytest.approx(1.0) and masked.kendall == pytest.approx(1.0)


# -- the paper's table format ----------------------------------------------------------
def test_rowwise_rank_correlations_match_scipy_with_ties():
    from scipy.stats import kendalltau, spearmanr

    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, size=(20, 7)).astype(float)  # many ties
    b = rng.integers(0, 5, size=(20, 7)).astype(float)
    spearman, kendall = rank_correlations(a, b)
    np.testing.assert_allclose(spearman, [spearmanr(x, y).statistic for x, y in zip(a, b)])
    np.testing.assert_allclose(kendall, [kendalltau(x, y).statistic for x, y in zip(a, b)])


@pytest.mark.slow  # runs SHAP or LIME
def test_flex_shap_agreement_interval_is_seeded_and_holds_the_estimate(synthetic_task, synthetic_model):
    store = fc.counterfactuals.CounterfactualStore(synthetic_task, synthetic_model, fc.counterfactuals.make_generator("batch"), n_cf=3, seed=0)
    flex = fc.importance.run_global(store, n_factuals=30)
    shap = fc.compare.shap_importance(synthetic_model, synthetic_task, flex.query_index, seed=0)
    first = fc.compare.flex_shap_agreement(flex, shap, seed=4)
    assert first == fc.compare.flex_shap_agreement(flex, shap, seed=4)
    point = fc.compare.rank_agreement(
        flex.frequency_mean, shap.mean_abs, names=flex.feature_names, include=~np.array(flex.immutable)
    )
    assert (first.spearman, first.kendall) == (point.spearman, point.kendall)
    assert first.spearman_interval[0] <= first.spearman <= first.spearman_interval[1]
    assert first.kendall_interval[0] <= first.kendall <= first.kendall_interval[1]


def test_format_rank_cell_matches_the_paper():
    assert format_rank_cell(1, 0.3412, 0.2361) == "1 (0.34 ± 0.24)"
    assert format_rank_cell(3, 0.02241, decimals=4) == "3 (0.0224)"
    assert format_rank_cell(2, float("nan")) == "–"
    # A shuffle that helped by chance leaves a tiny negative mean: it reads 0, not -0; a real negative keeps its sign.
    assert format_rank_cell(9, -0.0002, 0.0004, decimals=3) == "9 (0.000 ± 0.000)"
    assert format_rank_cell(9, -0.002, decimals=3) == "9 (-0.002)"


def test_ranking_table_ranks_each_method_and_shares_ties():
    labels = ["a", "b", "c", "fixed"]
    flex = np.array([0.08, 0.30, 0.08, 0.0])
    shap = np.array([0.010, 0.002, 0.030, 0.5])
    table = fc.compare.ranking_table(
        labels,
        {"FLEX": flex, "SHAP": shap},
        stds={"FLEX": np.array([0.1, 0.2, 0.12, 0.0])},
        decimals={"SHAP": 4},
        include=np.array([True, True, True, False]),
    )
    assert list(table.index) == ["b", "a", "c"]  # by FLEX rank; the tie a/c keeps the input order
    assert list(table["FLEX"]) == ["1 (0.30 ± 0.20)", "2 (0.08 ± 0.10)", "2 (0.08 ± 0.12)"]
    # SHAP is ranked over the included features only: the excluded 0.5 does not take rank 1.
    assert list(table["SHAP"]) == ["3 (0.0020)", "2 (0.0100)", "1 (0.0300)"]
    with_ranges = fc.compare.ranking_table(
        labels, {"FLEX": flex}, include=np.array([True, True, True, False]),
        rank_intervals={"FLEX": np.array([[2, 3], [1, 1], [2, 3], [4, 4]])},
    )
    assert list(with_ranges["FLEX"]) == ["1 (0.30)", "2–3 (0.08)", "2–3 (0.08)"]


# -- figures ---------------------------------------------------------------------------
def test_comparison_figures_carry_the_numbers(synthetic_task, synthetic_model, factuals):
    from flex_core.plotting import rank_scatter_figure, ranking_bars_figure

    names, labels = synthetic_task.feature_names, [f.label for f in synthetic_task.features]
    flex = np.array([0.6, 0.0, 0.3, 0.1, 0.2, 0.0])
    shap = np.array([0.4, 0.1, 0.2, 0.05, 0.01, 0.02])
    mutable = np.array([not f.immutable for f in synthetic_task.features])
    bars = ranking_bars_figure(names, labels, {"FLEX": flex, "SHAP": shap}, include=mutable)
    assert [t.name for t in bars.data] == ["FLEX", "SHAP"]
    assert max(bars.data[0].x) == 1.0 and list(bars.data[0].customdata)[0] == "speed"
    agreement = fc.compare.rank_agreement(flex, shap, names=names, include=mutable)
    scatter = rank_scatter_figure(names, labels, flex, shap, agreement=agreement, include=mutable)
    assert list(scatter.data[0].customdata) == [n for n, m in zip(names, mutable) if m]
    assert "Spearman" in scatter.layout.title.text


# -- command line ----------------------------------------------------------------------
FAST = ["--n-factuals", "10", "--n-cf", "3", "--cv-folds", "2", "--quiet"]


def _cli_json(tmp_path, *args):
    """The JSON the CLI wrote, checked against the result schema."""
    from flex_core.cli import main

    out = tmp_path / "out.json"
    assert main([*args, "--out", str(out)]) == 0
    return assert_valid(strict_json(out.read_text()))


@pytest.mark.slow  # runs SHAP or LIME
def test_cli_global_shap(tmp_path):
    result = _cli_json(tmp_path, "global", "--data", "builtin:synthetic-regional", "--shap", *FAST)
    for feature in result["features"]:
        assert feature["shap_mean_abs"] >= 0 and feature["shap_rank"] >= 1
    assert min(f["shap_rank"] for f in result["features"]) == 1
    agreement = result["agreement"]
    assert -1 <= agreement["spearman"] <= 1 and -1 <= agreement["kendall"] <= 1
    for key in ("spearman", "kendall"):
        low, high = agreement[f"{key}_interval"]
        assert -1 <= low <= agreement[key] + 1e-12 and agreement[key] - 1e-12 <= high <= 1  # bootstrap ends: float noise
    # Agreement is over the mutable features only.
    assert set(agreement["features"]) == {"speed", "lighting", "noise_continuous", "noise_categorical"}
    assert "mutable" in agreement["over"]
    assert agreement["config"]["k"] == 3 and agreement["config"]["bootstrap"]["resamples"] == 1000
    assert "shap" in result["versions"] and result["shap"]["method"] == "shap"


@pytest.mark.slow  # runs SHAP or LIME
def test_cli_regional_lime(tmp_path):
    result = _cli_json(
        tmp_path, "regional", "--data", "builtin:synthetic-regional", "--lime", "--lime-samples", "300", *FAST
    )
    values = [f["lime_importance"] for f in result["features"]]
    assert max(values) == pytest.approx(1.0) and min(values) >= 0
    assert result["lime"]["rows"] == result["members"]
    assert "lime" in result["versions"]


def test_cli_reproduce_reports_missing_data(tmp_path, capsys):
    from flex_core.cli import main

    assert main(["reproduce", "--data-dir", str(tmp_path), "--out", str(tmp_path / "report"), "--quick"]) == 2
    assert "RTA_Dataset.csv" in capsys.readouterr().err


# -- the reproduction, at a small size ------------------------------------------------
@pytest.mark.slow
def test_quick_reproduction_writes_a_complete_report(quick_reproduction):
    out, printed = quick_reproduction
    summary = assert_valid(strict_json(printed))  # what the command prints
    assert summary["kind"] == "reproduction_summary" and summary["results"] == str(out / "results.json")
    assert_valid(strict_json((out / "results.json").read_text()))  # every result in it, each against its kind
    report = (out / "report.md").read_text()
    for heading in ("Random forest performance", "Table 1", "Table 3", "Region 1", "Region 4", "Table 2", "τ panels"):
        assert heading in report
    assert "Reduced run" in report and "dice-random" in report
    assert "necessary F (dice-random)" in report  # the global tables show which changes were needed
    results = json.loads((out / "results.json").read_text())
    assert results["default_generator"] == fc.counterfactuals.DEFAULT_GENERATOR
    assert len(results["accidents"]["regions"]["mode_shift_region_1"]) == 11
    for number in "1234":
        region = results["accidents"]["regions"][number]
        assert region["lime"]["rows"] == region["regional"]["members"]
    linked = [line for line in report.splitlines() if "(figures/" in line]
    assert linked and all((out / line.split("(")[-1].rstrip(")")).is_file() for line in linked)
    assert results["seconds"]["total"] > 0
    # Honest reproduction: both shares of the paper's sparsity claim, no published τ numbers, the Table 2 query.
    assert "70.3%" in report and "73.0%" in report and "no published number" in report
    assert "the generator that reproduces the paper" not in report
    choice = results["accidents"]["regions"]["1"]["query_choice"]
    assert choice["modes_matched"] >= choice["random_modes_matched"]
    assert results["accidents"]["regions"]["1"]["regional"]["query"] == choice["query"]
    assert f"matched {choice['random_modes_matched']}" in report
    refined = results["loan"]["tau_panels"]["refined"]["0.5"]["features"]
    generated = results["loan"]["tau_panels"]["0.5"]["features"]
    mu = {f["name"]: f["magnitude_mean"] for f in generated if f["magnitude_mean"] is not None}
    mu_refined = {f["name"]: f["magnitude_mean"] for f in refined if f["magnitude_mean"] is not None}
    assert all(mu_refined[n] <= mu[n] + 1e-12 for n in mu)  # refinement only shrinks changes
    assert "majority_baseline" in report and "Spearman 95% interval" in report
    by_generator = results["accidents"]["global"]["facts"]["by_generator"]
    assert all(len(g["flex_vs_shap_interval"]) == 2 for g in by_generator.values())
    # Region r is set against the paper's only through its interval: every generator's r carries one.
    for number in "1234":
        intervals = results["accidents"]["regions"][number]["pearson_r_interval_other_generators"]
        assert set(intervals) == set(results["generators"]) - {"dice-random"}
    regions_line = next(line for line in report.splitlines() if line.startswith("- **accidents, regions (dice-random)"))
    assert "interval" in regions_line and "more closely than the paper's did" not in regions_line
    _report_quotes_its_computed_numbers(report, results)


def _report_quotes_its_computed_numbers(report: str, results: dict) -> None:
    """The report's numbers and verdicts are this run's, read back from results.json (not the paper's constants)."""
    from flex_core.reproduce._reference import PAPER, PAPER_GENERATOR

    lines = report.splitlines()
    for key in ("accidents", "loan"):
        model = results[key]["model"]
        assert f"| {key} | test_accuracy | {model['test_accuracy']:.3f} |" in report
        shares = results[key]["share_of_cfs_changing_at_most_two_features"]
        assert f"| {key} | " + " | ".join(f"{shares[g]:.3f}" for g in results["generators"]) + " |" in report  # sparsity
        for name in results["generators"]:
            features = results[key]["global"]["flex"][name]["features"]
            top = min(features, key=lambda f: f["rank"])
            assert f"1 ({top['frequency_mean']:.2f} ± {top['frequency_std']:.2f})" in report  # Table 1 / 3
            spearman = results[key]["global"]["facts"]["by_generator"][name]["flex_vs_shap"]
            assert f"FLEX ({name}): Spearman against our SHAP **{spearman:.2f}**" in report
    # Each region's r and its interval, for every generator, with the verdict its interval implies.
    regions = results["accidents"]["regions"]
    for name in results["generators"]:
        line = next(line for line in lines if line.startswith(f"- **accidents, regions ({name})"))
        for number, paper_r in PAPER["pearson_r"].items():
            region = regions[str(number)]
            if name != PAPER_GENERATOR:
                r, interval = region["pearson_r_other_generators"][name], region["pearson_r_interval_other_generators"][name]
            else:
                r, interval = region["regional"]["pearson_r"], region["regional"]["pearson_r_interval"]
            if r is None and name != PAPER_GENERATOR:  # the paper's query is no factual under the robust rule
                assert f"{number}: undefined (undefined)" in line
                assert f"{name}: r is undefined where the paper's query row is not a factual under {name}'s validity" in report
                continue
            assert -1 <= r <= 1 and interval[0] <= r <= interval[1]
            assert f"{number}: {r:.2f} ({interval[0]:.2f} to {interval[1]:.2f})" in line
            verdict = "above" if paper_r < interval[0] else "below" if paper_r > interval[1] else "indistinguishable from"
            assert f"region {number} {verdict} the paper's {paper_r:.2f}" in line


# -- progress and estimates for long runs ---------------------------------------------------
@pytest.mark.slow  # runs SHAP or LIME
def test_tree_shap_reports_rows_done_in_chunks_and_chunking_changes_nothing(synthetic_task, synthetic_model, factuals):
    calls = []
    chunked = fc.compare.shap_importance(synthetic_model, synthetic_task, factuals,
                                         progress=lambda done, total: calls.append((done, total)))
    n = len(factuals)  # 25 rows: chunks of 10 -> 10, 20, 25
    assert calls == [(0, n), (10, n), (20, n), (25, n)]
    whole = fc.compare.shap_importance(synthetic_model, synthetic_task, factuals[:10])
    np.testing.assert_allclose(chunked.values[:10], whole.values)


@pytest.mark.slow  # runs SHAP or LIME
def test_estimates_say_what_runs_and_scale_with_rows(synthetic_task, synthetic_model, factuals):
    shap = estimate_shap(synthetic_model, synthetic_task, factuals, probe=2)
    assert shap.probe_rows >= 2 and shap.n_rows == len(factuals) and shap.seconds_per_row > 0
    width = synthetic_model.pipeline.named_steps["encode"].transform(synthetic_task.X.iloc[:1]).shape[1]
    assert f"TreeSHAP on 25 rows × {width} one-hot columns; timed on {plural(shap.probe_rows, 'row')} first" in shap.describe()
    lime = estimate_lime(synthetic_model, synthetic_task, factuals[:4], num_samples=100)
    assert lime.with_rows(40).seconds == pytest.approx(10 * lime.seconds)
    assert "LIME on 4 rows × 100 samples each; timed on 1 row first" in lime.describe()
    assert [reporting.format_duration(s) for s in (2, 33, 130)] == ["under 5 seconds", "about 30 seconds",
                                                                   "about 2 minutes"]


@pytest.mark.parametrize("fixed, per_row, n_rows, probes", [
    (0.005, 0.004, 200, [4]),  # TreeSHAP on the forest: a quick run, so the first probe is enough
    (0.1, 0.0022, 569, [4, 16, 64]),  # TreeSHAP on a booster: a set-up that would swamp a few rows' cost
    (0.05, 0.08, 40, [4]),  # KernelSHAP: rows dear enough to measure on four
])
def test_shap_estimates_separate_the_set_up_from_the_cost_per_row(monkeypatch, synthetic_task, synthetic_model,
                                                                  fixed, per_row, n_rows, probes):
    """Issue 19 item 7 on planted costs (set-up + cost per row, the first call dearer still): the estimate is the
    planted time exactly, whichever dominates. Times on the machine itself vary too much for a test (a run measured
    at 0.76 s was estimated at 1.55 s when the probe met a busy moment); the clock here is the plan's."""
    from types import SimpleNamespace

    import ui.estimates as estimates

    calls = []

    def planted_shap(model, task, rows, **options):
        calls.append(len(rows))
        return SimpleNamespace(explainer="tree (planted)", column_names=list(task.feature_names))

    def planted_time(run, model, task, rows, **options):
        run(model, task, rows, **options)
        return fixed + per_row * len(rows)

    monkeypatch.setattr(estimates, "shap_importance", planted_shap)
    monkeypatch.setattr(estimates, "_timed", planted_time)
    rows = list(range(n_rows))
    estimate = estimate_shap(synthetic_model, synthetic_task, rows, probe=4)
    assert estimate.seconds == pytest.approx(fixed + per_row * n_rows, rel=1e-9)
    assert (estimate.fixed_seconds, estimate.seconds_per_row) == (pytest.approx(fixed), pytest.approx(per_row))
    # A warm-up row, the one-row timing twice, then the probe: growing fourfold while its extra rows are too
    # cheap to measure (under MIN_PROBE_SECONDS) and the run is not quick anyway; the final probe timed twice.
    assert calls == [1, 1, 1, *probes, probes[-1]] and estimate.probe_rows == probes[-1]


def test_a_stall_during_the_probe_is_not_multiplied_by_every_row(monkeypatch, synthetic_task, synthetic_model):
    """A busy moment of 5 s during one probe call (as measured once: a 22 s KernelSHAP run announced at 17
    minutes) leaves the estimate at the planted time: the probe is timed twice and the quicker kept."""
    from types import SimpleNamespace

    import ui.estimates as estimates

    fixed, per_row, n_rows, timings = 0.05, 0.08, 200, []

    def planted_time(run, model, task, rows, **options):
        timings.append(len(rows))
        stall = 5.0 if len(timings) == 3 else 0.0  # the first timing of the four-row probe
        return fixed + per_row * len(rows) + stall

    monkeypatch.setattr(estimates, "shap_importance",
                        lambda model, task, rows, **options: SimpleNamespace(explainer="kernel", column_names=["a"]))
    monkeypatch.setattr(estimates, "_timed", planted_time)
    estimate = estimate_shap(synthetic_model, synthetic_task, list(range(n_rows)), probe=4)
    assert timings == [1, 1, 4, 4]
    assert estimate.seconds == pytest.approx(fixed + per_row * n_rows, rel=1e-9)


def test_each_generator_is_set_against_shap_on_its_own_factuals():
    """The reproduction runs SHAP once over every generator's factuals and restricts it per generator: by hand, three
    rows and two features, restricted to rows 30 and 10 (in that order)."""
    from flex_core.compare import ShapImportance
    from flex_core.reproduce._experiments import shap_on

    values = np.array([[0.1, -0.4], [0.3, 0.2], [-0.5, 0.0]])
    shap = ShapImportance(("a", "b"), ("a", "b"), (False, False), values, np.abs(values).mean(axis=0),
                          np.abs(values).std(axis=0), ("a", "b"), np.abs(values).mean(axis=0), 0.5,
                          np.array([10, 20, 30]), "TreeExplainer", 0.0)
    own = shap_on(shap, np.array([30, 10]))
    np.testing.assert_array_equal(own.query_index, [30, 10])
    np.testing.assert_allclose(own.values, [[-0.5, 0.0], [0.1, -0.4]])
    np.testing.assert_allclose(own.mean_abs, [0.3, 0.2])
    np.testing.assert_allclose(own.std_abs, [0.2, 0.2])
