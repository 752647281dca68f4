"""Data & model: a preview, editable feature kinds and immutable features, class balance, test metrics and the model's
curves on held-out rows."""


import streamlit as st

import flex_core as fc
from flex_core.data.rules import constraint_examples
from flex_core.formatting import plural
from ui import cache, regression, reporting, rules, words
from ui import state as S
from ui.components import (
    chart,
    evaluation_caption,
    labelled,
    number_columns,
    pinned_first,
    settings_strip,
    show_table,
)
from ui.context import apply_overrides, require_analysis, run_or_stop
from ui.glossary import term
from ui.quality import model_curves_view
from ui.text import plain

st.title("Data & model")
analysis = require_analysis()
settings_strip(analysis)
task, model = analysis.task, analysis.model
summary = task.summary()

cols = st.columns(4)
cols[0].metric("Rows in the file", f"{summary['rows_in_file']:,}")
cols[1].metric("Rows used", f"{summary['rows_used']:,}")
cols[2].metric("Rows lost to missing values", f"{summary['rows_in_file'] - summary['rows_used']:,}")
cols[3].metric("Features", summary["features"])
if task.description:
    st.caption(plain(task.description))
if task.notes:  # one box, one paragraph per note
    st.info(plain("\n\n".join(task.notes)))

st.subheader("Preview")
preview = labelled(task.frame.head(200), task)
st.dataframe(preview, width="stretch", column_config=pinned_first(preview, hide_index=False, column_config=number_columns(task)))
st.caption(f"The first 200 of {len(task.frame):,} rows.")

left, right = st.columns(2)
with left:
    st.subheader("Class balance" if task.band is None else "Rows in and out of the band")
    balance = reporting.class_balance(task)
    balance["share"] = balance["share"].map(lambda v: reporting.format_share(v, decimals=1))
    balance = balance.rename(columns={"undesirable": "explained by FLEX"})  # the outcome the pages explain, ticked
    show_table(balance, column_config={"rows": st.column_config.NumberColumn(format="localized")})
with right:
    st.subheader(f"Model: {plain(model.label)}")
    metrics = model.metrics
    if task.band is not None:  # a regressor: how far its numbers are from the true ones
        st.markdown(plain(reporting.describe_regression(metrics, task)))
        show_table(reporting.model_quality_table(metrics, held_out=model.trained_here, outcome=task.undesirable_words))
        st.caption(plain(regression.evaluation_note(model)))
    elif "test_accuracy" in metrics or "cv_accuracy_mean" in metrics:
        st.markdown(plain(reporting.describe_model(metrics, task)))
        show_table(reporting.model_quality_table(metrics, held_out=model.trained_here, outcome=task.undesirable_words))
        st.caption(plain(evaluation_caption(model)))
    else:  # no outcomes to score against (e.g. a notebook's explainer without y): no accuracy, no F1
        st.info(plain(metrics.get("note") or fc.models.NO_LABELS_NOTE))

if task.band is not None:  # a regressor: no cutoff, calibration or curves; its errors instead, saying why
    st.subheader("How far the model's numbers are from the true ones")
    regression.quality_view(analysis)
else:
    st.subheader("Model quality at a decision cutoff")
    try:
        held_out = cache.held_out_predictions(task, model, analysis.model_id)
    except fc.FlexError as exc:
        st.info(plain(f"No model-quality view: {exc}"))
    else:
        undesirable, probability = task.undesirable_words, reporting.probability_label(task)
        cutoff = st.slider(
            plain(f"Decision cutoff: a case is predicted {undesirable} when {probability} is above it"), 0.0, 1.0, 0.5,
            0.01, key="w_cutoff",
            help=plain(f"Only this view uses it: FLEX explains the cases the model predicts {undesirable} at 0.5."),
        )
        quality = fc.models.quality_at_cutoff(held_out.y_true, held_out.p, cutoff)
        left, right = st.columns(2)
        with left:
            chart(fc.plotting.confusion_matrix_figure(quality, undesirable=undesirable, desirable=task.desirable_words),
                  analysis, key="confusion_matrix", tau=False)
            scores = quality.table()
            scores["measure"] = scores["measure"].str.replace("(undesirable)", f"({undesirable})", regex=False)
            for column in ("model", "always the most common outcome"):
                scores[column] = scores[column].map(lambda v: "n/a" if v != v else reporting.format_share(v, decimals=1))
            show_table(scores)
            base = undesirable if quality.baseline_predicts_undesirable else task.desirable_words
            st.caption(plain(
                f"Precision: of the cases predicted {undesirable}, the share that are; recall: of the cases that are "
                f"{undesirable}, the share predicted so; F1 combines the two. The baseline always predicts the most "
                f"common outcome of these rows ({base}); n/a where a share has no cases to be taken over."
            ))
        with right:
            chart(fc.plotting.calibration_figure(cache.calibration(task, model, analysis.model_id), undesirable=undesirable),
                  analysis, key="calibration", tau=False)
            st.caption(plain(
                f"Each point is a bin of predicted {probability} (0–0.1, 0.1–0.2, …): its mean prediction against the "
                f"share of its cases that really are {undesirable}. On the dashed line the probabilities can be read as "
                "chances; the bars count the cases per bin (a point over few cases says little)."
            ))
        rows_note = (f"Computed on {held_out.evaluated_on}: {len(held_out.rows):,} rows." if model.trained_here else
                     f"Computed on {held_out.evaluated_on}: {len(held_out.rows):,} rows. The model was trained elsewhere, "
                     "so these rows may include rows it was trained on, and the numbers may be optimistic.")
        st.caption(plain(rows_note))
        model_curves_view(analysis, quality)

