"""A session spoken in Streamlit 1.67's websocket protocol, as the browser's frontend speaks it, without a browser.

The load benchmark (bench_sessions.py, ``--clients protocol``) uses it to measure the app server without
the CPU ten Chromiums take on the same machine. What the frontend does with the server's messages is
mirrored here as far as it changes what the frontend sends back (read from Streamlit 1.67's own
frontend bundle, ``streamlit/static/static/js/index.*.js``, and checked against a real Chromium
session's frames):

- **every rerun** (``sendRerunBackMsg``) carries the address bar's query string, the page's script hash
  (none on the very first run, which names the page by its path instead), the widget states, the
  fragment id when a widget in a fragment changed, the hashes of the messages it has cached and the
  browser's context (time zone, locale, the page's address without its query, colour scheme);
- **a page link** (``onPageChange``) sends the new page's hash, an empty query string (the frontend
  clears the address's parameters on a page change) and only the states of the widgets the main
  script (``app.py``: the sidebar) drew;
- **widget states**: a widget gets its state when it first appears, from the value the server set
  or else from its default, exactly as each widget's React component does; the server may set it
  again (``set_value``); after a successful run the states of widgets no longer drawn are dropped;
- **the message cache** (``ForwardMessageCache``): messages the server marks cacheable are kept by
  hash, their hashes go with every rerun, a reference (``ref_hash``) is answered from the cache, and
  after each finished run messages older than the server's ``max_cached_message_age`` runs are
  dropped (only those of the rerun fragment after a fragment run).

The frontend's JavaScript loading, React rendering and Plotly drawing are left out: that is the point.
A widget whose state this module does not know how to derive is refused (``UnsupportedWidget``) when
a rerun would have to carry it, rather than sent wrong.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Dataframe_pb2 import Dataframe
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
from websockets.typing import Subprotocol

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

TAU_TEXT = re.compile(r"τ = (\d+(?:\.\d+)?)")
#: τ as the pages say it in plain words (the paper's "τ = 0.10" only with the sidebar's terms switch on).
TAU_WORDS = re.compile(r"changes under (\d+(?:\.\d+)?)% of a number's range ignored")


def taus_in(text: str) -> set[str]:
    """Every τ a text states, as "0.10", whether it says "τ = 0.10" or "changes under 10% of a number's range ignored"."""
    return {*TAU_TEXT.findall(text), *(f"{float(share) / 100:.2f}" for share in TAU_WORDS.findall(text))}
REGION_HEADING = re.compile(r"^Region around row (\d+)")
SETTINGS_STRIP = "Settings:"  # the strip atop each page that states the session's data, model and τ
#: The browser these sessions stand for (the context the Chromium sessions report).
BROWSER_CONTEXT = {"timezone": "UTC", "timezone_offset": 0, "locale": "en-US", "is_embedded": False,
                   "color_scheme": "light"}
#: Elements that have an id but no state until used: buttons register a trigger when clicked, charts and
#: read-only tables a selection when one is made (none is, here).
STATELESS_WIDGETS = {"button", "download_button", "link_button", "page_link", "plotly_chart"}
FINISHED = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}


class ProtocolError(RuntimeError):
    """The server sent what the frontend would not expect (a reference to a message never cached)."""


class UnsupportedWidget(RuntimeError):
    """A rerun would carry the state of a widget whose frontend value this module does not derive."""


def initial_state(element) -> WidgetState | None:
    """The state a widget's React component registers when it appears (or when the server sets its value).

    Each rule is the component's ``getDefaultStateFromProto`` / ``getCurrStateFromProto`` in Streamlit
    1.67's frontend bundle (Selectbox, Radio, NumberInput, TextInput, TextArea, Checkbox, Slider, Multiselect).

    None: the widget has no state until it is used (a button). Raises UnsupportedWidget for a widget
    whose rule is not written here.
    """
    kind = element.WhichOneof("type")
    widget = getattr(element, kind)
    if kind in STATELESS_WIDGETS or (kind == "dataframe" and widget.editing_mode == Dataframe.READ_ONLY):
        return None
    state = WidgetState(id=widget.id)
    if kind in ("selectbox", "radio"):  # the option's text; the server's raw value when it set one
        if widget.set_value:
            if widget.HasField("raw_value"):
                state.string_value = widget.raw_value
        elif widget.options and widget.HasField("default"):
            state.string_value = widget.options[widget.default]
    elif kind == "number_input":
        value = (widget.value if widget.HasField("value") else widget.default if widget.HasField("default") else None) \
            if widget.set_value else (widget.default if widget.HasField("default") else None)
        if value is not None:
            if widget.data_type == NumberInput.INT:
                state.int_value = int(value)
            else:
                state.double_value = value
    elif kind in ("text_input", "text_area"):  # the server's value when it set one (none: empty), else the default
        field_name = "value" if widget.set_value else "default"
        if widget.HasField(field_name):
            state.string_value = getattr(widget, field_name)
    elif kind == "checkbox":
        state.bool_value = widget.value if widget.set_value else widget.default
    elif kind == "slider":
        if widget.options:  # a select_slider: the options' texts
            state.string_array_value.data.extend(
                widget.raw_value if widget.set_value and widget.raw_value else [widget.options[int(i)] for i in widget.default])
        else:
            state.double_array_value.data.extend(widget.value if widget.set_value else widget.default)
    elif kind == "multiselect":
        state.string_array_value.data.extend(
            widget.raw_values if widget.set_value else [widget.options[i] for i in widget.default])
    elif kind == "file_uploader":
        state.file_uploader_state_value.SetInParent()  # no file chosen
    else:
        raise UnsupportedWidget(f"the frontend's state of a {kind} widget is not modelled here")
    return state


def plotly_title(element) -> tuple[str, str] | None:
    """A Plotly chart's (title, subtitle); None for any other element."""
    if element.WhichOneof("type") != "plotly_chart":
        return None
    title = json.loads(element.plotly_chart.spec).get("layout", {}).get("title") or {}
    return str(title.get("text") or ""), str((title.get("subtitle") or {}).get("text") or "")


