"""Shared fixtures: small real workloads (real models, real DiCE), and the paper's data when present."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import flex_core as fc

REPO = Path(__file__).resolve().parents[1]


def data_dir() -> Path:
    return Path(os.environ.get("FLEX_DATA_DIR", REPO.parent / "shared" / "data")).resolve()


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
