"""FLEX on your own model in three lines (the README's "Use it from Python").

Run from the repository: ``python examples/quickstart.py``. The model is an
ordinary scikit-learn pipeline fitted here on the built-in synthetic accidents
data (severe when speed > 80, or on a rural road in the dark).
"""

from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

import flex_core as fc

frame = fc.data.load_builtin("synthetic-regional").frame
X, y = frame.drop(columns="severity"), frame["severity"]
categorical = ["road_type", "lighting", "noise_categorical", "driver_age_band"]
model = make_pipeline(
    make_column_transformer((OneHotEncoder(handle_unknown="ignore"), categorical), remainder="passthrough"),
    HistGradientBoostingClassifier(random_state=0),
).fit(X, y)

# The three lines:
explainer = fc.FlexExplainer(model, X, undesired="Severe", immutable=["driver_age_band"], n_cf=10, seed=0)
result = explainer.explain_global(n_factuals=200, tau=0.1)  # FlexResult
region = explainer.explain_region(global_result=result, where={"road_type": "rural"}, k=4)  # RegionalResult

print(result.to_frame()[["feature", "frequency_mean", "frequency_std", "rank"]].to_string(index=False))
print(f"region around row {region.query}: r = {region.pearson_r:.2f} with global")
assert fc.FlexResult.from_dict(result.to_dict()).to_dict() == result.to_dict()  # the CLI's JSON, read back