def element_text(element) -> str:
    """The text a text-like element shows (markdown, captions, headings, alerts, plain text); "" for others."""
    kind = element.WhichOneof("type")
    if kind in ("markdown", "heading", "text", "alert"):
        return getattr(element, kind).body
    return ""


@dataclass
class _Drawn:
    """One element the frontend holds: which run drew it, in which fragment, for which script, its widget id."""

    run_id: str
    fragment_id: str
    script_hash: str
    widget_id: str | None


@dataclass
class ClientView:
    """What a browser tab holds of one session, as far as it shapes what the tab sends; and what it showed.

    ``seen`` has the same keys and sources as the browser mode's page watcher: ``taus`` (every τ the
    settings strip or a chart's subtitle shows), ``url_taus`` and ``url_queries`` (the address's τ and query each time the
    server set it), ``region_rows`` (the Regional explorer's "Region around row N").
    """

    base_url: str
    query_string: str
    pathname: str = "/"
    main_script_hash: str = ""
    page_hash: str = ""
    max_cached_age: int = 2
    pages: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (script hash, url path)
    cache: dict[str, tuple[bytes, int]] = field(default_factory=dict)  # hash -> (message, run count at last use)
    runs_counted: int = 0
    run_id: str = ""
    run_fragments: tuple[str, ...] = ()
    drawn: dict[tuple[int, ...], _Drawn] = field(default_factory=dict)
    states: dict[str, WidgetState | UnsupportedWidget] = field(default_factory=dict)
    widgets: dict[str, tuple[str, Element]] = field(default_factory=dict)  # label -> (widget id, element)
    widget_fragment: dict[str, str] = field(default_factory=dict)
    charts: list[tuple[float, str, str]] = field(default_factory=list)  # (arrival, title, subtitle)
    finished: list[tuple[float, int]] = field(default_factory=list)  # (arrival, status)
    seen: dict[str, set[str]] = field(default_factory=lambda: {k: set() for k in
                                                              ("taus", "url_taus", "url_queries", "region_rows")})

    def __post_init__(self) -> None:
        self._see_address(self.query_string)

    # -- what the tab sends ---------------------------------------------------------------------------
    def rerun(self, widget_states: WidgetStates, *, fragment_id: str = "", page_hash: str = "") -> BackMsg:
        """``sendRerunBackMsg``: the rerun the frontend sends (see the module's docstring)."""
        page_name = ""
        if page_hash:
            if page_hash != self.page_hash:  # a page change clears the address's parameters
                self.query_string = ""
        elif self.page_hash:
            page_hash = self.page_hash
        else:  # the first run names its page by the address's path
            page_name = self.pathname.strip("/")
        message = BackMsg()
        rerun = message.rerun_script
        rerun.query_string = self.query_string
        rerun.widget_states.CopyFrom(widget_states)
        rerun.page_script_hash = page_hash
        rerun.page_name = page_name
        rerun.fragment_id = fragment_id
        rerun.cached_message_hashes.extend(self.cache)
        rerun.context_info.url = self.base_url + self.pathname
        for key, value in BROWSER_CONTEXT.items():
            setattr(rerun.context_info, key, value)
        return message

    def open_link(self) -> BackMsg:
        """The first rerun, when the tab has loaded the link."""
        return self.rerun(WidgetStates())

    def open_page(self, name: str) -> BackMsg:
        """A click on the navigation's link to page ``name``: only the main script's widgets keep their states."""
        page_hash, _ = self.pages[name]
        main_widgets = {d.widget_id for d in self.drawn.values() if d.widget_id and d.script_hash == self.main_script_hash}
        return self.rerun(self._states(main_widgets), page_hash=page_hash)

    def move_slider(self, label: str, step: float) -> tuple[BackMsg, float]:
        """The rerun a slider moved by ``step`` sends (from its fragment, if it has one); also its new value."""
        widget_id, element = self.widgets[label]
        current = self.states[widget_id]
        if isinstance(current, UnsupportedWidget):
            raise current
        digits = max(0, -int(f"{element.slider.step:e}".split("e")[1]))  # snapped to the slider's step, as the slider does
        value = round(current.double_array_value.data[0] + step, digits)
        moved = WidgetState(id=widget_id)
        moved.double_array_value.data.append(value)
        self.states[widget_id] = moved
        return self.rerun(self._states(set(self.states)), fragment_id=self.widget_fragment.get(widget_id, "")), value

    def _states(self, widget_ids: set[str]) -> WidgetStates:
        states = WidgetStates()
        drawn_order = [d.widget_id for _, d in sorted(self.drawn.items()) if d.widget_id]
        for widget_id in (i for i in drawn_order if i in widget_ids and i in self.states):
            state = self.states[widget_id]
            if isinstance(state, UnsupportedWidget):
                raise state
            states.widgets.append(state)
        return states

    # -- what the tab receives ------------------------------------------------------------------------
    def receive(self, payload: bytes, arrival: float | None = None) -> ForwardMsg:
        """Decode one frame as the frontend does (answering a reference from the cache) and take it in."""
        arrival = time.perf_counter() if arrival is None else arrival
        message = ForwardMsg()
        message.ParseFromString(payload)
        if message.WhichOneof("type") == "ref_hash":
            cached = self.cache.get(message.ref_hash)
            if cached is None:
                raise ProtocolError(f"the server referred to message {message.ref_hash}, which this client never cached")
            self.cache[message.ref_hash] = (cached[0], self.runs_counted)
            resolved = ForwardMsg()
            resolved.ParseFromString(cached[0])
            resolved.metadata.CopyFrom(message.metadata)
            message = resolved
        elif message.metadata.cacheable and message.hash:
            cached = self.cache.get(message.hash)
            self.cache[message.hash] = (cached[0] if cached else payload, self.runs_counted)
        self._take(message, arrival)
        return message

    def _take(self, message: ForwardMsg, arrival: float) -> None:
        kind = message.WhichOneof("type")
        if kind == "new_session":
            session = message.new_session
            self.run_id = message.metadata.run.script_run_id
            self.run_fragments = tuple(message.metadata.run.fragment_ids)
            self.main_script_hash = session.main_script_hash
            self.max_cached_age = session.config.max_cached_message_age
            if session.page_script_hash != self.page_hash and not self.run_fragments:
                # a new page: the frontend keeps only the main script's elements
                self.drawn = {p: d for p, d in self.drawn.items() if d.script_hash == self.main_script_hash}
            self.page_hash = session.page_script_hash
        elif kind == "navigation":
            self.pages = {p.page_name: (p.page_script_hash, p.url_pathname) for p in message.navigation.app_pages}
            path = next((url for page_hash, url in self.pages.values() if page_hash == self.page_hash), None)
            if path is not None:
                self.pathname = "/" + path
        elif kind == "page_info_changed":
            self.query_string = message.page_info_changed.query_string
            self._see_address(self.query_string)
        elif kind == "delta" and message.delta.WhichOneof("type") in ("new_element", "add_block"):
            self._draw(message, arrival)
        elif kind == "script_finished":
            self._finish(message.script_finished, arrival)

    def _draw(self, message: ForwardMsg, arrival: float) -> None:
        delta = message.delta
        path = tuple(message.metadata.delta_path)
        widget_id = None
        if delta.WhichOneof("type") == "new_element":
            element = delta.new_element
            kind = element.WhichOneof("type")
            widget_id = (getattr(getattr(element, kind), "id", "") or None) if kind else None
            if widget_id:
                self._mount(widget_id, element, delta.fragment_id)
            chart = plotly_title(element)
            if chart:
                self.charts.append((arrival, *chart))
                self.seen["taus"].update(taus_in(chart[1]))
            text = element_text(element)
            if SETTINGS_STRIP in text:  # the session's own settings, as the browser mode reads them
                self.seen["taus"].update(taus_in(text))
            if kind == "heading" and (row := REGION_HEADING.match(text)):
                self.seen["region_rows"].add(row[1])
        self.drawn[path] = _Drawn(self.run_id, delta.fragment_id, message.metadata.active_script_hash, widget_id)

    def _mount(self, widget_id: str, element, fragment_id: str) -> None:
        widget = getattr(element, element.WhichOneof("type"))
        if widget_id not in self.states or getattr(widget, "set_value", False):
            state: WidgetState | UnsupportedWidget | None
            try:
                state = initial_state(element)
            except UnsupportedWidget as unsupported:  # refused only if a rerun must carry it
                state = unsupported
            if state is not None:
                self.states[widget_id] = state
        label = getattr(widget, "label", "")
        if label:
            self.widgets[label] = (widget_id, element)
        self.widget_fragment[widget_id] = fragment_id

    def _finish(self, status: int, arrival: float) -> None:
        self.finished.append((arrival, status))
        if status != ForwardMsg.FINISHED_EARLY_FOR_RERUN:  # the cache ages by one run
            self.runs_counted += 1
            for message_hash, (payload, used) in list(self.cache.items()):
                if self.run_fragments and _fragment_of(payload) not in self.run_fragments:
                    continue
                if self.runs_counted - used > self.max_cached_age:
                    del self.cache[message_hash]
        if status in FINISHED:  # elements this run did not draw are gone, and their widgets' states with them
            self.drawn = {p: d for p, d in self.drawn.items()
                          if d.run_id == self.run_id or (self.run_fragments and d.fragment_id not in self.run_fragments)}
            active = {d.widget_id for d in self.drawn.values() if d.widget_id}
            self.states = {i: s for i, s in self.states.items() if i in active}

    def _see_address(self, query_string: str) -> None:
        params = parse_qs(query_string)
        if "dataset" in params:
            self.seen["url_taus"].add(params.get("tau", ["default"])[0])
        self.seen["url_queries"].update(params.get("query", []))

    # -- what the benchmark waits for -----------------------------------------------------------------
    def chart_since(self, title: str, tau: int, since: float) -> float | None:
        """When the first chart titled ``title`` with τ (hundredths) in its subtitle arrived after ``since``."""
        shown = f"{tau / 100:.2f}"
        return next((t for t, text, subtitle in self.charts
                     if t >= since and title in text and shown in taus_in(subtitle)), None)

    def finished_since(self, since: float) -> float | None:
        """When a run finished (not one cut short for a rerun) after ``since``."""
        return next((t for t, status in self.finished if t >= since and status != ForwardMsg.FINISHED_EARLY_FOR_RERUN), None)


