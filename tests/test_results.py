"""Results read back exactly what they write: to_dict -> from_dict -> to_dict, also through JSON."""

from __future__ import annotations

import json

import flex_core as fc


def test_flex_result_round_trip(user_explainer):
    data = user_explainer.explain_global(n_factuals=20).to_dict()
    again = fc.FlexResult.from_dict(json.loads(json.dumps(data)))
    assert again.to_dict() == data
    assert again.local_frequencies.shape == (len(data["factuals"]), len(data["features"]))


def test_regional_result_round_trip(user_explainer):
    region = user_explainer.explain_region(where="lighting=dark", k=3, n_factuals=20)
    data = region.to_dict()
    again = fc.RegionalResult.from_dict(json.loads(json.dumps(data)))
    assert again.to_dict() == data
    assert again.members == region.members and again.quadrants == region.quadrants
