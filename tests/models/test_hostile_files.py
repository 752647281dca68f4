"""Hostile .skops files (issue 31): each is refused before anything in it is built, and its payload never runs.

Every payload would create a marker file if anything ran; each test checks it does not exist. All of
them ran (or were read whole) with the old trust of any name under sklearn., numpy., scipy., xgboost.
and lightgbm.
"""

from __future__ import annotations

import copy
import io
import json
import pickle
import tracemalloc
import zipfile
from functools import partial

import joblib
import numpy as np
import pytest
import scipy.sparse
import skops.io as sio

import flex_core as fc
from flex_core._errors import ModelFileRefused
from flex_core.models._archive import MAX_ENTRIES, MAX_RATIO, MAX_SCHEMA_BYTES, MAX_UNPACKED_BYTES
from tests.payloads import GADGETS, as_file, call_node, edited, entries, gadget_file, rezip, schema_bomb, touch, with_protocol


@pytest.fixture
def marker(tmp_path, monkeypatch):
    """Where a payload would leave its trace; the working folder is its folder (xgboost's gadget writes ./cachedir)."""
    folder = tmp_path / "traces"
    folder.mkdir()
    monkeypatch.chdir(folder)
    yield folder / "ran"
    assert not list(folder.iterdir()), "the payload ran"


def refused(data, *words: str) -> str:
    with pytest.raises(ModelFileRefused) as caught:
        fc.models.load_model(data)
    message = str(caught.value)
    assert message.startswith("The model file was refused: ") and message.endswith("Nothing in it was built or run.")
    assert "\n" not in message and all(word in message for word in words), message
    return message


@pytest.mark.parametrize("library", sorted(GADGETS))
def test_a_code_running_callable_from_each_formerly_trusted_library_is_refused(marker, library):
    module, name, _ = GADGETS[library](marker)
    refused(gadget_file(marker, library), f"{module}.{name}", "ConstructorFromReduceNode")


def test_a_function_bound_into_a_pipeline_is_refused(marker):
    """A FunctionTransformer holding partial(runstring, code) would run it at the first prediction."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    runstring = np.testing._private.utils.runstring
    model = make_pipeline(FunctionTransformer(partial(runstring, touch(marker)))).fit(np.zeros((3, 1)))
    refused(sio.dumps(model), "the function numpy.testing._private.utils.runstring")


def test_a_function_as_a_dicts_key_type_is_refused(marker):
    """skops builds a dict's keys by calling each key type with the key: here, code."""
    script = "sklearn.utils._testing.assert_run_python_script_without_output"

    def key_type_is_a_function(schema):
        schema["key_types"]["content"][0].update(__module__=script.rpartition(".")[0], __class__=script.rpartition(".")[2])
        return schema

    refused(edited({touch(marker): 1}, key_type_is_a_function), f"the type {script}")


def test_a_call_hidden_in_a_trees_reduce_arguments_is_refused(marker):
    from sklearn.tree import DecisionTreeClassifier

    tree = DecisionTreeClassifier(max_depth=1).fit(np.arange(6).reshape(-1, 1), [0, 0, 0, 1, 1, 1])

    def hide_a_call(schema):
        schema["content"]["content"]["tree_"]["__reduce__"]["args"]["content"][0] = call_node(*GADGETS["numpy"](marker))
        return schema

    refused(edited(tree, hide_a_call), "numpy.testing._private.utils.runstring")


