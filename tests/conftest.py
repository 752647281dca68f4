"""Shared fixtures: small real workloads (real models, real DiCE), and the paper's data when present."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

# One OpenMP thread in every test process (and the CLI and app processes tests start), set before
# scikit-learn loads: on a machine shared with other work, OpenMP's waiting threads made a 1 s
# HistGradientBoosting test take 40 s to 4 minutes. No test depends on the thread count.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest

import flex_core as fc

pytest.register_assert_rewrite("tests.contract")  # its asserts explain themselves, as a test's do

REPO = Path(__file__).resolve().parents[1]


def data_dir() -> Path:
    return Path(os.environ.get("FLEX_DATA_DIR", REPO.parent / "shared" / "data")).resolve()


# The app reads server paths only below FLEX_DATA_DIR by default (ui/paths.py; not its own folder): the app
# processes tests start must see the data folder the tests name, also when it is the default one.
os.environ["FLEX_DATA_DIR"] = str(data_dir())


def paper_file(name: str) -> Path:
    path = data_dir() / name
    if not path.is_file():
        pytest.skip(f"{name} not found in FLEX_DATA_DIR={data_dir()} (set FLEX_DATA_DIR to the paper's data folder)")
    return path


@pytest.fixture(scope="session")
def loan_path() -> Path:
    return paper_file("loan_approval_dataset.csv")


@pytest.fixture(scope="session")
def accidents_path() -> Path:
    return paper_file("RTA_Dataset.csv")


@pytest.fixture(scope="session")
def quick_reproduction(tmp_path_factory, worker_id, loan_path, accidents_path) -> tuple[Path, str]:
    """``flex reproduce --quick`` on the paper's two datasets, run once for the tests that read it (about 30 s in a
    full run): its output folder and what it printed. The tests only read them.

    Under xdist the modules that read it may run on different workers: the first to ask runs it in the run's shared
    temporary folder while holding a lock, the others wait for it and read the same folder (a session fixture alone
    ran it once per worker).
    """
    import fcntl

    from flex_core.cli import main

    shared = tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent
    folder = shared / "quick-reproduction"
    folder.mkdir(exist_ok=True)
    out, printed_file = folder / "report", folder / "printed.txt"
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not printed_file.exists():  # written last: its presence means a complete run
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                code = main(["reproduce", "--data-dir", str(loan_path.parent), "--out", str(out), "--quick", "--quiet"])
            assert code == 0
            printed_file.write_text(printed.getvalue())
    return out, printed_file.read_text()


@pytest.fixture(scope="session")
def synthetic_task():
    return fc.data.load_builtin("synthetic-regional")


@pytest.fixture(scope="session")
def synthetic_model(synthetic_task):
    return fc.fit_model(synthetic_task, model="rf", seed=0, cv_folds=3)


@pytest.fixture(scope="session")
def toy_task():
    return fc.data.load_builtin("toy2d")


@pytest.fixture(scope="session")
def toy_model(toy_task):
    return fc.fit_model(toy_task, model="rf", seed=0, cv_folds=3)


@pytest.fixture(scope="session")
def accident_data():
    """A user's raw frame (see tests.factories.accident_frame)."""
    from tests.factories import accident_frame

    return accident_frame()


@pytest.fixture(scope="session")
def user_model(accident_data):
    """A Pipeline(OneHotEncoder + HistGradientBoostingClassifier) fitted outside the project."""
    from tests.factories import user_pipeline

    return user_pipeline(accident_data)


@pytest.fixture(scope="session")
def user_explainer(user_model, accident_data):
    X = accident_data.drop(columns=["severity"])
    return fc.FlexExplainer(
        user_model, X, undesired="severe", y=accident_data["severity"], kinds={"district": "categorical"},
        immutable=["zone"], seed=0, n_cf=4,
    )


@pytest.fixture(scope="session")
def user_model_file(user_model, tmp_path_factory):
    """The user's pipeline saved with skops."""
    path = tmp_path_factory.mktemp("models") / "pipeline.skops"
    fc.models.save_model(user_model, path)
    return path
