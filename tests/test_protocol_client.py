"""The load benchmark's protocol client (benchmarks/protocol_client.py): the reruns it builds, the charts and τ
it recognises, its message cache, and one real run against the app server (``slow``)."""

from __future__ import annotations

import gzip
import json
import struct
from pathlib import Path

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput

from benchmarks.bench_sessions import (
    GLOBAL_CHART,
    TAU_CHART,
    TAU_SLIDER,
    SessionPlan,
    find_leaks,
    main,
    plan_sessions,
)
from benchmarks.protocol_client import ClientView, ProtocolError, UnsupportedWidget, initial_state

MAIN, THRESHOLDS, REGIONAL, FRAGMENT = "main-hash", "thresholds-hash", "regional-hash", "fragment-1"
BASE = "http://127.0.0.1:8501"
#: One headless Chromium session of the benchmark, every websocket frame both ways as Playwright saw them
#: (link with τ 0.23 and query 42, the Thresholds page, the Global τ slider moved twice by keyboard, the
#: Regional explorer), on Streamlit 1.67. Frames: b">" sent or b"<" received, 4-byte length, the bytes.
RECORDING = Path(__file__).parent / "recordings" / "chromium_session.frames.gz"


# -- building protobufs as the server sends them ---------------------------------------------------------
def _frame(message: ForwardMsg) -> bytes:
    return message.SerializeToString()


def _new_session(view_run: str, page_hash: str, fragments: tuple[str, ...] = ()) -> bytes:
    message = ForwardMsg()
    message.new_session.main_script_hash = MAIN
    message.new_session.page_script_hash = page_hash
    message.new_session.config.max_cached_message_age = 2
    message.metadata.run.script_run_id = view_run
    message.metadata.run.fragment_ids.extend(fragments)
    return _frame(message)


def _navigation() -> bytes:
    message = ForwardMsg()
    for name, page_hash, path in (("Global", "global-hash", ""), ("Thresholds", THRESHOLDS, "tau-thresholds"),
                                  ("Regional explorer", REGIONAL, "regional-explorer")):
        page = message.navigation.app_pages.add(page_script_hash=page_hash, page_name=name, url_pathname=path)
        page.is_default = not path
    return _frame(message)


def _element(path: tuple[int, ...], script_hash: str, fill, fragment: str = "", cacheable_hash: str = "") -> bytes:
    message = ForwardMsg()
    message.metadata.delta_path.extend(path)
    message.metadata.active_script_hash = script_hash
    message.delta.fragment_id = fragment
    fill(message.delta.new_element)
    if cacheable_hash:
        message.hash, message.metadata.cacheable = cacheable_hash, True
    return _frame(message)


def _slider(value: float, *, set_value: bool = False):
    def fill(element: Element) -> None:
        element.slider.id, element.slider.label, element.slider.step = "slider-id", TAU_SLIDER, 0.01
        element.slider.default.append(0.10)
        element.slider.value.append(value)
        element.slider.set_value = set_value
    return fill


def _selectbox(element: Element) -> None:
    element.selectbox.id, element.selectbox.label = "model-id", "Model"
    element.selectbox.options.extend(["Random forest", "Logistic regression"])
    element.selectbox.default = 0


def _chart(title: str, subtitle: str):
    def fill(element: Element) -> None:
        element.plotly_chart.id = "chart-id"
        element.plotly_chart.spec = json.dumps({"layout": {"title": {"text": title, "subtitle": {"text": subtitle}}}})
    return fill


def _markdown(text: str):
    def fill(element: Element) -> None:
        element.markdown.body = text
    return fill


def _heading(text: str):
    def fill(element: Element) -> None:
        element.heading.body = text
    return fill


def _page_info(query: str) -> bytes:
    message = ForwardMsg()
    message.page_info_changed.query_string = query
    return _frame(message)


def _finished(status=ForwardMsg.FINISHED_SUCCESSFULLY) -> bytes:
    message = ForwardMsg()
    message.script_finished = status
    return _frame(message)


