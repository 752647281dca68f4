"""The app's shared cache (ui/cache.py): bounded by memory, emptied of what nobody uses, never keeping an upload's bytes."""

from __future__ import annotations

import gc
import weakref

import pandas as pd
import pytest

from ui import cache
from ui.shelf import Shelf


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def shelf(monkeypatch, tmp_path):
    """A fresh shelf on a clock the test moves (30 minutes' TTL, 2 GB), in place of the server's."""
    monkeypatch.setenv("FLEX_CACHE_DIR", str(tmp_path / "flex_cache"))
    clock = Clock()
    fresh: Shelf = Shelf(2 * 2**30, ttl=1800, clock=clock)
    fresh.clock = clock  # type: ignore[attr-defined]
    monkeypatch.setattr(cache, "SHELF", fresh)
    return fresh


def _csv(rows: int = 60) -> bytes:
    speed = [20 + (i * 7) % 100 for i in range(rows)]
    return pd.DataFrame({"speed": speed, "road": ["urban" if i % 3 else "rural" for i in range(rows)],
                         "y": ["severe" if s > 70 else "slight" for s in speed]}).to_csv(index=False).encode()


def _source(data: bytes) -> dict:
    return {"kind": "csv", "data": data, "filename": "upload.csv", "target": "y", "undesirable": ["severe"]}


def test_an_uploads_bytes_enter_the_key_as_their_digest_not_themselves(shelf):
    data = _csv()
    task = cache.load_task(cache.source_key(_source(data)), data)
    assert cache.load_task(cache.source_key(_source(data)), bytes(data)) is task  # same content, same entry
    (key,) = shelf.sizes()
    assert data not in key and ("sha256", cache.file_digest(data)) in key


def test_arguments_of_any_kind_make_keys_equal_values_share_one(shelf):
    import numpy as np

    calls = []

    @cache.shared(copy=True)
    def total(rows, options, _unhashed) -> int:
        calls.append(1)
        return int(sum(rows))

    assert total(np.array([1, 2]), {"b": 1, "a": 2}, object()) == 3
    assert total([1, 2], {"a": 2, "b": 1}, object()) == 3  # the same list, the same dict in another order
    assert len(calls) == 1


def test_results_are_fresh_copies_and_their_size_is_exact(shelf):
    calls = []

    @cache.shared(copy=True)
    def result(n: int) -> dict:
        calls.append(n)
        return {"values": list(range(n))}

    first = result(1000)
    first["values"].clear()  # a caller changing its copy changes nobody else's
    assert result(1000) == {"values": list(range(1000))} and calls == [1000]
    import pickle

    assert list(shelf.sizes().values()) == [len(pickle.dumps({"values": list(range(1000))}, pickle.HIGHEST_PROTOCOL))]


def test_past_the_memory_budget_the_least_recently_used_dataset_goes(shelf, monkeypatch):
    builtin = [cache.source_key({"kind": "builtin", "name": n}) for n in ("toy2d", "synthetic-regional", "breast-cancer")]
    sizes = []
    for key in builtin:
        cache.load_task(key, None)
        sizes.append(shelf.sizes()[("ui.cache", "load_task", key, None)])
    cache.load_task(builtin[0], None)  # used again: synthetic-regional is now the least recently used
    shelf.budget = sizes[0] + sizes[2] + 10  # planted: room for two datasets and 10 bytes
    shelf.get_or_make("planted", lambda: b"x" * 10, size=len)
    assert [k if k == "planted" else k[2] for k in shelf.sizes()] == [builtin[2], builtin[0], "planted"]
    assert shelf.total_bytes <= shelf.budget


def test_a_bad_memory_setting_is_one_clear_error(monkeypatch):
    monkeypatch.setenv("FLEX_CACHE_MEMORY_MB", "lots")
    with pytest.raises(cache.fc.ConfigError, match="FLEX_CACHE_MEMORY_MB must be a positive number, not 'lots'"):
        cache.memory_budget()
    monkeypatch.setenv("FLEX_CACHE_MEMORY_MB", "512")
    assert cache.memory_budget() == 512 * 2**20
    monkeypatch.setenv("FLEX_CACHE_TTL_MINUTES", "-1")
    with pytest.raises(cache.fc.ConfigError, match="FLEX_CACHE_TTL_MINUTES"):
        cache.unused_ttl()


