"""Model files: skops with trusted types only; hostile files are refused before anything is built."""

from __future__ import annotations

import os

import numpy as np
import pytest
import skops.io as sio

import flex_core as fc


class Payload:
    """A custom class: a skops file holding it must not load."""

    def __init__(self):
        self.command = "echo hacked"


def test_a_saved_pipeline_loads_and_predicts_the_same(user_model, user_model_file, accident_data):
    loaded = fc.models.load_model(user_model_file)
    X = accident_data.drop(columns=["severity"])
    np.testing.assert_array_equal(loaded.predict_proba(X), user_model.predict_proba(X))
    assert fc.models.load_model(user_model_file.read_bytes()).classes_.tolist() == ["mild", "severe"]


@pytest.mark.parametrize(
    "payload, named",
    [({"run": os.system}, "the type posix.system"), (Payload(), r"the type \S*Payload"),
     ([np.ones(2), eval], "the type builtins.eval")],
)
def test_hostile_files_are_refused_naming_the_type(tmp_path, payload, named):
    path = tmp_path / "hostile.skops"
    sio.dump(payload, path)
    with pytest.raises(fc.ConfigError, match=f"refused: it names {named}, which FLEX does not trust") as caught:
        fc.models.load_model(path)
    assert "\n" not in str(caught.value)


def test_pickles_and_other_files_are_never_loaded(tmp_path):
    pickled = tmp_path / "model.pkl"
    pickled.write_bytes(b"\x80\x04K\x01.")
    with pytest.raises(fc.ConfigError, match="pickle"):
        fc.models.load_model(pickled)
    with pytest.raises(fc.ConfigError, match="not a .skops"):
        fc.models.load_model(b"\x80\x04K\x01.")
    with pytest.raises(fc.DataError, match="not found"):
        fc.models.load_model(tmp_path / "absent.skops")
