"""Regional explorer: a query's neighbours (a map or a table, a criterion and k) or a rule-defined region;
the regions that differ most from global; what the model asks of each group."""

import streamlit as st

import flex_core as fc
from ui import query as query_choice
from ui import reporting
from ui import state as S
from ui.components import (
    chart,
    importance_chart,
    labelled,
    lime_beside_flex,
    number_columns,
    pinned_first,
    settings_strip,
    show_table,
    what_must_change,
)
from ui.context import require_analysis, run_or_stop, show_notes
from ui.factual_map import factual_map_figure
from ui.glossary import term, terms_shown
from ui.lead import lead_reading, small_region_note
from ui.regions import found_regions_section, groups_section, region_metrics, rule_builder
from ui.text import plain

st.title("Regional explorer")
analysis = require_analysis()
settings_strip(analysis)
task = analysis.task
probability = reporting.probability_label(task)
global_result = run_or_stop(analysis.global_result)
fmap = analysis.factual_map()

# -- regions that differ, and a rule builder: either opens a rule-defined region ---------------------
found_regions_section(analysis)
rule_builder(task)
rule = st.session_state[S.RULE]
if rule:
    try:
        regional = analysis.rule_region(rule)
    except fc.FlexError as exc:  # e.g. a link made for other data: drop the rule rather than get stuck
        st.warning(plain(f"The rule region was dropped: {exc}"))
        rule = st.session_state[S.RULE] = None

# -- 1. pick a region: the map beside the reading of the region it holds, so a click shows its result at once ----
map_col, read_col = st.columns([3, 2])
if rule:
    query = where = candidates = None
    k = 0
    criterion_text = regional.rule_text
    with map_col:
        st.markdown(f"Showing the rule-defined region **{plain(regional.rule_text)}**: the {len(regional.members):,} "
                    f"of the {len(global_result.query_index):,} analysed cases that meet it.")
        if st.button("Back to a query's neighbours", key="rule_close"):
            st.session_state[S.RULE] = None
            st.rerun()
        chart(
            factual_map_figure(analysis.factual_map(regional.members),
                               members=regional.members, criterion=regional.rule_text,
                               title="The analysed cases: the rule region's are ringed", probability=probability),
            analysis, key="rule_map", tau=False,
        )
        st.caption(f"Each dot is a case the model predicts {plain(task.undesirable_words)}, placed so that similar cases "
                   f"sit close together ({plain(fmap.description)}); ringed dots are the region's cases."
                   + (f" {plain(fmap.note)}" if fmap.note else ""))
else:
    # -- criterion and k ---------------------------------------------------------------------------
    dropped = S.forget_invalid_criterion(task)
    if dropped:
        st.warning(plain(dropped))
    where = st.session_state[S.WHERE]
    crit_feature, crit_value = (where.feature, where.value) if where is not None else ("", "")
    options = [query_choice.ANY_CASE, *task.categorical_names]

    with map_col:
        left, mid, right = st.columns([2, 2, 3])
    feature = left.selectbox("Region criterion: only cases with", options, key="w_where_feature",
                             on_change=query_choice.set_where, args=(task,), index=options.index(crit_feature) if crit_feature in options else 0,
                             format_func=lambda name: name if name == options[0] else task.feature(name).label)
    if feature != options[0]:
        levels = list(task.feature(feature).categories)
        mid.selectbox("equal to", levels, key="w_where_value", on_change=query_choice.set_where, args=(task,),
                      index=levels.index(crit_value) if crit_value in levels else 0,
                      format_func=task.feature(feature).level_label)
    candidates = query_choice.candidates(analysis, where)
    max_k = min(50, len(candidates) - 1)
    if max_k >= 2:
        right.slider(term("Neighbours in the region", "k"), 1, max_k, value=min(int(st.session_state[S.K]), max_k), key="w_k",
                     on_change=S.bind("w_k", S.K))
    else:  # a slider needs two positions: with so few cases the region is all of them
        right.caption(f"Only {reporting.plural(len(candidates), 'case')} meet the criterion: the region holds all of them.")
    k = max(0, min(int(st.session_state[S.K]), max_k))

    # -- the query: a click on the map, a row of the table, or a random one --------------------------
    # One clicked dot becomes the query; a box or lasso around several narrows the table to them.
    choice = query_choice.choose_query(analysis, candidates, where, fmap.frame["row"].to_numpy())
    query, table, listable, lassoed = choice.query, choice.table, choice.listable, choice.lassoed

    regional = run_or_stop(analysis.regional_result, query, k, where)
    criterion_text = f"{task.feature(crit_feature).label} = {task.feature(crit_feature).level_label(crit_value)}" if where else None

    with map_col:
        chart(
            factual_map_figure(analysis.factual_map(regional.members), query=query, members=regional.members,
                               meeting=candidates.tolist() if where else None, criterion=criterion_text,
                               probability=probability),
            analysis, key="factual_map", tau=False, on_select="rerun", selection_mode=("points", "box", "lasso"),
        )
        st.caption(
            f"Each dot is a case the model predicts {plain(task.undesirable_words)}, placed so that similar cases sit "
            "close together "
            f"({plain(fmap.description)}); darker means "
            + (f"a larger {plain(probability)}" if fmap.numbers else "a more certain prediction")
            + "; hover a dot for its row. "
            "The star is the query, ringed dots are its region; the right panel shows only them and the cases nearest "
            "to them. "
            + ("Faded dots do not meet the criterion. " if where else "")
            + "Click a dot to make it the query; draw a box or a lasso (tools at the top right) around several to "
            "list only those in the table below."
            + (f" {plain(fmap.note)}" if fmap.note else "")
        )