def _thresholds_view() -> ClientView:
    """A tab on the Thresholds page at τ 0.23: the sidebar's selectbox, the fragment's slider and chart."""
    view = ClientView(base_url=BASE, query_string="dataset=loan%3Ax.csv&tau=0.23&query=42")
    for frame in (_new_session("run-1", THRESHOLDS), _navigation(),
                  _element((1, 0), MAIN, _selectbox),
                  _element((0, 0), THRESHOLDS, _markdown("**Settings:** loan · τ = 0.23")),
                  _element((0, 1), THRESHOLDS, _slider(0.23, set_value=True), fragment=FRAGMENT),
                  _element((0, 2), THRESHOLDS, _chart(TAU_CHART, "Global τ = 0.23"), fragment=FRAGMENT),
                  _page_info("dataset=loan%3Ax.csv&generator=batch&query=42&tau=0.23"), _finished()):
        view.receive(frame)
    return view


# -- the reruns ----------------------------------------------------------------------------------------
def test_the_first_rerun_carries_the_link_and_no_page_and_the_browsers_context():
    view = ClientView(base_url=BASE, query_string="dataset=loan%3Ax.csv&tau=0.23&query=42")
    rerun = view.open_link().rerun_script
    assert rerun.query_string == "dataset=loan%3Ax.csv&tau=0.23&query=42"
    assert (rerun.page_script_hash, rerun.page_name, rerun.fragment_id) == ("", "", "")
    assert len(rerun.widget_states.widgets) == 0 and len(rerun.cached_message_hashes) == 0
    assert rerun.context_info.url == BASE + "/" and rerun.context_info.timezone == "UTC"


def test_moving_the_slider_reruns_its_fragment_with_every_widget_state_and_the_address_query():
    view = _thresholds_view()
    message, value = view.move_slider(TAU_SLIDER, 0.01)
    rerun = message.rerun_script
    assert value == 0.24 and rerun.fragment_id == FRAGMENT and rerun.page_script_hash == THRESHOLDS
    assert rerun.query_string == "dataset=loan%3Ax.csv&generator=batch&query=42&tau=0.23"
    states = {w.id: w for w in rerun.widget_states.widgets}
    assert list(states["slider-id"].double_array_value.data) == [0.24]
    assert states["model-id"].string_value == "Random forest"
    assert rerun.context_info.url == BASE + "/tau-thresholds"
    again = {w.id: w for w in view.move_slider(TAU_SLIDER, 0.01)[0].rerun_script.widget_states.widgets}
    assert list(again["slider-id"].double_array_value.data) == [0.25]


def test_a_page_link_clears_the_query_and_keeps_only_the_sidebars_widgets():
    rerun = _thresholds_view().open_page("Regional explorer").rerun_script
    assert rerun.page_script_hash == REGIONAL and rerun.query_string == "" and rerun.fragment_id == ""
    assert [w.id for w in rerun.widget_states.widgets] == ["model-id"]


def test_a_widget_no_longer_drawn_after_a_full_run_loses_its_state():
    view = _thresholds_view()
    for frame in (_new_session("run-2", THRESHOLDS), _element((1, 0), MAIN, _selectbox), _finished()):
        view.receive(frame)
    assert [w.id for w in view.open_page("Regional explorer").rerun_script.widget_states.widgets] == ["model-id"]
    with pytest.raises(KeyError):  # the slider's state went with it; its label still names it
        view.move_slider(TAU_SLIDER, 0.01)


def test_a_fragment_run_keeps_the_elements_outside_the_fragment():
    view = _thresholds_view()
    for frame in (_new_session("run-2", THRESHOLDS, (FRAGMENT,)),
                  _element((0, 1), THRESHOLDS, _slider(0.24), fragment=FRAGMENT),
                  _finished(ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)):
        view.receive(frame)
    assert {w.id for w in view.move_slider(TAU_SLIDER, 0.01)[0].rerun_script.widget_states.widgets} == {"slider-id", "model-id"}


