"""The session benchmark's pure parts: its plan of τ values and queries, its statistics and its leak check
(the browser run itself is the benchmark, run by hand: benchmarks/bench_sessions.py)."""

from __future__ import annotations

import pytest

import flex_core as fc
from benchmarks.bench_sessions import find_leaks, markdown, plan_sessions, spread


def test_no_two_sessions_share_a_tau_or_a_query_and_each_walks_up_by_one_step():
    plans = plan_sessions(10, 5, pool=list(range(100, 140)), seed=0)
    taus = [t for plan in plans for t in plan.taus]
    assert len(taus) == len(set(taus)) == 60 and min(taus) == 11 and max(taus) <= 100
    assert all(plan.taus == tuple(range(plan.taus[0], plan.taus[0] + 6)) for plan in plans)
    assert len({plan.query for plan in plans}) == 10 and all(100 <= plan.query < 140 for plan in plans)


@pytest.mark.parametrize("sessions, changes, pool", [(10, 9, range(50)), (5, 2, range(4)), (0, 2, range(50))])
def test_a_plan_that_cannot_keep_sessions_apart_is_refused(sessions, changes, pool):
    with pytest.raises(fc.ConfigError):
        plan_sessions(sessions, changes, pool=list(pool))


def test_spread_gives_p50_p95_and_max_and_nothing_for_no_times():
    assert spread([1.0, 2.0, 3.0, 4.0]) == pytest.approx({"n": 4, "p50": 2.5, "p95": 3.85, "max": 4.0})
    assert spread([]) == {"n": 0, "p50": None, "p95": None, "max": None}


def test_a_value_of_another_session_is_a_leak_and_a_value_of_none_is_reported_apart():
    plans = plan_sessions(2, 2, pool=[7, 9], seed=0)
    own = [{"taus": [f"{t / 100:.2f}" for t in p.taus], "url_taus": [f"{p.taus[0] / 100:g}"],
            "url_queries": [str(p.query)], "region_rows": [str(p.query)]} for p in plans]
    assert find_leaks(plans, own) == []

    other_query, other_tau = str(plans[1].query), f"{plans[1].taus[1] / 100:.2f}"
    seen = [dict(own[0], taus=[*own[0]["taus"], other_tau], region_rows=[other_query], url_taus=["default"]), own[1]]
    findings = find_leaks(plans, seen)
    assert {(f["what"], f["value"], f["another_session"]) for f in findings} == {
        ("τ shown", other_tau, True), ("region's row", plans[1].query, True), ("τ in the address", "0.10", False)}
    assert all(f["session"] == 0 for f in findings)


def test_the_table_says_which_session_showed_what():
    plans = plan_sessions(2, 1, pool=[7, 9], seed=0)
    sessions = [{"taus": [f"{t / 100:.2f}" for t in p.taus], "query": p.query, "first_view_s": 12.0,
                 "tau_changes_s": [0.5], "error": None} for p in plans]
    findings = [{"session": 1, "what": "τ shown", "value": "0.11", "another_session": True}]
    result = {"sessions_count": 2, "dataset": "loan", "changes": 1, "date": "2026-11-26",
              "machine": {"cpu": "test CPU", "cores": 2, "memory_gb": 8.0}, "sessions": sessions,
              "first_view": spread([12.0, 12.0]), "tau_change": spread([0.5, 0.5]), "peak_rss_bytes": 2**30,
              "start_rss_bytes": 2**29, "findings": findings, "first_view_server": spread([9.0, 10.0]),
              "tau_change_server": spread([0.25, 0.25]), "pinning": "server on core 0, the browsers and this driver on the others"}
    text = markdown(result)
    assert "| 1 | 0.13 → 0.14 |" in text and "τ shown 0.11" in text
    assert "first view max 10.00 s" in text and "τ change p50 0.25 s" in text and "server on core 0" in text
    assert "Leakage: 1 value(s) from another session" in text and "1.00 GB" in text


def test_a_server_elsewhere_has_its_memory_reported_as_not_measured():
    plans = plan_sessions(1, 1, pool=[7], seed=0)
    sessions = [{"taus": ["0.11", "0.12"], "query": plans[0].query, "first_view_s": 9.0, "tau_changes_s": [0.4],
                 "error": None}]
    result = {"sessions_count": 1, "dataset": "loan", "changes": 1, "date": "2026-11-26",
              "machine": {"cpu": "test CPU", "cores": 2, "memory_gb": 8.0}, "sessions": sessions,
              "first_view": spread([9.0]), "tau_change": spread([0.4]), "peak_rss_bytes": None, "start_rss_bytes": None,
              "cpu": None, "findings": [], "first_view_server": spread([5.0]), "tau_change_server": spread([0.1]),
              "pinning": "a server already running at http://10.0.0.2:8501"}
    text = markdown(result)
    assert "Peak server memory: not measured (the server runs elsewhere)." in text
    assert "a server already running at http://10.0.0.2:8501" in text and "CPU over" not in text
