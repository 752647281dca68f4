"""The Regional explorer's issue-22 sections: regions that differ, the rule builder, and the group comparison.

Widgets and layout only; the numbers come from ``flex_core.regions`` through :mod:`ui.cache`
(keyed by the store, N_F, τ and the options, so a τ change re-ranks without generating).
A found region, or the rule builder's conditions, open as a rule-defined region: :data:`ui.state.RULE`.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

import flex_core as fc
from flex_core.limits import LIMITS
from ui import figures, reporting
from ui import state as S
from ui.components import chart, show_table
from ui.context import Analysis, run_or_stop
from ui.glossary import term, terms_shown
from ui.text import plain

#: How the rule builder says each comparison.
OP_WORDS = {"=": "is", "in": "is one of", ">=": "is at least", "<": "is below", "between": "is between (both included)"}
FDR_LEVELS = (0.05, 0.1, 0.2)
#: The found regions' columns in plain words, unless the reader asked for the analyst's terms.
PLAIN_COLUMNS = {"divergence 1 − r (95% interval)": "how much it differs from all cases (95% interval)",
                 "q-value": "share of flukes among regions this strong"}
#: The most refits the replication check takes (the limits table's, as the library and CLI refuse more).
MAX_REFITS = int(LIMITS["retrain"].high)
REFITS_HELP = ("0 skips the check. Each refit trains the same kind of model on a bootstrap of the training rows "
               "with another seed and reruns these cases; slow: every refit finds the ways out again.")


def refits_input(column, key: str, value: int = 0) -> int:
    """The "Refits to check replication" number box (0 = off, at most :data:`MAX_REFITS`)."""
    return int(column.number_input("Refits to check replication", min_value=0, max_value=MAX_REFITS, value=value,
                                   step=1, key=key, help=REFITS_HELP))


def _plain(value):
    """A rule's value as plain data (numpy numbers become Python ones; a list a tuple)."""
    if isinstance(value, list | tuple):
        return tuple(_plain(v) for v in value)
    return value.item() if hasattr(value, "item") else value


def condition_of(condition) -> fc.importance.Condition:
    """A condition (a found region's, or one checked by flex_core) as a Condition of plain values."""
    return fc.importance.Condition(str(condition["feature"]), str(condition["op"]), _plain(condition["value"]))


def open_rule(rule) -> None:
    """Show ``rule`` as the region of the explorer (and put it in the builder, to edit)."""
    rule = tuple(condition_of(c) for c in rule)
    st.session_state[S.RULE] = rule
    st.session_state[S.RULE_DRAFT] = list(rule)


