"""Concurrent sessions against one app server: first view, τ-change time, server memory, leakage.

One ``streamlit run app.py`` (started here, on a fresh counterfactual cache) serves N sessions at once.
Each is a Chromium session (``--clients browser``, the default: Playwright, Debian's chromium, one
browser context per session) or a light websocket client that speaks Streamlit's protocol as the
browser's frontend does (``--clients protocol``, benchmarks/protocol_client.py): the server does the
same work and sends the same messages, but no browser loads code, renders or draws, so on one machine
the server is measured without ten Chromiums' CPU. All open the loan data through a link, each with
its own τ and query, and all start together:

- **first view**: from opening the link until the Global page's chart is drawn at the session's τ
  (the server reads the file, trains the forest and generates, once or more, for everyone at once);
- **τ change**: on the Thresholds page the "Global τ" slider is moved one step (0.01) with the
  keyboard, as a person does; timed from the key press until the settings strip and the chart
  "Global importance at the current τ" both show the new τ. Each session makes M changes, each to
  a τ no session had before (no cached result helps);
- **protocol clients**: the same steps as rerun messages; each time runs from sending the rerun until the
  frame carrying the chart at the session's τ arrived (the first view also until its run finished), after
  fetching the page and the files it names as a browser would. The server's whole part, no drawing;
- **the server's part**: from the browser's request (the first websocket frame it sends after the link is
  opened or the key pressed) until the frame carrying the chart at the session's τ reached it (decoded here
  from Streamlit's messages): without the browser's loading, reacting and drawing. With ``--pin-server`` the server runs on core 0 only and the browsers and this driver on
  the other cores, so the server's figures stand for browsers on other machines;
- **peak server memory**: the resident memory (RSS) of the server's process tree, sampled every 0.25 s;
- **leakage**: every page watches itself (a MutationObserver) and records every τ its settings strip
  and chart subtitles ever show, the τ and query its address bar ever holds, and at the end the
  query row the Regional explorer shows. A value that belongs to another session is a leak. A protocol
  client records the same from the messages: the settings strip's and the chart subtitles' τ, the query
  strings the server sets in the address, the Regional explorer's "Region around row N" heading.

Queries are rows the app's default model (random forest, seed 0) predicts undesirable, found here
with the same library call the app uses, so the Regional explorer keeps each session's own.

Prints a Markdown table and writes JSON (default benchmarks/results/sessions.json).

    FLEX_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_sessions.py [--clients browser|protocol]
        [--sessions 10] [--changes 5] [--port PORT] [--data-dir DIR] [--out FILE] [--timeout SECONDS] [--pin-server] [--browsers-yield]
        [--url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
from google.protobuf.message import DecodeError
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.typing import Subprotocol

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import flex_core as fc
from benchmarks.protocol_client import ClientView, plotly_title, websocket_url
from flex_core.importance import DEFAULT_TAU

REPO = Path(__file__).resolve().parents[1]

LOAN_FILE = "loan_approval_dataset.csv"
FIRST_TAU = 11  # hundredths: the sessions' τ start above the default 0.10, so a default shown is never anyone's
TAU_SPAN = 90  # hundredths available from FIRST_TAU up to 1.00
MEMORY_EVERY = 0.25  # seconds between samples of the server's memory
BROWSER_CONNECTIONS = 6  # a browser's parallel HTTP/1.1 connections to one host (Chromium's limit)

#: Runs in every page before its scripts: records what the page ever shows (see the module's docstring).
WATCH_PAGE = r"""
(() => {
  const seen = {taus: new Set(), url_taus: new Set(), url_queries: new Set(), region_rows: new Set()};
  window.__flexSeen = seen;
  const taus = text => { for (const m of (text || "").matchAll(/τ = (\d+(?:\.\d+)?)/g)) seen.taus.add(m[1]); };
  const look = () => {
    for (const el of document.querySelectorAll("[data-testid='stCaptionContainer']")) {
      if ((el.textContent || "").includes("Settings:")) taus(el.textContent);
    }
    for (const gd of document.querySelectorAll(".js-plotly-plot")) {
      const subtitle = gd.layout && gd.layout.title && gd.layout.title.subtitle;
      if (subtitle) taus(String(subtitle.text || ""));
    }
    const params = new URLSearchParams(location.search);
    if (params.has("dataset")) seen.url_taus.add(params.get("tau") || "default");
    if (params.has("query")) seen.url_queries.add(params.get("query"));
    for (const h of document.querySelectorAll("h2")) {
      const m = /^Region around row (\d+)/.exec(h.textContent || "");
      if (m) seen.region_rows.add(m[1]);
    }
  };
  new MutationObserver(look).observe(document, {subtree: true, childList: true, characterData: true});
})();
"""

#: True when the settings strip and the chart whose title holds ``title`` both show ``tau`` (e.g. "τ = 0.12") and the chart has bars.
CHART_AT_TAU = r"""
([title, tau]) => {
  const strip = [...document.querySelectorAll("[data-testid='stCaptionContainer']")]
    .find(el => (el.textContent || "").includes("Settings:"));
  if (!strip || !strip.textContent.includes(tau)) return false;
  return [...document.querySelectorAll(".js-plotly-plot")].some(gd => {
    const t = gd.layout && gd.layout.title;
    return t && String(t.text || "").includes(title) && String((t.subtitle || {}).text || "").includes(tau)
      && gd.querySelector(".barlayer .point path") !== null;
  });
}
"""
GLOBAL_CHART = "Global feature importance from"
TAU_CHART = "Global importance at the current τ"
TAU_SLIDER = "Global τ (all continuous features)"
IDLE = "!document.querySelector('[data-testid=\"stStatusWidget\"]')"


# -- the pure parts: the plan, the statistics, the leak check ------------------------------------------
@dataclass(frozen=True)
class SessionPlan:
    """One session's settings: its τ values in hundredths (the link's, then one per change) and its query row."""

    taus: tuple[int, ...]
    query: int


def plan_sessions(n_sessions: int, changes: int, pool: Sequence[int] | np.ndarray, seed: int = 0) -> list[SessionPlan]:
    """τ values no two sessions share (each session walks up from its own start, 0.01 a change), distinct queries."""
    if n_sessions < 1 or changes < 1:
        raise fc.ConfigError("--sessions and --changes must be at least 1.")
    if n_sessions * (changes + 1) > TAU_SPAN:
        raise fc.ConfigError(f"{n_sessions} sessions x {changes + 1} τ values each do not fit between 0.11 and 1.00 "
                             "in steps of 0.01: use fewer sessions or changes.")
    if len(pool) < n_sessions:
        raise fc.ConfigError(f"Only {len(pool)} rows are predicted undesirable: too few for {n_sessions} distinct queries.")
    queries = np.random.default_rng(seed).choice(np.asarray(pool), n_sessions, replace=False)
    return [SessionPlan(tuple(FIRST_TAU + i * (changes + 1) + j for j in range(changes + 1)), int(q))
            for i, q in enumerate(queries)]


def spread(seconds: Sequence[float]) -> dict:
    """The number of times, their p50 and p95 (linear interpolation) and their maximum; None when there are none."""
    if not seconds:
        return {"n": 0, "p50": None, "p95": None, "max": None}
    values = np.asarray(seconds, dtype=float)
    return {"n": len(values), "p50": float(np.percentile(values, 50)), "p95": float(np.percentile(values, 95)),
            "max": float(values.max())}


def hundredths(text: str) -> int:
    """A τ as the page shows it ("0.12", or "default" for a link without τ) in hundredths."""
    return round((DEFAULT_TAU if text == "default" else float(text)) * 100)


def find_leaks(plans: Sequence[SessionPlan], seen: Sequence[dict]) -> list[dict]:
    """Every value a session showed that is not its own; ``another_session`` says whether it is another's (a leak).

    ``seen[i]`` holds what session i's page ever showed: ``taus`` and ``url_taus`` (text such as "0.12"),
    ``url_queries`` and ``region_rows`` (row numbers as text).
    """
    findings = []
    for i, (plan, shown) in enumerate(zip(plans, seen, strict=True)):
        others = [p for j, p in enumerate(plans) if j != i]
        checks = (
            ("τ shown", {hundredths(t) for t in shown.get("taus", ())}, set(plan.taus), {t for p in others for t in p.taus}),
            ("τ in the address", {hundredths(t) for t in shown.get("url_taus", ())}, set(plan.taus),
             {t for p in others for t in p.taus}),
            ("query in the address", {int(q) for q in shown.get("url_queries", ())}, {plan.query}, {p.query for p in others}),
            ("region's row", {int(r) for r in shown.get("region_rows", ())}, {plan.query}, {p.query for p in others}),
        )
        for what, values, own, theirs in checks:
            for value in sorted(values - own):
                shown_value = f"{value / 100:.2f}" if what.startswith("τ") else value
                findings.append({"session": i, "what": what, "value": shown_value, "another_session": value in theirs})
    return findings


# -- the server's memory -------------------------------------------------------------------------------
class MemorySampler(threading.Thread):
    """Samples the resident memory of a process and its children until stopped; keeps the peak.

    Also keeps the CPU time the server's process tree used, the CPU time of the clients (this process and
    its other children: Playwright's driver and Chromium, or the protocol clients) and the machine's busy
    CPU time over the same span: the clients run on the same machine, so the server's share says how much
    of a slow τ change is the server's work, and what neither used is another program's.
    """

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self.first = pid, 0, None
        self.server_cpu_s, self.clients_cpu_s, self.machine_busy_s, self.wall_s = 0.0, 0.0, 0.0, 0.0
        self._done = threading.Event()

    def run(self) -> None:
        import psutil

        root, driver = psutil.Process(self.pid), psutil.Process()
        machine_start, wall_start = _busy(psutil.cpu_times()), time.perf_counter()
        driver_start = sum(driver.cpu_times()[:2])  # what this process spent before (finding the queries) is not the clients'
        while not self._done.is_set():
            try:
                tree = [root, *root.children(recursive=True)]
                total = sum(p.memory_info().rss for p in tree)
                self.server_cpu_s = max(self.server_cpu_s, sum(sum(p.cpu_times()[:2]) for p in tree))
                server_pids = {p.pid for p in tree}
                clients = [driver, *(p for p in driver.children(recursive=True) if p.pid not in server_pids)]
                self.clients_cpu_s = max(self.clients_cpu_s, sum(sum(p.cpu_times()[:2]) for p in clients) - driver_start)
            except psutil.Error:  # a child ended between the listing and the reading: the next sample counts
                total = 0
            self.first = total if self.first is None else self.first
            self.peak = max(self.peak, total)
            self.machine_busy_s = _busy(psutil.cpu_times()) - machine_start
            self.wall_s = time.perf_counter() - wall_start
            self._done.wait(MEMORY_EVERY)

    def stop(self) -> None:
        self._done.set()
        self.join()


def _busy(times) -> float:
    """CPU seconds the machine spent on anything but idling and waiting for disk."""
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


# -- the sessions ----------------------------------------------------------------------------------
async def _idle(page, timeout_ms: float) -> None:
    """Until Streamlit has finished the current run (its status widget disappears)."""
    await page.wait_for_timeout(300)
    await page.wait_for_function(IDLE, timeout=timeout_ms)


async def _chart_at(page, title: str, tau: int, timeout_ms: float) -> None:
    await page.wait_for_function(CHART_AT_TAU, arg=[title, f"τ = {tau / 100:.2f}"], polling=50, timeout=timeout_ms)


class ChartArrivals:
    """One page's websocket traffic: when it sent a frame, and when each Plotly chart (title, subtitle) arrived."""

    def __init__(self, page):
        self.charts: list[tuple[float, str, str]] = []
        self.sent: list[float] = []
        page.on("websocket", self._watch)

    def _watch(self, socket) -> None:
        socket.on("framereceived", self._frame)
        socket.on("framesent", lambda _: self.sent.append(time.perf_counter()))

    def _frame(self, payload) -> None:
        if isinstance(payload, str):
            return
        message = ForwardMsg()
        try:
            message.ParseFromString(payload)
        except DecodeError:
            return
        if message.WhichOneof("type") == "delta" and (chart := plotly_title(message.delta.new_element)):
            self.charts.append((time.perf_counter(), *chart))

    def server_seconds(self, title: str, tau: int, since: float) -> float | None:
        """From the first frame sent after ``since`` until the first chart titled ``title`` at τ arrived (None: it never did)."""
        shown = f"τ = {tau / 100:.2f}"
        asked = next((t for t in self.sent if t >= since), None)
        answered = next((t for t, text, subtitle in self.charts if t >= since and title in text and shown in subtitle), None)
        return None if asked is None or answered is None else answered - asked