@pytest.mark.slow
def test_a_dataset_uploaded_by_a_session_that_ended_is_released(shelf):
    """A session uploads a CSV through the sidebar, then leaves; once nobody has used it for the TTL, nothing on
    the server holds the dataset (the task object is freed), though the session never said goodbye."""
    from tests.pages.conftest import start

    at = start("toy2d")
    at.sidebar.radio(key="w_sb_source").set_value("CSV upload").run()
    at.sidebar.get("file_uploader")[0].set_value(("upload.csv", _csv(), "text/csv")).run()
    at.sidebar.selectbox(key="sb_csv_target").set_value("y").run()
    at.sidebar.multiselect(key="sb_csv_undesirable").set_value(["severe"]).run()
    at.sidebar.button(key="sb_csv_load").click().run()
    assert not at.exception and at.session_state["dataset"]["kind"] == "csv", [e.value for e in at.error]
    uploaded = [k for k in shelf.sizes() if k[:2] == ("ui.cache", "load_task") and '"csv"' in k[2]]
    assert len(uploaded) == 1
    task = weakref.ref(cache.load_task(uploaded[0][2], _csv()))
    del at  # the session ended
    shelf.clock.now += 1801
    assert shelf.clear_expired() > 0
    gc.collect()
    assert task() is None, gc.get_referrers(task())
    assert len(shelf) == 0


def test_nothing_shared_lives_in_streamlits_caches():
    """Streamlit's clear_cache message, which any client can send, empties st.cache_data and st.cache_resource for
    every session: shared results must live on the shelf (tests/test_hosted_server.py sends the message)."""
    import re
    from pathlib import Path

    repo = Path(cache.__file__).resolve().parents[1]
    sources = [repo / "app.py", *(repo / "app_pages").glob("*.py"), *(repo / "ui").rglob("*.py")]
    uses = [f"{path.relative_to(repo)}: {line.strip()}" for path in sources
            for line in path.read_text(encoding="utf-8").splitlines()
            if re.search(r"(@st\.cache_(data|resource)\b|st\.cache_(data|resource)\(|st\.cache\b)", line)]
    assert uses == []


def test_two_sessions_on_one_shared_explainer_never_see_each_others_view(shelf, tmp_path):
    """Issue 34 item 2: the explainer is one cached object for every session; a run must not leave its τ, N_F or
    query on it, or one session's settings would end up in another's saved project."""
    import json

    import flex_core as fc

    shared = _shared_explainer()
    assert _shared_explainer() is shared  # both sessions get this one
    untouched = json.dumps(shared.settings(), sort_keys=True, default=str)

    # Session A: global FLEX at τ = 0.2 on 10 factuals. Session B: τ = 0.7, N_F = 12 and a region.
    store_id = cache.store_id(shared)
    a_view = {"n_factuals": 10, "tau": 0.2}
    cache.global_result(shared, store_id, 10, 0.2)
    query = int(shared.store.factual_rows[-1])
    cache.regional_result(shared, store_id, 12, 0.7, query, 2, None)

    assert json.dumps(shared.settings(), sort_keys=True, default=str) == untouched  # neither run left a trace on it
    folder = shared.save(tmp_path / "a", view=a_view)  # session A saves its project with its own view
    assert fc.FlexExplainer.read_settings(folder)["view"] == a_view  # not B's τ, N_F or query
    b_view = {"n_factuals": 12, "tau": 0.7, "query": query, "k": 2, "where": None}
    assert fc.FlexExplainer.read_settings(shared.save(tmp_path / "b", view=b_view))["view"] == b_view
    assert json.dumps(shared.settings(), sort_keys=True, default=str) == untouched


def _shared_explainer():
    """The explainer the app keeps for every session on a small upload (batch generator, N_cf 3, seed 0)."""
    import flex_core as fc

    data = _csv(80)
    task = cache.load_task(cache.source_key(_source(data)), data)
    model = cache.SHELF.get_or_make(("test model", task.fingerprint),
                                    lambda: fc.fit_model(task, model="rf", seed=0, cv_folds=0))
    return cache.explainer(task, model, "shared", "batch", "{}", 3, 0, None)


def test_tau_reaches_the_explainer_as_a_number_or_a_mapping_and_keys_the_result(shelf):
    """Issue 34 item 4: τ crosses ui/cache as the value flex_core takes (no JSON text and back)."""
    import numpy as np

    shared = _shared_explainer()
    store_id = cache.store_id(shared)
    for tau in (0.3, {"speed": 0.6, "*": 0.3}):
        got = cache.global_result(shared, store_id, 10, tau)
        np.testing.assert_array_equal(got.frequency_mean, shared.explain_global(n_factuals=10, tau=tau).frequency_mean)
    entries = len(shelf.sizes())
    cache.global_result(shared, store_id, 10, {"*": 0.3, "speed": 0.6})  # the same τ in another order: the same entry
    assert len(shelf.sizes()) == entries
    assert cache.global_result(shared, store_id, 10, 0.3).config["tau"] == 0.3