# -- regions that differ -----------------------------------------------------------------------------
def _search_options(n: int) -> dict:
    """The discovery options from the widgets (a minimum region size that the pool can hold)."""
    s = st.session_state
    return {
        "max_conditions": int(s.get("w_regions_conditions", 2)),
        "min_support": int(s.get("w_regions_min_support", min(20, max(2, n // 5)))),
        "fdr": float(s.get("w_regions_fdr", 0.1)),
        "retrain": int(s.get("w_regions_retrain", 0)),
    }


def found_regions_section(analysis: Analysis) -> None:
    st.header("Regions that differ")
    n = analysis.n_factuals
    st.caption(
        f"Every region of one or two conditions on the features (a category, a range of ordinal levels, a range of "
        f"quartiles of a number) among the {n:,} analysed cases (“{term('Cases to explain', 'N_F')}” in the sidebar) is "
        "compared with all of them: "
        + ("its divergence is 1 − r, r the correlation between its change frequencies and the whole's, tested against "
           "random regions of the same size with false-discovery-rate control." if terms_shown() else
           "how much the features its ways out change differ from those of all the cases (0: the same, 1: unrelated, "
           "2: reversed), against random groups of as many cases, keeping the expected share of flukes among the "
           "regions reported below the false-discovery rate.")
        + " Nothing new is generated."
    )
    c1, c2, c3, c4, c5 = st.columns([2, 2, 2, 2, 2], vertical_alignment="bottom")
    c1.selectbox("Conditions per region", (1, 2), index=1, key="w_regions_conditions")
    c2.number_input("Smallest region (cases)", min_value=2, max_value=max(2, n // 2), step=1,
                    value=min(20, max(2, n // 5)), key="w_regions_min_support")
    c3.selectbox("False-discovery rate", FDR_LEVELS, index=1, key="w_regions_fdr")
    refits_input(c4, "w_regions_retrain")
    if c5.button("Find regions", key="find_regions", type="primary"):
        st.session_state[S.REGION_SEARCH] = _search_options(n)
    options = st.session_state[S.REGION_SEARCH]
    if options is None:
        return
    found = run_or_stop(analysis.found_regions, options)
    if not found.regions:
        st.info("No candidate region had enough cases inside and outside it; lower the smallest region size or raise "
                f"“{term('Cases to explain', 'N_F')}” in the sidebar.")
        return
    table = reporting.found_regions_table(found, plain=not terms_shown())
    if not terms_shown():  # the analyst's names of these columns only when asked for (the sidebar's switch)
        table = table.rename(columns=PLAIN_COLUMNS)
    event = st.session_state.get("found_regions_table")
    picked = (event or {}).get("selection", {}).get("rows", []) if event is not None else []
    if picked and S.fresh_selection("found_regions_table", picked) and picked[0] < len(found.regions):
        open_rule(found.regions[picked[0]].rule)
        st.toast(plain(f"Opened the region {found.regions[picked[0]].text} in the explorer below."))
    st.markdown(reporting.describe_found_counts(found, options["fdr"]) + " Click a row to open that region in the explorer below.")
    replication = reporting.describe_region_replication(found)
    if replication:
        st.markdown(plain(replication))
    st.dataframe(table, key="found_regions_table", on_select="rerun", selection_mode="single-row", hide_index=True,
                 width="stretch", height="content" if len(table) <= 12 else 420,
                 column_config={"rank": st.column_config.NumberColumn(width="small", pinned=True),
                                "region": st.column_config.TextColumn(width="large"),
                                "cases": st.column_config.NumberColumn(width="small")})
    chart(figures.regions_small_multiples(found), analysis, key="regions_small_multiples")
    st.caption(plain(reporting.multiple_testing_caveat(found)))


def region_metrics(regional: fc.RegionalResult, global_result: fc.FlexResult, *, rule: bool, where: bool,
                   small: bool) -> None:
    """The region's size, the cases it was picked from, its agreement with all cases and its spread, two by two
    (they sit in the narrow column beside the map). ``small``: r is put in brackets, as a guess."""
    top, bottom = st.columns(2), st.columns(2)
    top[0].metric("Region size", f"{len(regional.members)}",
                  help="The analysed cases that meet the rule." if rule else "The query and its nearest neighbours.")
    if rule:
        top[1].metric("Cases analysed", f"{len(global_result.query_index):,}", help="The global result's cases (N_F).")
    else:
        top[1].metric("Cases meeting the criterion" if where else "Cases to choose from", f"{regional.candidates + 1:,}")
    r = regional.pearson_r
    low, high = regional.pearson_r_interval
    cases = reporting.plural(regional.importance.n_factuals_used, "case")
    bottom[0].metric(term("Agreement with all cases", "Pearson r"), "n/a" if r != r else (f"({r:.2f})" if small else f"{r:.2f}"),
                     help=("No interval: r is undefined or rests on a single case." if low != low
                           else f"95% interval from the region's {cases}: {low:.2f} to {high:.2f}"))
    if regional.distances:
        bottom[1].metric("Features apart (furthest)", f"{max(regional.distances):.2f}",
                         help="How far the furthest case of the region is from the query (Hamming distance): the "
                              "features in which the two differ, a number counting the share of its range between "
                              "them (see the Glossary).")
    else:  # a rule region has no query, so no distances
        share = len(regional.members) / max(len(global_result.query_index), 1)
        bottom[1].metric("Share of the cases", reporting.format_share(share, decimals=1 if share < 0.1 else 0))


# -- the rule builder ------------------------------------------------------------------------------
def _ops(feature) -> list[str]:
    if feature.kind == "categorical":
        return ["=", "in"]
    if feature.is_ordinal:
        return ["=", "in", ">=", "<", "between"]
    return [">=", "<", "between", "="]


def _value_widgets(task, feature, op, column) -> object:
    """The value of a condition on ``feature`` from widgets drawn in ``column`` (None when nothing is chosen)."""
    key = f"w_rule_value_{feature.name}_{op}"
    if feature.kind == "categorical" or feature.is_ordinal:
        levels = list(feature.categories)
        words = feature.level_label  # shown in the dictionary's words; the rule keeps the data's levels
        if op == "in":
            return column.multiselect("Values", levels, key=key, format_func=words) or None
        if op == "between":
            low, high = column.columns(2)
            return [low.selectbox("From", levels, key=key + "_low", format_func=words),
                    high.selectbox("to", levels, index=len(levels) - 1, key=key + "_high", format_func=words)]
        return column.selectbox("Value", levels, key=key, format_func=words)
    values = task.frame[feature.name].to_numpy(dtype=float)
    q1, median, q3 = (float(v) for v in np.nanquantile(values, [0.25, 0.5, 0.75]))
    unit = f" ({feature.unit})" if feature.unit else ""  # "Value (points)", "From (₹)"
    if op == "between":
        low, high = column.columns(2)
        return [low.number_input(f"From{unit}", value=q1, key=key + "_low"),
                high.number_input(f"to{unit}", value=q3, key=key + "_high")]
    return column.number_input(f"Value{unit}", value=median, key=key)


def rule_builder(task) -> None:
    """Conditions on feature values, added and removed one by one; "Open this region" shows it in the explorer."""
    draft = st.session_state[S.RULE_DRAFT]
    with st.expander("Define a region by a rule", expanded=bool(draft)):
        st.caption("A rule-defined region holds the analysed cases that meet every condition, e.g. an age range and "
                   "a road type. Add conditions one by one, then open the region.")
        c1, c2, c3, c4 = st.columns([3, 2, 3, 2])
        name = c1.selectbox("Feature", task.feature_names, key="w_rule_feature",
                            format_func=lambda n: task.feature(n).label)
        feature = task.feature(name)
        op = c2.selectbox("Condition", _ops(feature), key=f"w_rule_op_{name}", format_func=lambda o: OP_WORDS[o])
        value = _value_widgets(task, feature, op, c3)
        c4.write("")
        if c4.button("Add condition", key="rule_add", disabled=value is None):
            condition = fc.importance.Condition(name, op, value)
            try:
                condition = condition_of(fc.importance.check_rule(task, [condition])[0])
            except fc.FlexError as exc:
                st.error(plain(exc))
            else:
                draft = [c for c in draft if c["feature"] != name] + [condition]  # one condition per feature
                st.session_state[S.RULE_DRAFT] = draft
        for i, condition in enumerate(draft):
            text_col, remove_col = st.columns([6, 1])
            words = fc.importance.rule_text([condition], features=task.features)  # "CIBIL score ≥ 650 points"
            text_col.markdown(f"{'and ' if i else ''}**{plain(words)}**")
            if remove_col.button("Remove", key=f"rule_remove_{i}"):
                st.session_state[S.RULE_DRAFT] = draft[:i] + draft[i + 1:]
                st.rerun()
        open_col, clear_col = st.columns([1, 1])
        if open_col.button("Open this region", key="rule_open", type="primary", disabled=not draft):
            try:
                fc.importance.check_rule(task, draft)
            except fc.FlexError as exc:
                st.error(plain(exc))
            else:
                open_rule(draft)
                st.rerun()
        if clear_col.button("Clear the rule", key="rule_clear", disabled=not draft):
            st.session_state[S.RULE_DRAFT] = []
            st.rerun()


# -- what the model asks of each group ---------------------------------------------------------------
def groups_section(analysis: Analysis) -> None:
    task = analysis.task
    st.header("What the model asks of each group")
    st.caption("The analysed cases split by one feature (a number by its quartiles): how many have a way out "
               "under the constraints, how far the nearest one is, and which features each group must change. "
               "A difference is named only when the 95% intervals of two groups do not overlap.")
    choices = [None, *task.feature_names]
    current = st.session_state[S.GROUPS_BY]
    by = st.selectbox("Group the cases by", choices, key="w_groups_by",
                      index=choices.index(current) if current in choices else 0,
                      format_func=lambda n: "(choose a feature)" if n is None else task.feature(n).label)
    st.session_state[S.GROUPS_BY] = by
    st.session_state[S.GROUPS_RETRAIN] = refits_input(st, "w_groups_retrain", int(st.session_state[S.GROUPS_RETRAIN]))
    if by is None:
        return
    groups = run_or_stop(analysis.compared_groups, by)
    for sentence in [*groups.verdict, reporting.describe_group_replication(groups)]:
        if sentence:
            st.markdown(f"- {plain(sentence)}")
    show_table(reporting.groups_table(groups))
    chart(figures.groups_frequency_figure(groups), analysis, key="groups_figure")
    st.caption("Distance to the nearest way out: a number counts its change as a share of its range, an ordinal "
               "feature the levels it moves as a share of its levels, a category 1 per change.")