@pytest.mark.parametrize("node, named", [
    ({"__class__": "RandomForestClassifier", "__module__": "sklearn.ensemble._forest", "__loader__": "FunctionNode"},
     "the function sklearn.ensemble._forest.RandomForestClassifier"),
    ({"__class__": "SVC", "__module__": "sklearn.svm._classes", "__loader__": "ObjectNode"},  # skops trusts it by default
     "the type sklearn.svm._classes.SVC"),
    ({"__class__": "Booster", "__module__": "xgboost.core", "__loader__": "TypeNode"},  # a class an estimator could call
     "the type xgboost.core.Booster"),
    ({"__class__": "eval", "__module__": "builtins", "__loader__": "TypeNode"}, "the type builtins.eval"),
    ({"__class__": "Booster", "__module__": "lightgbm.basic", "__loader__": "LossNode",  # called with the file's arguments
      "__reduce__": {"args": {"__class__": "tuple", "__module__": "builtins", "__loader__": "TupleNode", "content": []}},
      "content": {"__class__": "dict", "__module__": "builtins", "__loader__": "DictNode", "content": {},
                  "key_types": {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode", "content": []}}},
     "the type lightgbm.basic.Booster"),
    ({"__class__": "Booster", "__module__": "xgboost.core", "__loader__": "ListNode", "content": []},  # Booster([...])
     "the type xgboost.core.Booster"),
    ({"__class__": "methodcaller", "__module__": "operator", "__loader__": "OperatorFuncNode", "attrs": {}},
     "OperatorFuncNode of operator.methodcaller"),
    ({"__class__": "Hacked", "__module__": "numpy", "__loader__": "SomeFutureNode"}, "SomeFutureNode of numpy.Hacked"),
], ids=["function-named-like-a-class", "skops-default", "booster-as-value", "eval", "booster-as-loss", "booster-as-list",
        "methodcaller", "unknown-kind"])
def test_names_and_node_kinds_off_the_list_are_refused(marker, node, named):
    refused(as_file({"__class__": "list", "__module__": "builtins", "__loader__": "ListNode", "content": [node]}), named)


def test_a_generator_naming_a_function_as_its_bit_generator_is_refused(marker):
    def seed_instead(schema):
        schema["content"]["bit_generator"]["content"]["bit_generator"]["content"] = json.dumps("seed")
        return schema

    refused(edited(np.random.default_rng(0), seed_instead), "the type numpy.random.seed")


@pytest.mark.parametrize("dump", [pickle.dumps, lambda payload: _joblib_bytes(payload)], ids=["pickle", "joblib"])
def test_a_pickle_or_joblib_file_renamed_skops_is_refused(marker, tmp_path, dump):
    path = tmp_path / "model.skops"
    path.write_bytes(dump(_Touch(str(marker))))
    refused(path, "not a .skops file", "pickle")
    refused(path.read_bytes(), "not a .skops file")


class _Touch:
    """Creates ``marker`` when unpickled."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return open, (self.marker, "w")


def _joblib_bytes(payload) -> bytes:
    out = io.BytesIO()
    joblib.dump(payload, out, compress=3)
    return out.getvalue()


def test_a_gigabyte_schema_bomb_is_refused_quickly_from_the_zip_directory(marker):
    """1 GiB of schema.json in about 1 MB: refused from the zip's directory, without unpacking (tracemalloc: a few MB)."""
    bomb = schema_bomb(marker, 2**30)
    assert len(bomb) < 2 * 2**20
    tracemalloc.start()
    try:
        refused(bomb, f"more than the {MAX_UNPACKED_BYTES // 2**20} MiB allowed")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20


def test_a_zip_that_lies_about_its_sizes_is_refused_without_unpacking_it(marker):
    """The zip states the gadget's size; the entry holds 1 GiB more. A reader trusting the header inflates it all."""
    tracemalloc.start()
    try:
        refused(schema_bomb(marker, 2**30, lying=True), "does not unpack to the size its zip header declares")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20


def test_a_schema_over_its_cap_is_refused(marker):
    refused(schema_bomb(marker, MAX_SCHEMA_BYTES), f"schema.json unpacks to {MAX_SCHEMA_BYTES // 2**20:,} MiB, more than")


def test_too_many_entries_are_refused(marker):
    files = entries(gadget_file(marker))
    files.update({f"{i}.bin": b"" for i in range(MAX_ENTRIES)})
    refused(rezip(files), f"more than {MAX_ENTRIES:,} entries")


@pytest.mark.parametrize("name, content, words", [
    ("inner.zip", "pickle", ["'inner.zip', an archive inside an archive"]),
    ("data.pkl", "pickle", ["'data.pkl', an archive inside an archive"]),
    ("0.npy", "zip", ["0.npy is not a NumPy array"]),
    ("0.npz", "pickle", ["0.npz is not a sparse matrix's archive"]),
], ids=["zip", "pickle", "zip-named-npy", "pickle-named-npz"])
def test_nested_archives_skops_does_not_write_are_refused(marker, name, content, words):
    pickled = pickle.dumps(_Touch(str(marker)))
    files = entries(gadget_file(marker))
    files[name] = rezip({"data.pkl": pickled}) if content == "zip" or name.endswith(".zip") else pickled
    refused(rezip(files), *words)


def test_a_sparse_matrix_loads_but_its_archive_is_capped_like_the_file(marker):
    """skops keeps a SciPy sparse matrix as an .npz (a zip in the zip): legitimate, and checked the same way."""
    matrix = scipy.sparse.csr_matrix(np.eye(4))
    loaded = fc.models.load_model(sio.dumps({"m": matrix}))
    assert (loaded["m"] != matrix).nnz == 0
    files = entries(sio.dumps({"m": matrix}))
    (npz,) = [name for name in files if name.endswith(".npz")]
    inner = entries(files[npz])
    inner["data.npy"] = _npy(np.zeros(2**21))  # 16 MiB of zeros deflate about a thousandfold
    bomb = entries(gadget_file(marker)) | {npz: rezip(inner, zipfile.ZIP_DEFLATED)}
    refused(rezip(bomb), "data.npy unpacks to", f"at most {MAX_RATIO} is allowed")
    inner = {"data.npy": _npy(np.zeros(3)), "deeper.npz": files[npz]}
    refused(rezip(entries(gadget_file(marker)) | {npz: rezip(inner)}), "'deeper.npz', an archive inside an archive")


def _npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


def test_an_older_skops_format_is_refused(marker):
    def older(schema):
        return {**copy.deepcopy(schema), "protocol": 0}

    refused(edited([1, 2], older), "skops format 0")


def test_a_schema_nested_too_deeply_is_refused(marker):
    node: dict = {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode", "content": []}
    for _ in range(300):
        node = {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode", "content": [node]}
    refused(rezip({"schema.json": json.dumps(with_protocol(node)).encode()}), "nested more than")


def test_the_cli_refuses_a_code_running_model_file_with_one_line(marker, tmp_path, capsys, accident_data):
    from tests.cli.test_cli import one_line_error

    csv, evil = tmp_path / "data.csv", tmp_path / "evil.skops"
    accident_data.to_csv(csv, index=False)
    evil.write_bytes(gadget_file(marker, "sklearn"))
    line = one_line_error(["global", "--data", str(csv), "--target", "severity", "--undesired", "severe",
                           "--model-file", str(evil), "--n-factuals", "5", "--quiet"], capsys)
    assert line.startswith("error: The model file was refused: ") and "assert_run_python_script_without_output" in line


def test_a_project_folder_with_a_code_running_model_is_refused(marker, tmp_path, user_explainer):
    folder = user_explainer.save(tmp_path / "project")
    (folder / "model.skops").write_bytes(gadget_file(marker, "scipy"))
    with pytest.raises(ModelFileRefused, match="scipy._lib._tmpdirs.mkdtemp"):
        fc.FlexExplainer.load(folder)


def _forest_with(edit) -> object:
    """A small pipeline around a forest whose first tree's node arrays are changed by ``edit(nodes)``."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X = np.arange(24.0).reshape(-1, 2)
    model = make_pipeline(StandardScaler(), RandomForestClassifier(n_estimators=2, max_depth=2, random_state=0))
    model.fit(X, [0] * 6 + [1] * 6)
    tree = model[-1].estimators_[0].tree_
    state = tree.__getstate__()
    state["nodes"] = state["nodes"].copy()
    edit(state["nodes"])
    tree.__setstate__(state)
    return model


@pytest.mark.parametrize("edit, words", [
    (lambda nodes: nodes["left_child"].__setitem__(0, 10**8), "a node points outside the tree or back up it"),
    (lambda nodes: nodes["right_child"].__setitem__(0, 0), "a node points outside the tree or back up it"),  # a loop
    (lambda nodes: nodes["feature"].__setitem__(0, 7), "a node splits on a feature beyond the 2 the model takes"),
], ids=["outside", "loop", "feature"])
def test_a_forest_whose_tree_would_crash_or_hang_the_server_is_not_used(edit, words):
    with pytest.raises(fc.DataError, match=f"malformed tree \\({words}\\); it was not used"):
        fc.models.load_model(sio.dumps(_forest_with(edit)))


@pytest.mark.slow
def test_such_a_tree_does_crash_a_process_that_predicts_with_it(tmp_path):
    """Why the check exists: scikit-learn reads outside the arrays and the process dies (here a child process)."""
    import subprocess
    import sys

    path = tmp_path / "crash.skops"
    path.write_bytes(sio.dumps(_forest_with(lambda nodes: nodes["left_child"].__setitem__(0, 10**8))))
    code = (f"import numpy as np, skops.io as sio; data = open({str(path)!r}, 'rb').read();"
            "m = sio.loads(data, trusted=sio.get_untrusted_types(data=data)); m.predict(np.zeros((4, 2)))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120).returncode < 0


def test_a_histogram_boosting_tree_pointing_outside_itself_is_not_used():
    from sklearn.ensemble import HistGradientBoostingClassifier

    X = np.arange(40.0).reshape(-1, 2)
    model = HistGradientBoostingClassifier(max_iter=2, min_samples_leaf=2).fit(X, [0] * 10 + [1] * 10)
    model._predictors[0][0].nodes["left"][0] = 10**6
    with pytest.raises(fc.DataError, match="malformed tree \\(a node points outside the tree or back up it\\)"):
        fc.models.load_model(sio.dumps(model))