# -- 2. read it: beside the map ----------------------------------------------------------------------
small = small_region_note(regional.importance.n_factuals_used)
with read_col:
    # a subheader: a long rule in the narrow column beside the map would fill the first screen as a header
    if rule:
        st.subheader(f"Region: {plain(regional.rule_text)}")
    else:
        st.subheader(f"Region around row {query}" + (f" with {plain(criterion_text)}" if where else ""))
    region_metrics(regional, global_result, rule=bool(rule), where=where is not None, small=bool(small))
    if small:
        st.warning(plain(small))
    lead = "" if small else lead_reading(regional.importance, task)
    if lead:
        st.markdown(f"**{plain(lead.replace('the ways out', 'the ways out of this region', 1))}**")
    st.markdown(plain(reporting.describe_regional(regional, undesirable=(task.undesirable_words,), terms=terms_shown())))
    if regional.neighbour_ties:
        st.caption(plain(reporting.describe_neighbour_ties(regional)))

if not rule:  # the cases to pick from, full width so every column shows
    st.markdown(f"**Cases to choose from** ({listable:,}" + (" selected on the map" if len(lassoed) else "")
                + "; click a row to make it the query)")
    cases = labelled(table, task).rename(columns={"P(undesirable)": probability})
    st.dataframe(cases, key="factual_table", on_select="rerun", selection_mode="single-row", height=380, width="stretch",
                 column_config=pinned_first(cases, hide_index=False, column_config=number_columns(
                     task, {probability: st.column_config.NumberColumn(format="%.2f" if task.band is None else "localized")})))
    if listable > len(table):
        st.caption(f"The table lists {len(table):,} of them (those on the map first); any other can be "
                   "chosen by its row number.")
        typed = st.number_input("Row number of the query", min_value=0, step=1, value=None, key="w_query_row",
                                on_change=S.set_query_from, args=("w_query_row", candidates))
        if typed is not None and int(typed) != query:
            st.error(plain(f"Row {int(typed)} is not among the cases to choose from (a case "
                           f"predicted {task.undesirable_words} with the margin" + (f" that meets {criterion_text}" if where else "")
                           + f"); type one of those. The query stays row {query}."))
    st.button("Random query", key="random_query", on_click=query_choice.another_random_query,
              args=(analysis, where, query))
show_notes(analysis, *regional.importance.notes)

# -- the region in detail, one tab at a time ------------------------------------------------------------
st.subheader("The region in detail")
charts_tab, must_tab, lime_tab, shift_tab, members_tab = st.tabs(
    ["Charts", "What must change", "FLEX next to LIME", "Mode shift", "Members"])
with charts_tab:
    chart_col, scatter_col = st.columns(2)
    with chart_col:
        importance_chart(analysis, regional.importance, key="regional", dice=False)
    with scatter_col:
        chart(fc.plotting.regional_scatter(regional, terms=terms_shown()), analysis, key="regional_scatter")
    st.caption(reporting.quadrant_legend().replace("\n", " · "))
with must_tab:
    what_must_change(analysis, regional.importance, key="regional", cases="the region's cases")
with lime_tab:
    lime_beside_flex(analysis, regional, key="regional")
with shift_tab:
    show_table(reporting.mode_shift_table(regional, terms=terms_shown()))
    st.caption("For each feature: the region's most common value (numbers are cut into four ranges), its share "
               f"among the cases and among their ways out. A strongly negative {'δ' if terms_shown() else 'change'} "
               f"means the ways out move away from it; {'δ = −1' if terms_shown() else '−100%'} means no way out keeps it.")
with members_tab:
    members = task.frame.loc[list(regional.members)].copy()
    if regional.distances:
        members.insert(0, "distance", regional.distances)
    show_table(labelled(members, task), hide_index=False, column_config=number_columns(task))

# -- saved regions ---------------------------------------------------------------------------------
# -- 3. compare: with saved regions, and between groups of the cases -----------------------------------------
st.header("Compare")
saved_tab, groups_tab = st.tabs(["Saved regions", "What the model asks of each group"])
with saved_tab:
    name_col, button_col = st.columns([3, 1])
    default_name = S.fresh_name(regional.rule_text if rule else
                                f"row {query}" + (f", {criterion_text}" if where else "") + f", k={k}",
                                {r["name"] for r in st.session_state[S.SAVED_REGIONS]})
    name_col.text_input("Name for this region", key=S.REGION_NAME, placeholder=default_name)
    button_col.button("Save region", key="save_region", type="primary", on_click=S.save_region,
                      args=(default_name, None if rule or query is None else int(query), int(k), where, rule))
    saved = st.session_state[S.SAVED_REGIONS]
    if saved:
        results = {r["name"]: run_or_stop(analysis.saved_region, r) for r in saved}
        chart(fc.plotting.regions_heatmap(results, global_result, terms=terms_shown()), analysis, key="regions_heatmap")
        st.caption("Each line is a saved region's change frequency per feature (darker: changed more often), with the "
                   "whole population on top. r is each region's correlation with the global pattern.")
        if st.button("Forget saved regions", key="clear_regions"):
            st.session_state[S.SAVED_REGIONS] = []
            st.rerun()
    else:
        st.caption("Save regions to compare them side by side as a heatmap.")
with groups_tab:
    groups_section(analysis)