st.subheader("Features")
st.caption(
    "Change a feature's kind, whether it can change (a way out never alters an immutable feature) "
    "and how it may change: a direction (continuous or ordinal), limits (a range LO:HI for a number, the "
    "allowed values a, b for a category) and an ordinal feature's order (a < b < c). Then press Apply: the "
    "model is retrained and new ways out are found that respect every constraint."
)
edited = st.data_editor(
    reporting.feature_table(task, labelled=True),
    key="feature_editor",
    hide_index=True,
    width="stretch",
    height="content",  # every feature visible: a fixed height hid the last ones
    disabled=["feature", "values"],
    column_config={
        "feature": st.column_config.Column(pinned=True),
        "kind": st.column_config.SelectboxColumn(options=list(fc.data.KINDS), required=True),
        "immutable": st.column_config.CheckboxColumn(),
        "direction": st.column_config.SelectboxColumn(options=["either", "increase", "decrease"], required=True),
        "limits": st.column_config.TextColumn(help="Numbers: LO:HI (either end may be empty). Categories: a, b, c."),
        "order": st.column_config.TextColumn(help="Ordinal features: levels from low to high, a < b < c."),
    },
)
edited = edited.assign(feature=task.feature_names)  # the lines are the features in order: back to column names
if st.button("Apply feature settings", key="apply_features", type="primary"):
    def feature_overrides(base: fc.TaskSpec) -> dict:
        base_kinds = {f.name: f.kind for f in base.features}
        return {
            "kinds": {r.feature: r.kind for r in edited.itertuples() if base_kinds[r.feature] != r.kind},
            "immutable": sorted(r.feature for r in edited.itertuples() if r.immutable),
            "constraints": reporting.table_constraints(edited),
            # The constraints between features and the words stay as they are (their own editors below apply them).
            **{k: v for k, v in st.session_state[S.OVERRIDES].items() if k in ("between", "words") and v is not None},
        }

    apply_overrides(feature_overrides, "feature settings")

st.subheader("The data's words")
st.caption(plain(
    "How the pages name each feature, its unit or currency and its levels, and the two outcomes (the data "
    "dictionary; docs/data-dictionary.md). Level words are written LEVEL = words; separated by ';'. After Apply, "
    "every page, chart and report uses them; the analysis runs again under them and its numbers stay the same."
))
bad_col, good_col = st.columns(2)
bad_words = bad_col.text_input("The outcome FLEX explains", value=task.undesirable_words,
                               key=f"w_undesirable_words_{task.fingerprint}")
good_words = good_col.text_input("The other outcome", value=task.desirable_words, key=f"w_desirable_words_{task.fingerprint}")
edited_words = st.data_editor(words.words_table(task), key=f"words_editor_{task.fingerprint}", hide_index=True,
                              width="stretch", height="content", disabled=[words.KEY_COLUMN],
                              column_config={words.KEY_COLUMN: st.column_config.Column(pinned=True),
                                             "level words": st.column_config.TextColumn(width="large")})
if st.button("Apply words", key="apply_words", type="primary"):
    apply_overrides(lambda base: {**st.session_state[S.OVERRIDES],
                                  "words": words.dictionary_from_table(edited_words, base, bad_words, good_words)},
                    "words")

st.subheader("Constraints between features")
st.caption(plain(
    "Rules of the domain that tie features together, which every way out must meet: the generators keep "
    "only candidates that do (DiCE's output is checked and what breaks a rule is dropped and counted). "
    + rules.LANGUAGE_HELP
))
with st.expander("Examples on this data"):
    show_table(rules.examples_table(constraint_examples(task.features)))  # a table: column names stay plain text
    st.caption("Shipped examples for the paper's data: examples/constraints/loan.txt and accidents.txt.")
written = st.text_area(
    "Constraints, one per line", value="\n".join(task.rule_texts), key=f"w_constraints_{task.fingerprint}",
    height=120, placeholder=next((e for _, e in constraint_examples(task.features)), ""),
)
texts, checks, errors = rules.checked_lines(written, task)
if texts:
    show_table(checks)
if errors:
    st.error(plain(f"{plural(len(errors), 'constraint')} cannot be applied; fix {'it' if len(errors) == 1 else 'them'} "
                   f"first. {errors[0]}"))
if st.button("Apply constraints", key="apply_constraints", type="primary", disabled=bool(errors)):
    apply_overrides(lambda base: {**st.session_state[S.OVERRIDES], "between": texts}, "constraints")
if task.rules:
    result = run_or_stop(analysis.global_result)
    st.markdown(plain(
        f"Applied: {plural(len(task.rules), 'constraint')}. In the global run over {len(result.query_index):,} cases, "
        f"{int(result.generator.get('counterfactuals_valid', 0)):,} "
        f"{term('valid ways out', 'counterfactuals')} were kept."
    ))
    show_table(rules.rules_effect_table(task, result.generator))
    for note in rules.rule_notes(result.notes, task):
        st.info(plain(note))