def _new_record(plan: SessionPlan) -> dict:
    """One session's results, the same fields whichever client drives it."""
    return {"taus": [f"{t / 100:.2f}" for t in plan.taus], "query": plan.query, "first_view_s": None,
            "tau_changes_s": [], "first_view_server_s": None, "tau_changes_server_s": [], "error": None}


def _link(url: str, loan: Path, plan: SessionPlan) -> str:
    """The session's link: the loan data, its first τ and its query."""
    return f"{url}/?" + urlencode({"dataset": f"loan:{loan}", "tau": f"{plan.taus[0] / 100:.2f}", "query": plan.query})


def _failure(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


async def one_session(browser, url: str, loan: Path, plan: SessionPlan, timeout_ms: float) -> dict:
    """Open the session's link, wait for its first view, make its τ changes, open the Regional explorer."""
    record = _new_record(plan)
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    await context.add_init_script(WATCH_PAGE)
    page = await context.new_page()
    page.set_default_timeout(timeout_ms)
    arrivals = ChartArrivals(page)
    try:
        start = time.perf_counter()
        await page.goto(_link(url, loan, plan), wait_until="domcontentloaded")
        await _chart_at(page, GLOBAL_CHART, plan.taus[0], timeout_ms)
        record["first_view_s"] = time.perf_counter() - start
        record["first_view_server_s"] = arrivals.server_seconds(GLOBAL_CHART, plan.taus[0], start)
        await _idle(page, timeout_ms)
        await page.get_by_role("link", name="Thresholds", exact=True).click()
        await _chart_at(page, TAU_CHART, plan.taus[0], timeout_ms)
        await _idle(page, timeout_ms)
        slider = page.get_by_role("slider", name=TAU_SLIDER)
        for tau in plan.taus[1:]:
            await slider.focus()
            start = time.perf_counter()
            await slider.press("ArrowRight")
            await _chart_at(page, TAU_CHART, tau, timeout_ms)
            record["tau_changes_s"].append(time.perf_counter() - start)
            record["tau_changes_server_s"].append(arrivals.server_seconds(TAU_CHART, tau, start))
            await _idle(page, timeout_ms)
        await page.get_by_role("link", name="Regional explorer", exact=True).click()
        await page.get_by_role("heading", name="Region around row", exact=False).first.wait_for()
        await _idle(page, timeout_ms)
    except Exception as exc:  # one session's failure is reported with the others' results, not raised
        record["error"] = _failure(exc)
    try:
        record["seen"] = await page.evaluate("() => Object.fromEntries(Object.entries(window.__flexSeen || {})"
                                             ".map(([k, v]) => [k, [...v]]))")
    except Exception as exc:  # the page is gone: nothing was seen that could be checked
        record["seen"] = {}
        record["error"] = record["error"] or f"{type(exc).__name__}: the page could not be read"
    await context.close()
    return record


async def run_sessions(url: str, loan: Path, plans: Sequence[SessionPlan], timeout_s: float,
                       clients: str = "browser") -> list[dict]:
    """All sessions at once, each in its own Chromium context or (``clients="protocol"``) its own websocket."""
    if clients == "protocol":
        return list(await asyncio.gather(*(protocol_session(url, loan, plan, timeout_s) for plan in plans)))
    from playwright.async_api import async_playwright

    from tools.serve import CHROMIUM, CHROMIUM_ARGS

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            return list(await asyncio.gather(*(one_session(browser, url, loan, plan, timeout_s * 1000) for plan in plans)))
        finally:
            await browser.close()


# -- the sessions without a browser: Streamlit's protocol spoken by a light client ------------------------
async def _load_page(url: str) -> float:
    """Fetch what a fresh browser fetches before it connects: the page, the files it names, the health and
    host-config endpoints (not the code chunks its script loads later, nor fonts). Returns the seconds it took."""
    import urllib.request

    def get(path: str) -> bytes:
        request = urllib.request.Request(f"{url}/{path.lstrip('./')}", headers={"Accept-Encoding": "gzip, deflate, br"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.read()

    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(BROWSER_CONNECTIONS) as connections:
        start = time.perf_counter()
        index = (await loop.run_in_executor(connections, get, "")).decode(errors="replace")
        named = re.findall(r'(?:src|href)="(\./static/[^"]+)"', index)
        await asyncio.gather(*(loop.run_in_executor(connections, get, path)
                               for path in [*named, "_stcore/health", "_stcore/host-config"]))
        return time.perf_counter() - start


async def protocol_session(url: str, loan: Path, plan: SessionPlan, timeout_s: float) -> dict:
    """The browser session's steps, spoken over the websocket as the frontend speaks them (benchmarks/protocol_client.py).

    Times run from sending a rerun until the frame carrying the chart at the session's τ arrived (and, for
    the first view, until the run finished): the server's whole part, without any browser's drawing.
    """
    from websockets.asyncio.client import connect

    record = _new_record(plan) | {"page_load_s": None, "first_view_finished_s": None}
    link = _link(url, loan, plan)
    view = ClientView(base_url=url, query_string=link.split("?", 1)[1])

    async def ask(socket, rerun, chart: str | None = None, tau: int = 0) -> tuple[float | None, float]:
        """Send a rerun; the seconds until the chart at τ arrived (if one is awaited) and until the run finished."""
        start = time.perf_counter()
        await socket.send(rerun.SerializeToString())
        arrived = await until(socket, lambda: view.chart_since(chart, tau, start)) if chart else None
        finished = await until(socket, lambda: view.finished_since(start))
        return (None if arrived is None else arrived - start), finished - start

    async def until(socket, ready) -> float:
        while (arrived := ready()) is None:
            view.receive(await socket.recv(decode=False))
        return arrived

    try:
        async with asyncio.timeout(timeout_s):
            record["page_load_s"] = await _load_page(url)
            async with connect(websocket_url(url), subprotocols=[Subprotocol("streamlit")], max_size=None) as socket:
                record["first_view_s"], record["first_view_finished_s"] = await ask(
                    socket, view.open_link(), GLOBAL_CHART, plan.taus[0])
                record["first_view_server_s"] = record["first_view_s"]
                await ask(socket, view.open_page("Thresholds"), TAU_CHART, plan.taus[0])
                for tau in plan.taus[1:]:
                    rerun, value = view.move_slider(TAU_SLIDER, 0.01)
                    if round(value * 100) != tau:
                        raise RuntimeError(f"the slider moved to {value}, not to the planned {tau / 100:.2f}")
                    change, _ = await ask(socket, rerun, TAU_CHART, tau)
                    record["tau_changes_s"].append(change)
                    record["tau_changes_server_s"].append(change)
                await ask(socket, view.open_page("Regional explorer"))
    except Exception as exc:  # one session's failure is reported with the others' results, not raised
        record["error"] = _failure(exc)
    record["seen"] = {key: sorted(values) for key, values in view.seen.items()}
    return record


# -- the report -------------------------------------------------------------------------------------
def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def markdown(result: dict) -> str:
    protocol = result.get("clients") == "protocol"
    lines = [
        f"{result['sessions_count']} concurrent sessions "
        f"({'protocol clients, no browser' if protocol else 'headless Chromium'}) on {result['dataset']}, "
        f"{result['changes']} τ changes each "
        f"({result['date']}; {result['machine']['cpu']}, {result['machine']['cores']} cores, "
        f"{result['machine']['memory_gb']:.0f} GB).",
        "",
        "| session | τ (link → last) | query | first view (s) | τ change p50 (s) | τ change max (s) | other sessions' values shown | error |",
        "|---:|---|---:|---:|---:|---:|---|---|",
    ]
    for i, s in enumerate(result["sessions"]):
        own = spread(s["tau_changes_s"])
        leaks = [f"{f['what']} {f['value']}" for f in result["findings"] if f["session"] == i and f["another_session"]]
        lines.append(f"| {i} | {s['taus'][0]} → {s['taus'][-1]} | {s['query']} | {_seconds(s['first_view_s'])} | "
                     f"{_seconds(own['p50'])} | {_seconds(own['max'])} | {', '.join(leaks) or 'none'} | {s['error'] or ''} |")
    change, first = result["tau_change"], result["first_view"]
    server_change, server_first = result["tau_change_server"], result["first_view_server"]
    leaks = [f for f in result["findings"] if f["another_session"]]
    unexpected = [f for f in result["findings"] if not f["another_session"]]
    lines += [
        "",
        f"- First view: max {_seconds(first['max'])} s, p50 {_seconds(first['p50'])} s ({first['n']} sessions).",
        f"- τ change, all sessions: p50 {_seconds(change['p50'])} s, p95 {_seconds(change['p95'])} s, "
        f"max {_seconds(change['max'])} s ({change['n']} changes).",
        *([_protocol_line(result["sessions"])] if protocol else [
            f"- The server's part (from the browser's request until the chart's frame reached it): first view max "
            f"{_seconds(server_first['max'])} s, p50 {_seconds(server_first['p50'])} s; τ change p50 "
            f"{_seconds(server_change['p50'])} s, p95 {_seconds(server_change['p95'])} s, "
            f"max {_seconds(server_change['max'])} s."]),
        f"- Cores: {result['pinning']}.",
        (f"- Peak server memory (RSS of the server's process tree): {result['peak_rss_bytes'] / 2**30:.2f} GB "
         f"(at start {result['start_rss_bytes'] / 2**30:.2f} GB)." if result.get("peak_rss_bytes") is not None
         else "- Peak server memory: not measured (the server runs elsewhere)."),
        *_cpu_line(result.get("cpu")),
        f"- Leakage: {'none' if not leaks else f'{len(leaks)} value(s) from another session'}"
        + (f"; {len(unexpected)} value(s) of no session: "
           + ", ".join(f"session {f['session']} {f['what']} {f['value']}" for f in unexpected) if unexpected else "")
        + ".",
    ]
    return "\n".join(lines)


def _protocol_line(sessions: Sequence[dict]) -> str:
    """What a protocol client's times mean, and the page load and whole first run they leave aside."""
    loads = spread([s["page_load_s"] for s in sessions if s.get("page_load_s") is not None])
    finished = spread([s["first_view_finished_s"] for s in sessions if s.get("first_view_finished_s") is not None])
    return (f"- Times run from sending the rerun until the chart's frame arrived (no browser drawing). The first run "
            f"finished (every element sent) after max {_seconds(finished['max'])} s, p50 {_seconds(finished['p50'])} s; "
            f"fetching the page and the files it names before connecting took max {_seconds(loads['max'])} s.")


def _cpu_line(cpu: dict | None) -> list[str]:
    if not cpu or not cpu.get("wall_s"):
        return []
    capacity = cpu["cores"] * cpu["wall_s"]
    return [f"- CPU over the {cpu['wall_s']:.0f} s run ({capacity:.0f} core-seconds): the machine was busy "
            f"{cpu['machine_busy_s']:.0f} s ({cpu['machine_busy_s'] / capacity:.0%}), the app server "
            f"{cpu['server_s']:.0f} s ({cpu['server_s'] / capacity:.0%}), the clients and this driver "
            f"{cpu['clients_s']:.0f} s ({cpu['clients_s'] / capacity:.0%}), other programs "
            f"{max(0.0, cpu['machine_busy_s'] - cpu['server_s'] - cpu['clients_s']):.0f} s."]


def _machine() -> dict:
    import psutil

    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError, StopIteration):  # not Linux: the platform's name for the processor
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": psutil.virtual_memory().total / 2**30,
            "python": platform.python_version()}


def _commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def _sessions_on_own_server(args, data_dir: Path, loan: Path, plans):
    """The sessions against a server started here on a fresh cache; (session records, its memory and CPU sampler)."""
    from tools.serve import app_server

    with tempfile.TemporaryDirectory() as cache:
        env = {"FLEX_CACHE_DIR": cache, "FLEX_DATA_DIR": str(data_dir), "FLEX_HOSTED": ""}
        server_cores = {0} if args.pin_server else None
        with app_server(env=env, port=args.port, timeout=120, cpus=server_cores) as (url, server):
            sampler = MemorySampler(server.pid)
            sampler.start()
            if server_cores:  # this thread starts the clients (Playwright's driver starts Chromium): they inherit it
                os.sched_setaffinity(0, set(range(os.cpu_count() or 1)) - server_cores)
            if args.browsers_yield:  # inherited the same way; the server keeps its priority
                os.nice(19)
            try:
                return asyncio.run(run_sessions(url, loan, plans, args.timeout, args.clients)), sampler
            finally:
                sampler.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10, help="concurrent sessions (default 10)")
    parser.add_argument("--clients", choices=("browser", "protocol"), default="browser",
                        help="browser: a headless Chromium per session (default); protocol: a light websocket client per "
                             "session speaking Streamlit's protocol as the browser does, so only the server uses CPU")
    parser.add_argument("--changes", type=int, default=5, help="τ changes per session (default 5)")
    parser.add_argument("--port", type=int, default=None, help="the app server's port (default: a free one)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="folder holding loan_approval_dataset.csv (default FLEX_DATA_DIR, else ../shared/data)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "sessions.json",
                        help="JSON results (default benchmarks/results/sessions.json)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds any one wait may take (default 600)")
    parser.add_argument("--pin-server", action="store_true",
                        help="run the server on core 0 only and the browsers and this driver on the other cores (Linux)")
    parser.add_argument("--url", default=None,
                        help="sessions against an app server already running, e.g. on another machine (with a fresh "
                             "FLEX_CACHE_DIR, and the loan file at the same path); its memory and CPU are then not measured")
    parser.add_argument("--browsers-yield", action="store_true",
                        help="run the browsers and this driver at the lowest CPU priority (nice 19), so they use only "
                             "what the server leaves, as browsers on other machines would")
    args = parser.parse_args(argv)
    data_dir = (args.data_dir or Path(os.environ.get("FLEX_DATA_DIR", REPO.parent / "shared" / "data"))).resolve()
    loan = data_dir / LOAN_FILE
    try:
        if not loan.is_file():
            raise fc.ConfigError(f"{LOAN_FILE} not found in {data_dir}: pass --data-dir or set FLEX_DATA_DIR.")
        task = fc.data.load_loan(loan)
        # The app's default model (cross-validation changes its scores, not the model): its factuals are the pool.
        pool = fc.counterfactuals.factual_rows(task, fc.fit_model(task, model="rf", encoding="onehot", seed=0, cv_folds=0))
        plans = plan_sessions(args.sessions, args.changes, pool)
        if args.url and (args.pin_server or args.port):
            raise fc.ConfigError("--url names a server that is already running: --pin-server and --port do not apply.")
        if args.pin_server and (os.cpu_count() or 1) < 2:
            raise fc.ConfigError("--pin-server needs at least two cores: one for the server, the rest for the browsers.")
    except fc.FlexError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    if args.url:
        if args.browsers_yield:
            os.nice(19)
        sessions = asyncio.run(run_sessions(args.url.rstrip("/"), loan, plans, args.timeout, args.clients))
        sampler = None
    else:
        sessions, sampler = _sessions_on_own_server(args, data_dir, loan, plans)
    findings = find_leaks(plans, [s["seen"] for s in sessions])
    result = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "commit": _commit(),
        "command": " ".join(["python", "benchmarks/bench_sessions.py", *(argv if argv is not None else sys.argv[1:])]),
        "machine": _machine(),
        "dataset": "loan (default model and generator, N_F = 200, N_cf = 10)",
        "sessions_count": len(plans),
        "clients": args.clients,
        "changes": args.changes,
        "sessions": sessions,
        "first_view": spread([s["first_view_s"] for s in sessions if s["first_view_s"] is not None]),
        "tau_change": spread([t for s in sessions for t in s["tau_changes_s"]]),
        "first_view_server": spread([s["first_view_server_s"] for s in sessions if s["first_view_server_s"] is not None]),
        "tau_change_server": spread([t for s in sessions for t in s["tau_changes_server_s"] if t is not None]),
        "pinning": (f"a server already running at {args.url}" if args.url
                    else "server on core 0, the clients and this driver on the others" if args.pin_server
                    else "server, clients and this driver share every core")
                   + ("; the clients and this driver at the lowest priority (nice 19)" if args.browsers_yield else ""),
        "server": args.url or "started here",
        "peak_rss_bytes": sampler.peak if sampler else None,
        "start_rss_bytes": (sampler.first or 0) if sampler else None,
        "cpu": {"server_s": sampler.server_cpu_s, "clients_s": sampler.clients_cpu_s,
                "machine_busy_s": sampler.machine_busy_s, "wall_s": sampler.wall_s, "cores": os.cpu_count()}
               if sampler else None,
        "findings": findings,
        "leak": any(f["another_session"] for f in findings),
    }
    print(markdown(result))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(f"\nWrote {args.out}")
    failed = [i for i, s in enumerate(sessions) if s["error"]]
    if failed:
        print(f"error: session(s) {', '.join(map(str, failed))} failed (see the table)", file=sys.stderr)
    if result["leak"]:
        print("error: a session showed another session's settings (see the table)", file=sys.stderr)
    if failed or result["leak"]:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