@pytest.mark.parametrize("fill, expected", [
    (_selectbox, ("string_value", "Random forest")),
    (_slider(0.3), ("double_array_value", [0.10])),
    (_slider(0.3, set_value=True), ("double_array_value", [0.3])),
    (lambda e: (setattr(e.number_input, "id", "n"), setattr(e.number_input, "default", 200.0),
                setattr(e.number_input, "data_type", NumberInput.INT)), ("int_value", 200)),
    (lambda e: (setattr(e.number_input, "id", "n"), setattr(e.number_input, "default", 0.5),
                setattr(e.number_input, "data_type", NumberInput.FLOAT)), ("double_value", 0.5)),
    (lambda e: (setattr(e.text_input, "id", "t"), setattr(e.text_input, "default", "")), ("string_value", "")),
    (lambda e: (setattr(e.text_input, "id", "t"), setattr(e.text_input, "default", "x"),  # the server cleared it
                setattr(e.text_input, "set_value", True)), (None, None)),
    (lambda e: (setattr(e.checkbox, "id", "c"), setattr(e.checkbox, "default", True)), ("bool_value", True)),
    (lambda e: (setattr(e.multiselect, "id", "m"), e.multiselect.options.extend(["a", "b", "c"]),
                e.multiselect.default.extend([0, 2])), ("string_array_value", ["a", "c"])),
    (lambda e: e.file_uploader.SetInParent(), ("file_uploader_state_value", None)),
])
def test_a_widget_starts_with_the_state_its_component_registers(fill, expected):
    element = Element()
    fill(element)
    state = initial_state(element)
    kind, value = expected
    assert state.WhichOneof("value") == kind
    if value is not None:
        got = getattr(state, kind)
        assert (list(got.data) if hasattr(got, "data") else got) == pytest.approx(value)


def test_buttons_have_no_state_and_an_unmodelled_widget_is_refused_only_when_a_rerun_needs_it():
    button = Element()
    button.button.id = "b"
    assert initial_state(button) is None
    view = _thresholds_view()
    view.receive(_element((1, 1), MAIN, lambda e: setattr(e.color_picker, "id", "colour")))
    with pytest.raises(UnsupportedWidget):
        view.open_page("Regional explorer")


# -- charts, τ and leaks ----------------------------------------------------------------------------------
def test_the_chart_at_a_tau_is_recognised_from_its_title_and_subtitle():
    view = _thresholds_view()
    arrived = view.chart_since(TAU_CHART, 23, since=0.0)
    assert arrived is not None
    assert view.chart_since(TAU_CHART, 24, since=0.0) is None and view.chart_since(GLOBAL_CHART, 23, since=0.0) is None
    assert view.chart_since(TAU_CHART, 23, since=arrived + 1) is None


def test_what_a_view_showed_feeds_the_leak_check_and_another_sessions_tau_is_caught():
    view = _thresholds_view()
    view.receive(_element((0, 3), THRESHOLDS, _heading("Region around row 42: 5 cases")))
    view.receive(_element((0, 4), THRESHOLDS, _markdown("The paper's panels: τ = 0.5")))  # not the settings strip
    seen = {key: sorted(values) for key, values in view.seen.items()}
    assert seen == {"taus": ["0.23"], "url_taus": ["0.23"], "url_queries": ["42"], "region_rows": ["42"]}

    plans = plan_sessions(2, 1, pool=[42, 7], seed=0)
    own = [{"taus": [f"{plan.taus[0] / 100:.2f}"], "url_taus": [], "url_queries": [str(plan.query)],
            "region_rows": [str(plan.query)]} for plan in plans]
    assert find_leaks(plans, own) == []
    view.receive(_element((0, 0), THRESHOLDS, _markdown(f"**Settings:** loan · τ = {plans[1].taus[0] / 100:.2f}")))
    leaked = dict(own[0], taus=sorted(view.seen["taus"] | set(own[0]["taus"])))
    assert any(f["another_session"] and f["session"] == 0 for f in find_leaks(plans, [leaked, own[1]]))


# -- the message cache ------------------------------------------------------------------------------------
def test_cached_messages_are_named_in_reruns_answered_from_the_cache_and_age_out():
    view = _thresholds_view()
    view.receive(_element((0, 5), THRESHOLDS, _chart("Sweep", "τ = 0.23"), cacheable_hash="h1"))
    assert list(view.open_page("Thresholds").rerun_script.cached_message_hashes) == ["h1"]

    reference = ForwardMsg(ref_hash="h1")
    reference.metadata.delta_path.extend([0, 6])
    resolved = view.receive(_frame(reference))
    assert resolved.delta.new_element.plotly_chart.spec and list(resolved.metadata.delta_path) == [0, 6]
    with pytest.raises(ProtocolError):
        view.receive(_frame(ForwardMsg(ref_hash="never-sent")))

    for _ in range(3):  # unused for more than max_cached_message_age (2) runs
        view.receive(_finished())
    assert "h1" not in view.cache


