"""A real hosted server (``FLEX_HOSTED=1``, the production settings) against hostile clients, over Streamlit's own
websocket protocol (benchmarks/protocol_client.py): one session's ``clear_cache`` message leaves every other session's
results, and a server under a memory cap survives the hostile links of issue 31 and still answers another session.
"""

from __future__ import annotations

import asyncio
import urllib.request
from urllib.parse import quote, urlencode

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg

from benchmarks.protocol_client import ProtocolSession, shown_texts, taus_in
from tools.serve import app_server

# Each test starts a Streamlit server and trains models in it (tens of seconds): not in the fast run.
pytestmark = pytest.mark.slow

TAU_SLIDER = "Global τ (all continuous features)"
TAU_CHART = "Global importance at the current τ"
#: The progress texts of a model being trained (cross-validation folds, then the final fit).
TRAINING = ("Training the model", "Cross-validation")
#: The server's address space under test: a few GB, far below what the hostile links ask for (issue 31: one link
#: asked for about 763 MiB per factual, 20 factuals).
MEMORY_CAP = 3 * 2**30


def _env(tmp_path, **more) -> dict:
    return {"FLEX_HOSTED": "1", "FLEX_CACHE_DIR": str(tmp_path / "flex_cache"), "MALLOC_ARENA_MAX": "2", **more}


def _alive(url: str, process) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10) as response:
            return process.poll() is None and response.status == 200
    except OSError:
        return False


def _trained(messages) -> bool:
    return any(text.startswith(TRAINING) for text in shown_texts(messages, "progress"))


async def _clear_caches(session: ProtocolSession) -> None:
    """Send Streamlit's ``clear_cache`` message, then a heartbeat: its answer means the clear was handled (in order)."""
    for kind in ("clear_cache", "app_heartbeat"):
        message = BackMsg()
        setattr(message, kind, True)
        await session.send(message)
    async with asyncio.timeout(60):
        while (await session.receive()).WhichOneof("type") != "heartbeat_ack":
            pass


async def _tau_change(session: ProtocolSession, timeout: float) -> float:
    """Move the Global τ slider one step; returns the new τ once the chart at it arrived."""
    rerun, value = session.view.move_slider(TAU_SLIDER, 0.01)
    await session.run(rerun, timeout=timeout)
    assert any(TAU_CHART in title and f"{value:.2f}" in taus_in(subtitle) for _, title, subtitle in session.view.charts), \
        f"no chart at τ = {value:.2f}"
    return value


def test_a_clear_cache_message_leaves_other_sessions_results(tmp_path):
    """Streamlit's ``clear_cache`` message, which any websocket client can send, empties ``st.cache_data`` and
    ``st.cache_resource`` for every session. The app keeps nothing there: after one session sends it, a new
    session opening the same view is served the model another session trained (it does not train again), and
    that other session's τ change still answers."""

    async def scenario(url: str) -> None:
        async with ProtocolSession(url) as first:
            assert _trained(await first.run(first.view.open_link(), timeout=300)), "the first view trains"
            await first.run(first.view.open_page("Thresholds"), timeout=300)
            async with ProtocolSession(url) as attacker:
                await attacker.run(attacker.view.open_link(), timeout=300)
                await _clear_caches(attacker)
            async with ProtocolSession(url) as later:
                shown = await later.run(later.view.open_link(), timeout=300)
                assert not _trained(shown), "the model another session trained was lost"
                assert shown_texts(shown, "exception") == []
            await _tau_change(first, timeout=120)

    with app_server(env=_env(tmp_path), timeout=120) as (url, process):
        asyncio.run(scenario(url))
        assert _alive(url, process)


HOSTILE_LINKS = {
    "samples": {"dataset": "builtin:toy2d", "n_factuals": "20", "gen.samples": "20000000"},
    "null byte": {"dataset": "loan:/etc/passwd\x00.csv"},
    "long path": {"dataset": "loan:" + "a" * 5000 + ".csv"},
    "markdown link": {"dataset": "upload:[Session expired: sign in again](http://phish.example/)"},
    "markdown image": {"seed": "![x](http://phish.example/x.png)"},
}


def test_a_hosted_server_under_a_memory_cap_survives_the_hostile_links_and_answers_another_session(tmp_path):
    """The server runs as a team would deploy it (hosted mode, production settings) with its address space capped.
    A session is on the Thresholds page; the links of issue 31 are opened, all at once; then the server still
    answers its health check and the first session's τ change. (What each link's page says is tested with the
    code that handles it.)"""

    async def hostile(url: str, params: dict) -> None:
        try:
            async with ProtocolSession(url, urlencode(params, quote_via=quote)) as session:
                await session.run(session.view.open_link(), timeout=240)
        except (TimeoutError, OSError):  # a link may take long or drop its own connection: survival is what counts
            pass

    async def scenario(url: str) -> None:
        async with ProtocolSession(url) as watcher:
            await watcher.run(watcher.view.open_link(), timeout=300)
            await watcher.run(watcher.view.open_page("Thresholds"), timeout=300)
            before = await _tau_change(watcher, timeout=120)
            await asyncio.gather(*(hostile(url, params) for params in HOSTILE_LINKS.values()))
            assert await _tau_change(watcher, timeout=180) == pytest.approx(before + 0.01)

    with app_server(env=_env(tmp_path), timeout=120, memory_limit=MEMORY_CAP) as (url, process):
        asyncio.run(scenario(url))
        assert _alive(url, process), "the server did not survive the links"


def test_the_hosted_server_runs_with_the_production_settings(tmp_path):
    """FLEX_HOSTED=1 through tools/serve.py: the browser is told to show the viewer's toolbar (no rerun, clear cache
    or deploy items) and no run-on-save."""
    from streamlit.proto.NewSession_pb2 import Config

    async def settings():
        async with ProtocolSession(url) as session:
            shown = await session.run(session.view.open_link(), timeout=300)
        return next(m.new_session.config for m in shown if m.WhichOneof("type") == "new_session")

    with app_server(env=_env(tmp_path), timeout=120) as (url, _):
        config = asyncio.run(settings())
    assert config.toolbar_mode == Config.VIEWER
    assert not config.allow_run_on_save
