"""The list of trusted names is complete for every supported model kind, and holds only classes (issue 31)."""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pytest
import skops.io as sio

import flex_core as fc
from flex_core.models._allowlist import (
    TRUSTED_BY_LIBRARY,
    TRUSTED_BY_NODE_KIND,
    TRUSTED_FUNCTIONS,
    TRUSTED_TYPES,
    TRUSTED_VALUE_TYPES,
)
from flex_core.models._files import untrusted_names
from tests.models.supported_models import supported_models


@pytest.fixture(scope="module")
def saved():
    """Each supported model kind, saved with skops.io.dumps: name -> (model, frame, bytes)."""
    return {name: (model, X, sio.dumps(model)) for name, (model, X) in supported_models().items()}


def test_the_supported_kinds_cover_flex_and_every_booster(saved):
    assert {f"flex-{kind}-{encoding}" for kind in fc.models.MODELS for encoding in ("onehot", "label")} <= set(saved)
    assert {"xgboost", "lightgbm", "random-forest-multiclass", "pipeline-column-transformer"} <= set(saved)


def test_every_supported_model_kind_names_only_listed_classes_and_loads_the_same(saved):
    """The list is complete: every name a supported model's file holds is on it (skops' own count agrees)."""
    for name, (model, X, data) in saved.items():
        assert untrusted_names(data) == [], name
        assert set(sio.get_untrusted_types(data=data)) <= TRUSTED_TYPES | TRUSTED_FUNCTIONS, name
        loaded = fc.models.load_model(data)
        score = "predict" if not hasattr(model, "predict_proba") else "predict_proba"  # a regressor's number
        np.testing.assert_allclose(getattr(loaded, score)(X), getattr(model, score)(X), err_msg=name)


def _resolve(name: str):
    """What skops would build for ``name``: the attribute of its module, imported by that module's name only."""
    import skops.io  # noqa: F401  (loads scikit-learn's compiled losses, registered as "_loss", as loading does)

    module, _, attribute = name.rpartition(".")
    return getattr(importlib.import_module(module), attribute)


@pytest.mark.parametrize("name", sorted(TRUSTED_TYPES))
def test_every_trusted_name_is_a_class_never_a_function_or_module(name):
    resolved = _resolve(name)
    assert isinstance(resolved, type), f"{name} is {type(resolved).__name__}, not a class"
    assert resolved.__name__ == name.rpartition(".")[2]


def test_the_only_trusted_function_is_check_array_and_values_are_plain_types():
    assert {"sklearn.utils.validation.check_array"} == TRUSTED_FUNCTIONS
    from sklearn.utils.validation import check_array

    assert _resolve("sklearn.utils.validation.check_array") is check_array and inspect.isfunction(check_array)
    assert TRUSTED_VALUE_TYPES <= TRUSTED_TYPES
    assert all(name.startswith(("builtins.", "collections.", "numpy.")) for name in TRUSTED_VALUE_TYPES)
    assert not any(name.startswith("numpy.random") for name in TRUSTED_VALUE_TYPES)


def test_no_name_is_listed_twice():
    listed = [name for names in TRUSTED_BY_LIBRARY.values() for name in names]
    assert len(listed) == len(set(listed)) == len(TRUSTED_TYPES)


def test_each_node_kind_names_only_listed_names_and_no_kind_calls_what_the_file_names():
    assert all(names <= TRUSTED_TYPES | TRUSTED_FUNCTIONS for names in TRUSTED_BY_NODE_KIND.values())
    assert TRUSTED_BY_NODE_KIND["FunctionNode"] == TRUSTED_FUNCTIONS
    assert TRUSTED_BY_NODE_KIND["LossNode"] == {"_loss.CyHalfBinomialLoss", "_loss.CyHalfMultinomialLoss", "_loss.CyExponentialLoss",
                                                "_loss.CyHalfSquaredError", "_loss.CyAbsoluteError", "_loss.CyHuberLoss",
                                                "_loss.CyPinballLoss"}
    assert not {"ConstructorFromReduceNode", "MethodNode", "OperatorFuncNode", "CachedNode"} & set(TRUSTED_BY_NODE_KIND)