def _fragment_of(payload: bytes) -> str:
    message = ForwardMsg()
    message.ParseFromString(payload)
    return message.delta.fragment_id


def websocket_url(base_url: str) -> str:
    parts = urlsplit(base_url)
    return f"{'wss' if parts.scheme == 'https' else 'ws'}://{parts.netloc}{parts.path.rstrip('/')}/_stcore/stream"


class ProtocolSession:
    """One tab's websocket to a running app, driven step by step (``async with ProtocolSession(url, query) as s``).

    ``run(rerun)`` sends a rerun and reads frames until that run finished; every message is kept in
    ``messages`` (decoded, references resolved), so a test can look for what the page showed.
    """

    def __init__(self, base_url: str, query_string: str = ""):
        self.view = ClientView(base_url=base_url, query_string=query_string)
        self.messages: list[ForwardMsg] = []
        self.largest_frame = 0
        self._url = base_url
        self._socket: ClientConnection | None = None

    @property
    def socket(self) -> ClientConnection:
        """The open websocket (only inside ``async with``)."""
        if self._socket is None:
            raise RuntimeError("A ProtocolSession talks to the app only inside `async with`.")
        return self._socket

    async def __aenter__(self) -> ProtocolSession:
        from websockets.asyncio.client import connect

        self._socket = await connect(websocket_url(self._url), subprotocols=[Subprotocol("streamlit")], max_size=None)
        return self

    async def __aexit__(self, *exc) -> None:
        await self.socket.close()

    async def send(self, message: BackMsg) -> None:
        await self.socket.send(message.SerializeToString())

    async def receive(self) -> ForwardMsg:
        """The next message from the server (kept in ``messages``)."""
        payload = await self.socket.recv(decode=False)
        self.largest_frame = max(self.largest_frame, len(payload))
        self.messages.append(self.view.receive(payload))
        return self.messages[-1]

    async def run(self, rerun: BackMsg, timeout: float = 120.0) -> list[ForwardMsg]:
        """Send ``rerun`` and read until its run finished (not cut short); the messages it brought."""
        start = time.perf_counter()
        first = len(self.messages)
        await self.send(rerun)
        async with asyncio.timeout(timeout):
            while self.view.finished_since(start) is None:
                await self.receive()
        return self.messages[first:]


def shown_texts(messages, kind: str) -> list[str]:
    """The texts of the elements of ``kind`` (``"progress"``, ``"exception"``, ``"alert"``, ...) among ``messages``."""
    texts = []
    for message in messages:
        if message.WhichOneof("type") == "delta" and message.delta.WhichOneof("type") == "new_element":
            element = message.delta.new_element
            if element.WhichOneof("type") == kind:
                inner = getattr(element, kind)
                texts.append(getattr(inner, "text", "") or getattr(inner, "body", "") or getattr(inner, "message", ""))
    return texts