def _recording() -> list[tuple[bytes, bytes]]:
    data, frames, at = gzip.decompress(RECORDING.read_bytes()), [], 0
    while at < len(data):
        (length,) = struct.unpack(">I", data[at + 1:at + 5])
        frames.append((data[at:at + 1], data[at + 5:at + 5 + length]))
        at += 5 + length
    return frames


def _same_rerun(message: BackMsg) -> BackMsg:
    """The rerun with its widget states in id order: the server reads them as a set, keyed by id."""
    canonical = BackMsg.FromString(message.SerializeToString())
    widgets = sorted((type(w).FromString(w.SerializeToString()) for w in canonical.rerun_script.widget_states.widgets),
                     key=lambda w: w.id)
    del canonical.rerun_script.widget_states.widgets[:]
    canonical.rerun_script.widget_states.widgets.extend(widgets)
    return canonical


def test_the_reruns_built_from_a_chromium_sessions_frames_are_the_ones_chromium_sent():
    frames = _recording()
    sent = [BackMsg.FromString(payload) for direction, payload in frames if direction == b">"]
    view = ClientView(base_url=sent[0].rerun_script.context_info.url.rstrip("/"),
                      query_string=sent[0].rerun_script.query_string)
    steps = iter([view.open_link, lambda: view.open_page("Thresholds"), lambda: view.move_slider(TAU_SLIDER, 0.01)[0],
                  lambda: view.move_slider(TAU_SLIDER, 0.01)[0], lambda: view.open_page("Regional explorer")])
    built = []
    for direction, payload in frames:
        if direction == b">":
            built.append(next(steps)())
        else:
            view.receive(payload)
    assert len(built) == len(sent) == 5
    for ours, chromiums in zip(built, sent, strict=True):
        assert _same_rerun(ours) == _same_rerun(chromiums)
    assert {key: sorted(values) for key, values in view.seen.items()} == {
        "taus": ["0.23", "0.24", "0.25"], "url_taus": ["0.23", "0.24", "0.25"], "url_queries": ["42"], "region_rows": ["42"]}


# -- a real run ---------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_two_protocol_sessions_against_the_app_server_record_every_view_and_change_and_leak_nothing(loan_path, tmp_path):
    out = tmp_path / "sessions.json"
    status = main(["--clients", "protocol", "--sessions", "2", "--changes", "2", "--data-dir", str(loan_path.parent),
                   "--out", str(out), "--timeout", "120"])
    result = json.loads(out.read_text())
    assert status == 0 and result["clients"] == "protocol" and not result["leak"] and result["findings"] == []
    planned = [SessionPlan(tuple(round(float(t) * 100) for t in s["taus"]), s["query"]) for s in result["sessions"]]
    assert [p.taus for p in planned] == [p.taus for p in plan_sessions(2, 2, pool=[0, 1])]  # τ do not depend on the pool
    for session in result["sessions"]:
        assert session["error"] is None and session["first_view_s"] > 0 and session["first_view_finished_s"] > 0
        assert len(session["tau_changes_s"]) == 2 and all(t > 0 for t in session["tau_changes_s"])
        assert session["seen"]["taus"] == session["taus"] == session["seen"]["url_taus"]
        assert session["seen"]["region_rows"] == [str(session["query"])]
    assert len({s["query"] for s in result["sessions"]}) == 2 and result["peak_rss_bytes"] > 0

    # A check that could not fail would prove nothing: session 0 shown session 1's τ is a leak.
    seen = [s["seen"] for s in result["sessions"]]
    seen[0] = dict(seen[0], taus=[*seen[0]["taus"], result["sessions"][1]["taus"][1]])
    assert [f for f in find_leaks(planned, seen) if f["another_session"]] == [
        {"session": 0, "what": "τ shown", "value": result["sessions"][1]["taus"][1], "another_session": True}]


def test_tau_is_read_whether_a_page_says_it_in_words_or_in_the_papers_terms():
    from benchmarks.protocol_client import taus_in

    assert taus_in("loan · τ = 0.23") == {"0.23"}
    assert taus_in("loan · changes under 23% of a number's range ignored") == {"0.23"}
    assert taus_in("changes under 10% of a number's range ignored (2 features with their own)") == {"0.10"}
    assert taus_in("no threshold here") == set()
