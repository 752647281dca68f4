"""The interactive report (flex_core.snapshot): its JavaScript computes FLEX as the library does, at any τ, and
nothing from the data can become markup or leave the file.

The arithmetic runs in Node here (the same flex.js the file embeds); tests/browser/test_snapshot_browser.py drives
the whole file in Chromium.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from importlib import resources

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core.snapshot._page import data_block, snapshot_html
from flex_core.snapshot._payload import snapshot_payload

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")

#: Runs flex.js on a payload: for each case (τ global, own τ, positions of the rows), the importance, and with
#: "against" (positions of the global rows) the region's r and interval; with "row", that row's f_j.
HARNESS = """
const FlexMath = require(process.argv[2]);
const input = JSON.parse(require("fs").readFileSync(process.argv[3], "utf8"));
const data = input.data, rows = FlexMath.prepare(data);
const out = input.cases.map(c => {
  const tau = FlexMath.tauVector(data.features, c.tau, c.own || {});
  const imp = FlexMath.importance(data, rows, c.positions, tau);
  const res = {frequency: imp.frequency, ci: imp.ci, magnitude: imp.magnitude, dice: imp.dice, n: imp.n};
  if (c.against) {
    const reg = FlexMath.regional(data, rows, c.positions, tau, FlexMath.importance(data, rows, c.against, tau));
    Object.assign(res, {r: reg.r, interval: reg.interval, quadrants: reg.quadrants});
  }
  if (c.row !== undefined) res.local = FlexMath.localFrequencies(data.features, rows[c.row], tau);
  return res;
});
process.stdout.write(JSON.stringify(out, (k, v) => (typeof v === "number" && isNaN(v)) ? "NaN" : v));
"""


def run_js(tmp_path, data: dict, cases: list[dict]) -> list[dict]:
    script = tmp_path / "harness.js"
    script.write_text(HARNESS)
    (tmp_path / "input.json").write_text(json.dumps({"data": data, "cases": cases}))
    flex_js = resources.files("flex_core.snapshot").joinpath("flex.js")
    done = subprocess.run([NODE, str(script), str(flex_js), str(tmp_path / "input.json")], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout, parse_constant=float, object_hook=lambda d: {
        k: float("nan") if v == "NaN" else [float("nan") if x == "NaN" else x for x in v] if isinstance(v, list) else v
        for k, v in d.items()})


def nan_list(values) -> list:
    return [float("nan") if v is None or v == "NaN" else v for v in values]


def close(js, py, tol=1e-12):
    js, py = np.asarray(nan_list(js), dtype=float), np.asarray(py, dtype=float)
    assert js.shape == py.shape
    assert np.allclose(js, py, atol=tol, rtol=0, equal_nan=True), (js, py)


# -- by hand ----------------------------------------------------------------------------------------------
def hand_payload() -> dict:
    """Two continuous features (ranges 10 and 0), one categorical; three factuals.

    Row 0: counterfactuals change a by 2 and 5 (0.2, 0.5 of its range) and c once; b is constant (range 0);
    one slot is empty. Row 1: one valid counterfactual (a by 1) and one found but not valid (a by 9).
    Row 2: no valid counterfactual (left out of every mean).
    """
    features = [
        {"name": "a", "label": "a", "kind": "continuous", "continuous": True, "immutable": False, "integer": False,
         "range": 10, "levels": None},
        {"name": "b", "label": "b", "kind": "continuous", "continuous": True, "immutable": False, "integer": False,
         "range": 0, "levels": None},
        {"name": "c", "label": "c", "kind": "categorical", "continuous": False, "immutable": True, "integer": False,
         "range": None, "levels": ["u", "v"]},
    ]
    rows = {
        "id": [10, 11, 12],
        "x": [[1, 3, 0], [4, 3, 1], [0, 3, 0]],
        "cf": [[[3, 3, 0], [6, 3, 1], None], [[5, 3, 1], [13, 3, 1], None], [[9, 3, 1], None, None]],
        "valid": ["110", "100", "000"],
        "p": [[0.9, 0.1, 0.2, None], [0.8, 0.3, 0.6, None], [0.7, 0.6, None, None]],
    }
    return {"features": features, "rows": rows, "z": 1.959963984540054, "epsilon": 1e-6}


@needs_node
def test_f_mu_and_dice_by_hand_with_a_feature_own_tau(tmp_path):
    data = hand_payload()
    one, own = run_js(tmp_path, data, [{"tau": 0.3, "positions": [0, 1, 2], "row": 0},
                                       {"tau": 0.3, "own": {"a": 0.1}, "positions": [0, 1, 2], "row": 1}])
    # τ 0.3 on a: row 0 has changes 0.2, 0.5 -> f = 1/2; row 1 has 0.1 -> 0; row 2 has none (left out).
    assert one["n"] == 2
    close(one["frequency"], [(0.5 + 0) / 2, 0, (0.5 + 0) / 2])
    close(one["local"], [0.5, 0, 0.5])
    # μ: row 0 (0.2 + 0.5) / 2, row 1 0.1; b's range is 0, so its changes count 0; c is categorical.
    close(one["magnitude"], [(0.35 + 0.1) / 2, 0, float("nan")])
    # DiCE pools the three valid counterfactuals: a changes in all, c in one.
    close(one["dice"], [1, 0, 1 / 3])
    # c is fixed but changed, so its interval is Wilson's; b never changed and is not fixed: Wilson's too.
    assert one["ci"][1][0] == 0 and one["ci"][1][1] > 0
    # a's own τ 0.1: row 0 counts both changes, row 1's 0.1 is not above 0.1.
    close(own["frequency"], [(1 + 0) / 2, 0, 0.25])
    close(own["local"], [0, 0, 0])  # row 1 keeps c


@needs_node
def test_wilson_interval_with_the_continuity_correction_by_hand(tmp_path):
    data = hand_payload()
    data["rows"] = {"id": [1, 2, 3, 4, 5], "x": [[0, 0, 0]] * 5, "cf": [[[0, 0, 0], None, None]] * 5,
                    "valid": ["100"] * 5, "p": [[0.9, 0.1, None, None]] * 5}
    result, = run_js(tmp_path, data, [{"tau": 0.1, "positions": [0, 1, 2, 3, 4]}])
    # Five factuals that never change a: the Wilson upper bound at p = 0.5/5 = 0.1, n = 5 (the docstring's 0.5371);
    # c is fixed and never changed: [0, 0].
    assert result["ci"][0][0] == 0 and result["ci"][0][1] == pytest.approx(0.5371, abs=5e-5)
    assert result["ci"][2] == [0, 0]


# -- against the library ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def built(user_explainer):
    explainer = user_explainer
    global_result = explainer.explain_global(n_factuals=80, tau=0.1)
    query = int(global_result.query_index[3])
    regions = {"around": explainer.explain_region(global_result=global_result, query=query, k=7, tau=0.1),
               "fast": explainer.explain_region(global_result=global_result, rule=["speed>=70"], tau=0.1)}
    return explainer, global_result, regions, snapshot_payload(explainer, global_result, regions)


@needs_node
@pytest.mark.parametrize("tau", [0.0, 0.05, 0.1, 0.3, 0.57, 1.0, {"speed": 0.25, "noise": 0.02}])
def test_the_files_arithmetic_gives_the_librarys_numbers_at_any_tau(built, tmp_path, tau):
    explainer, _, regions, payload = built
    global_tau, own = (tau, {}) if not isinstance(tau, dict) else (0.1, tau)
    library_tau = tau if not isinstance(tau, dict) else {"*": 0.1, **tau}
    everyone, row = payload["global"], payload["rows"]["id"].index(regions["around"].query)
    cases = [{"tau": global_tau, "own": own, "positions": everyone, "row": row}]
    cases += [{"tau": global_tau, "own": own, "positions": r["members"], "against": everyone} for r in payload["regions"]]
    js = run_js(tmp_path, payload, cases)
    g = explainer.explain_global(n_factuals=80, tau=library_tau)
    assert js[0]["n"] == g.n_factuals_used
    close(js[0]["frequency"], g.frequency_mean)
    close([c for pair in js[0]["ci"] for c in pair], g.frequency_ci.ravel())
    close(js[0]["magnitude"], g.magnitude_mean)
    close(js[0]["dice"], g.dice_frequency)
    local = explainer.explain_local([regions["around"].query], tau=library_tau)[0]
    close(js[0]["local"], local.frequency_mean)
    for result, name in zip(js[1:], ["around", "fast"]):
        spec = ({"query": regions[name].query, "k": 7} if name == "around" else {"rule": ["speed>=70"]})
        reg = explainer.explain_region(global_result=g, tau=library_tau, **spec)
        close(result["frequency"], reg.importance.frequency_mean)
        close([result["r"]], [reg.pearson_r])
        close(result["interval"], reg.pearson_r_interval)
        assert tuple(result["quadrants"]) == reg.quadrants


# -- what the file carries and how ------------------------------------------------------------------------
def test_the_payload_carries_the_counterfactuals_and_the_regions(built):
    explainer, global_result, regions, payload = built
    rows = payload["rows"]
    ids = rows["id"]
    assert [ids[p] for p in payload["global"]] == [int(r) for r in global_result.query_index]
    assert [ids[p] for p in payload["regions"][0]["members"]] == list(regions["around"].members)
    cfset = explainer.counterfactuals(ids)
    i = 5
    assert rows["x"][i] == [None if math.isnan(v) else v for v in cfset.factuals[i]]
    assert rows["valid"][i] == "".join("1" if v else "0" for v in cfset.valid[i])
    assert [c is not None for c in rows["cf"][i]] == list(cfset.found[i])
    assert payload["regions"][1]["mode_shift"][0]["name"] == regions["fast"].mode_shift[0]["name"]
    # The user's pipeline is not one the tree generator reads: the batch search says nothing of more ways out.
    assert cfset.cases_counted("more_than_n_cf") is None and rows["more"] == rows["searched"] == "0" * len(ids)
    assert payload["fingerprint"] == explainer.task.fingerprint
    assert payload["tau"] == {"global": 0.1, "features": {}}
    task = explainer.task  # the outcome in the data's words, never "(undesirable)" (the expert reads this table)
    assert dict(payload["settings"])["outcome explained"] == (
        f"{task.undesirable_words}: the outcome each way out leaves for {task.desirable_words}")
    assert "undesirable" not in json.dumps(payload["settings"])
    assert [f["range"] for f in payload["features"] if f["continuous"]] == [
        v for v, f in zip(explainer.store.ranges, explainer.task.features) if f.is_continuous]


def test_what_the_generator_counted_of_each_case_travels_with_it():
    """toy2d's forest read by the tree generator with one way out asked for: most cases have more (speed alone,
    visibility alone), one character a row, as ``cases_counted`` names them."""
    task = fc.data.load_builtin("toy2d")
    explainer = fc.FlexExplainer.from_task(task, fc.fit_model(task, model="rf", seed=0, cv_folds=0), n_cf=1, seed=0)
    global_result = explainer.explain_global(n_factuals=12)
    rows = snapshot_payload(explainer, global_result)["rows"]
    cfset = explainer.counterfactuals(rows["id"])
    more, searched = cfset.cases_counted("more_than_n_cf"), cfset.cases_counted("batch_fallback")
    assert rows["more"] == "".join("1" if r in more else "0" for r in rows["id"]) and rows["more"].count("1") >= 6
    assert rows["searched"] == "".join("1" if r in searched else "0" for r in rows["id"])


def test_the_payload_names_features_and_levels_as_the_app_shows_them():
    """The case table's headers carry the unit or currency and its levels the dictionary's words, as the app's."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    words = {"features": {"speed": {"name": "Speed", "unit": "km/h"}, "income": {"name": "Income", "currency": "€"},
                          "lighting": {"name": "Lighting", "levels": {"dark": "at night, unlit"}}}}
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"speed": rng.uniform(0, 100, 200), "income": rng.uniform(0, 9, 200),
                          "lighting": rng.choice(["dark", "day"], 200)})
    y = np.where((frame["speed"] > 60) | (frame["lighting"] == "dark"), "bad", "good")
    model = Pipeline([("enc", ColumnTransformer([("oh", OneHotEncoder(), ["lighting"])], remainder="passthrough")),
                      ("rf", RandomForestClassifier(n_estimators=10, random_state=0))]).fit(frame, y)
    explainer = fc.FlexExplainer(model, frame, undesired="bad", y=y, n_cf=2, seed=0, dictionary=words)
    g = explainer.explain_global(n_factuals=10)
    region = explainer.explain_region(global_result=g, query=int(g.query_index[0]), k=5, where={"lighting": "dark"})
    payload = snapshot_payload(explainer, g, {"around": region})
    shown = {f["name"]: f for f in payload["features"]}
    # The region's mode shift and criterion in the same words: "₹300,000 to ₹2,700,000", "16 to 20 years", levels.
    modes = {m["name"]: m for m in payload["regions"][0]["mode_shift"]}
    assert modes["lighting"]["mode"] == "at night, unlit"
    assert modes["speed"]["mode"].endswith(" km/h") and modes["income"]["mode"].startswith("€")
    assert payload["regions"][0]["description"].endswith("with Lighting = at night, unlit")
    assert shown["speed"]["header"] == "Speed (km/h)" and shown["speed"]["words"] is None
    assert shown["income"]["header"] == "Income (€)"
    assert shown["lighting"]["header"] == "Lighting" and shown["lighting"]["words"] == ["at night, unlit", "day"]


def test_no_text_from_the_data_can_end_the_data_block():
    hostile = "</script><script>alert(1)</script><!-- & =HYPERLINK(\"http://x\")"
    block = data_block({"text": hostile, "title": "x"})
    assert not set("<>&") & set(block)
    assert json.loads(block) == {"text": hostile, "title": "x"}


def test_the_file_is_one_page_that_loads_nothing(built):
    explainer, global_result, regions, payload = built
    page = snapshot_html({**payload, "title": "<b>title</b>"})
    assert "<title>&lt;b&gt;title&lt;/b&gt;</title>" in page
    assert not re.search(r"<(script|img|iframe|link)[^>]+(src|href)=", page, re.IGNORECASE)
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert page.count("<script") == 4  # plotly.js, the data, flex.js and the page's script


def test_a_report_path_in_a_missing_folder_is_refused_before_anything_runs(user_explainer, tmp_path):
    with pytest.raises(fc.ConfigError, match="folder that exists"):
        user_explainer.report(tmp_path / "nowhere" / "report.html")
    with pytest.raises(fc.ConfigError, match="give a file name"):
        user_explainer.report(tmp_path)


def test_report_writes_the_file_with_saved_and_discovered_regions(user_explainer, tmp_path):
    query = int(user_explainer.sample_factuals(60)[0])
    path = user_explainer.report(tmp_path / "r.html", n_factuals=60, regions={"mine": {"query": query, "k": 5}}, discover=2)
    page = path.read_text(encoding="utf-8")
    start = page.index('<script id="flex-data" type="application/json">') + len('<script id="flex-data" type="application/json">')
    payload = json.loads(page[start:page.index("</script>", start)])
    names = [r["name"] for r in payload["regions"]]
    assert names[0] == "mine" and len(names) <= 3
    found = user_explainer.find_regions(n_factuals=60, top=2)
    assert names[1:] == [f"discovered {i + 1}: {r.text}" for i, r in enumerate(found.regions)]
    assert [r["kind"] for r in payload["regions"][1:]] == ["discovered"] * len(found.regions)
    for shown, region in zip(payload["regions"][1:], found.regions):  # the file says why one below the rate is not significant
        assert shown["discovery"]["significant"] == region.significant
        assert shown["discovery"]["interval_reaches_zero"] == (not region.significant and region.q_value <= 0.1)


def test_report_writes_to_a_stream_with_the_regions_a_search_found(user_explainer):
    import io

    found = user_explainer.find_regions(n_factuals=60, top=1, min_support=5)
    out = user_explainer.report(io.StringIO(), n_factuals=60, discover=found, settings={"link": "none"})
    page = out.getvalue()
    assert page.startswith("<!DOCTYPE html>")
    assert f"discovered 1: {found.regions[0].text}".replace("<", "\\u003c").replace(">", "\\u003e") in page
    assert '["link","none"]' in page
