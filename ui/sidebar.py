"""The shared sidebar: dataset, model, generator and sample sizes, with stable widget keys."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import flex_core as fc
from flex_core.formatting import format_number
from flex_core.limits import LIMITS, check
from ui import cache, paths, reporting
from ui import state as S
from ui.band import band_form
from ui.context import Analysis, active_model, quiet_analysis
from ui.glossary import TERMS_TOGGLE, term
from ui.text import plain


@cache.shared(copy=True)
def _peek(data: bytes, max_bytes: int):
    return fc.data.read_csv(data, max_bytes=max_bytes)


def activate(source: dict, *, model: str, encoding: str, seed: int, cv_folds: int, cv_rows: int) -> bool:
    """Load a dataset and fit (or check) the model on it; only on success does it replace the active one."""
    try:
        task = cache.load_base_task(source)
        if st.session_state[S.MODEL_FILE] is None and source["kind"] != "project":
            cache.fitted_model(task, task.fingerprint, model, encoding, seed, cv_folds, cv_rows)
        else:
            active_model(task, source, st.session_state[S.MODEL_FILE])
    except fc.FlexError as exc:
        st.error(plain(f"That dataset was not loaded: {exc} The previous dataset stays active."))
        return False
    except Exception as exc:  # whatever else a user's file triggers, the session must survive it
        st.error(f"That dataset was not loaded: it could not be read or trained on ({type(exc).__name__}). "
                 "Check it is a CSV with one row per case. The previous dataset stays active.")
        return False
    st.session_state[S.DATASET] = source
    st.session_state[S.BAND] = source.get("band")  # a numeric target's band, which the link then carries
    S.reset_analysis()
    return True


def _model_settings() -> dict:
    s = st.session_state
    return dict(model=s[S.MODEL], encoding=s[S.ENCODING], seed=int(s[S.SEED]), cv_folds=int(s[S.CV_FOLDS]),
                cv_rows=int(s[S.CV_ROWS]))


def single_value_columns(frame) -> dict[str, str]:
    """Columns holding one value only (blanks aside), each with that value: none of them can be the outcome.

    The CSV form names them, so a file whose outcome column lost a class is told so instead of the choice
    falling silently on another column (which then trained a model on, say, ``zone``).
    """
    found = {}
    for name in frame.columns:
        values = frame[name].dropna().astype(str).str.strip().replace("", pd.NA).dropna().unique()
        if len(values) == 1:
            found[str(name)] = str(values[0])
    return found


def single_value_message(columns: dict[str, str], shown: int = 4) -> str:
    """One message naming the columns of :func:`single_value_columns` (the first ``shown``) and what to fix."""
    named = ", ".join(f"{name!r} ({value!r})" for name, value in list(columns.items())[:shown])
    more = f" and {len(columns) - shown} more" if len(columns) > shown else ""
    subject = (f"Column {named} holds one value only, so it cannot" if len(columns) == 1 else
               f"Columns {named}{more} hold one value only, so none of them can")
    return (f"{subject} be the outcome: a classifier needs rows of two outcomes. If the outcome is there, add the "
            "rows with the other outcome and upload the file again; otherwise choose the outcome column below.")


def _csv_form() -> None:
    limit = cache.max_file_bytes()
    upload = st.file_uploader("CSV file", type=["csv", "tsv", "txt"], key="sb_csv_file",
                              help=f"Comma, semicolon, tab or | separated; up to {limit // 2**20} MB.")
    if upload is None:
        st.caption("Upload a CSV with one row per case and a column holding the outcome.")
        return
    data = upload.getvalue()
    try:
        frame = _peek(data, limit)
    except fc.FlexError as exc:
        st.error(plain(f"{exc} The previous dataset stays active."))
        return
    for note in frame.attrs.get("notes", []):  # what read_csv guessed (delimiter, encoding)
        st.caption(plain(note))
    try:  # only columns that can be an outcome are offered: picking a speed column used to fail later, obscurely
        outcomes = fc.data.outcome_columns(frame)
    except fc.FlexError as exc:
        st.error(plain(exc))
        return
    # A column of one value may be the outcome that lost a class: name it, and pick nothing in its place.
    single = single_value_columns(frame)
    if single:
        st.error(plain(single_value_message(single)))
    numbers = fc.data.number_columns(frame)  # a number as the outcome: the form asks for its band
    kept = st.session_state[S.BAND]  # a link's or a reload's band: the form starts from its target
    if kept and kept["target"] in numbers and "sb_csv_target" not in st.session_state:
        st.session_state["sb_csv_target"] = kept["target"]
    target = st.selectbox("Target column (the outcome)", [*outcomes, *numbers], key="sb_csv_target",
                          index=None if single else 0, placeholder="Choose the outcome column",
                          format_func=lambda c: f"{c} (a number)" if c in numbers else c,
                          help=f"Columns with 2 to {fc.data.MAX_OUTCOME_LEVELS} different values, each in at least two rows, "
                               "or a column of numbers (you then say which of its values are undesirable).")
    if target is None:
        return
    if target in numbers:  # a measured number: its band of undesirable values, never one value against the rest
        band, undesirable, desired = band_form(frame, target), [], []
    else:
        band = None
        values = sorted(frame[target].dropna().astype(str).unique().tolist())
        undesirable = st.multiselect("Undesirable outcomes", values, key="sb_csv_undesirable")
        desired = st.multiselect(
            "Outcome a way out must reach (optional)", [v for v in values if v not in undesirable], key="sb_csv_desired",
            help="With more than two outcomes: a way out counts only when the model predicts this one (with the "
                 "validity margin), not merely another outcome that is not undesirable. Empty: any other outcome.",
        ) if len(values) > 2 else []
    immutable = st.multiselect(
        "Features that cannot change", [c for c in frame.columns if c != target], key="sb_csv_immutable"
    )
    identifiers = fc.data.identifier_columns(frame, target=target)
    use_identifiers = st.multiselect(
        "Identifier columns to use", identifiers, key="sb_csv_identifiers",
        help="Every value of these columns is unique, so they name rows rather than describe them and are left "
        "out of the features. Pick one to use it anyway.",
    ) if identifiers else []
    missing = st.radio("Rows with missing or unreadable values", ("drop", "impute"), key="sb_csv_missing",
                       horizontal=True, help="Text in a number column and infinite values count as missing.")
    words = st.file_uploader("Data dictionary (optional)", type=["toml"], key="sb_csv_dictionary",
                             help="A TOML file with the features' display names, units, formats, currencies and level "
                                  "words and the outcome's words (see docs/data-dictionary.md).")
    if st.button("Load CSV", key="sb_csv_load", type="primary", disabled=target in numbers and band is None):
        if target not in numbers and not undesirable:
            st.error("Pick at least one undesirable outcome value before loading.")
            return
        outcome = {"band": band} if band is not None else {"undesirable": undesirable, **({"desired": desired} if desired else {})}
        source = {"kind": "csv", "data": data, "filename": upload.name, "target": target, **outcome,
                  "immutable": immutable, "use_identifiers": use_identifiers, "missing": missing}
        if words is not None:
            try:
                source["dictionary"] = words.getvalue().decode("utf-8")
            except UnicodeDecodeError:
                st.error("The data dictionary is not UTF-8 text: save the TOML file as UTF-8. The previous dataset stays active.")
                return
        activate(source, **_model_settings())


def _paper_form(kind: str) -> None:
    label = "loan_approval_dataset.csv" if kind == "loan" else "RTA_Dataset.csv"
    upload = st.file_uploader(f"Upload {label}", type=["csv"], key=f"sb_{kind}_file")
    path = "" if paths.hosted() else st.text_input(
        "…or its path on the server", **S.bound(S.LOAN_PATH if kind == "loan" else S.ACCIDENTS_PATH),
        placeholder=f"/data/{label}",
        help="Only inside the folders this server may read (FLEX_DATA_ROOTS).",
    )
    source: dict = {"kind": kind}
    if kind == "accidents":
        source["missing"] = st.radio(
            "Rows with missing values", ("drop", "impute"), **S.bound(S.ACCIDENTS_MISSING, ("drop", "impute")),
            horizontal=True,
        )
    if st.button("Load", key=f"sb_{kind}_load", type="primary"):
        if upload is not None:
            source.update(data=upload.getvalue(), filename=upload.name)
        elif path.strip():
            source["path"] = path.strip()
        else:
            st.error(f"Upload {label}{'' if paths.hosted() else ' or type its path'}, then press Load.")
            return
        activate(source, **_model_settings())


def _project_form() -> None:
    path = st.text_input("Folder written by explainer.save(DIR)", **S.bound(S.PROJECT_PATH), placeholder="/path/to/project")
    if st.button("Open", key="sb_project_open", type="primary"):
        if not path.strip():
            st.error("Type the path of a folder written by FlexExplainer.save, then press Open.")
            return
        # On the notebook's last settings, as a folder opened at start-up (--project) is: the same numbers.
        if activate({"kind": "project", "path": path.strip()}, **_model_settings()):
            S.apply_project_settings(path.strip())


def _model_file_form() -> None:
    """Upload a .skops file; it replaces the active model only when it loads and fits the active data."""
    upload = st.file_uploader("Model file (.skops)", type=["skops"], key="sb_model_upload")
    if upload is not None and st.button("Use this model", key="sb_model_use", type="primary"):
        _use_model_file({"name": upload.name, "data": upload.getvalue()})
    # After the button: the run that loads a file already names it here, not only the next one.
    active = st.session_state[S.MODEL_FILE]
    if active is not None:
        st.caption(f"Active model file: **{plain(active['name'])}**")
    if upload is not None and (active is None or active["data"] != upload.getvalue()):
        # Says which file the button would check: a file chosen over another is not in use until it is pressed.
        st.caption(f"Chosen, not yet in use: **{plain(upload.name)}**. *Use this model* checks it, then uses it.")
    if upload is None:
        st.caption("Save a fitted classifier with skops.io.dump. Only the scikit-learn, XGBoost and LightGBM classes FLEX "
                   "supports load (docs/bring-your-own-model.md); any other file is refused before anything in it runs.")


def _use_model_file(candidate: dict) -> None:
    """Make ``candidate`` ({"name", "data"}) the active model if it loads and fits the active data; else one error."""
    try:  # a refused file: the message says so and why (nothing in it was built or run)
        cache.model_file(cache.file_digest(candidate["data"]), candidate["data"])
    except fc.FlexError as exc:
        st.error(plain(f"{exc} The previous model stays active."))  # the message names types read from the file
        return
    try:
        base = cache.load_base_task(st.session_state[S.DATASET])
        task = cache.task_with_overrides(base, base.fingerprint, st.session_state[S.OVERRIDES])
        active_model(task, st.session_state[S.DATASET], candidate)
    except fc.FlexError as exc:
        st.error(plain(f"That model was not used: {exc} The previous model stays active."))
        return
    st.session_state[S.MODEL_FILE] = candidate
    S.reset_analysis()


def _forget_model_file() -> None:
    if st.session_state[S.MODEL_SOURCE] == S.MODEL_SOURCES[0]:
        st.session_state[S.MODEL_FILE] = None
        S.reset_analysis()


def _parse_optional_number(setting: str, text: str):
    text = text.strip()
    if not text:
        return None
    for kind in (int, float):
        try:
            value = kind(text)
        except ValueError:
            continue
        return check(setting, value, label=f"The generator setting {setting}") if setting in LIMITS else value
    raise fc.ConfigError(f"The generator setting {setting!r} must be a number or empty (got {text!r}).")


#: How the validity settings read (see flex_core/counterfactuals/_validity.py).
VALIDITY_NOTE = ("A way out counts when the model's probability of the undesirable outcome is below 0.5 − margin, "
                 "and still is with every changed number "
                 "moved radius × its range back toward the case's value. Margin 0 and radius 0 is the paper's setting "
                 "(P < 0.5); a tie at 0.5 never counts.")


#: What the margin means for a number target (flex_core.data.Band.score: docs/generators.md#regression-targets).
BAND_VALIDITY_NOTE = (" For a number target the probability is its off-band score, so the margin is in the target's "
                      "units: the predicted number must lie inside the desired band by s × margin / (0.5 − margin), "
                      "s a tenth of the target's standard deviation (0 with margin 0).")


def _predicted(analysis) -> str:
    """"1,612 predicted" or, when cases are left out as borderline or memorised, "1,505 cases to explain of 1,612
    predicted" ("cases to explain (factuals)" with the analyst's terms on)."""
    pool = len(analysis.pool)
    candidates = int(analysis.explainer.factual_selection.get("candidates", pool))
    if candidates == pool:
        return f"{candidates:,} predicted"
    return f"{pool:,} {term('cases to explain', 'factuals')} of {candidates:,} predicted"


def _range(setting: str) -> dict:
    """min_value and max_value of a number box: the setting's limit (flex_core.limits), when it has one."""
    if setting not in LIMITS:
        return {}
    limit = LIMITS[setting]
    kind = int if limit.integer else float
    return {"min_value": kind(limit.low), "max_value": kind(limit.high)}


#: What each generator setting does, shown as its tooltip (every offered setting has one: tests/pages/test_generator_help.py).
SETTING_HELP = {
    "margin": "A way out counts when the model's probability of the undesirable outcome falls below 0.5 minus this "
              "margin (0: below 0.5, the paper's rule).",
    "radius": "…and stays below it with every changed number moved back this share of its range toward the case's "
              "value (0: no such check).",
    "pairs": "Also read two-feature trade-offs, exactly, for cases with fewer one-feature ways out than requested "
             "(off: one-feature changes only; cases without any still go to the random search).",
    "samples": "Random search: candidate rows tried per case and round (empty: twice the ways out requested; "
               "batch-plausible: as many nearest rows, doubled each round). The tree generator searches this way only "
               "for cases with no one- or two-feature way out.",
    "max_rounds": "Random search: rounds before a case still short of ways out is given up (its count is recorded).",
    "posthoc_sparsity": "DiCE's own step that moves changes back toward the case (slow: one model call per row and "
                        "step).",
    "time_limit": "Seconds after which no new case is started; the cases not served are named and get no ways out "
                  "(empty: no limit).",
}


def _generator_settings(name: str) -> None:
    """One widget per public setting; only settings changed from their defaults are passed on."""
    defaults = fc.counterfactuals.generator_defaults(name)
    S.init_generator_settings(name, defaults)
    changed = {}
    with st.expander("Generator settings"):
        if "margin" in defaults and "radius" in defaults:
            st.caption(VALIDITY_NOTE + (BAND_VALIDITY_NOTE if st.session_state[S.DATASET].get("band") else ""))
        for setting, default in defaults.items():
            key = S.generator_setting_key(name, setting)
            label, tip = setting.replace("_", " "), SETTING_HELP.get(setting)
            value: object
            if isinstance(default, bool):
                value = st.checkbox(label, help=tip, **S.bound(key))
            elif isinstance(default, int):
                value = int(st.number_input(label, step=1, help=tip, **_range(setting), **S.bound(key)))
            elif isinstance(default, float):
                value = float(st.number_input(label, help=tip, **_range(setting), **S.bound(key)))
            elif default is None:
                text = st.text_input(label, placeholder="none", help=tip, **S.bound(key))
                try:
                    value = _parse_optional_number(setting, text)
                except fc.FlexError as exc:
                    st.error(plain(exc))
                    value = None
            else:  # fixed by the generator's name (e.g. DiCE's method)
                st.text_input(label, value=str(default), key=S.widget_key(key), disabled=True)
                value = default
            if value != default:
                changed[setting] = value
    st.session_state[S.GENERATOR_SETTINGS] = {name: changed}


def multiclass_note(model: fc.FittedModel, task: fc.TaskSpec | None = None) -> str:
    """For a model with more than two classes: which count as undesired, and that the rest count as desired (or, with
    a desired outcome, which one a way out must reach)."""
    if task is not None and task.desired and model.trained_here:  # its classes are codes: say it in the data's values
        return (f" A way out must reach {' or '.join(map(str, task.desired))}, not just leave "
                f"{' / '.join(map(str, task.undesirable))}.")
    if len(model.classes) <= 2:
        return ""
    if model.desired and not model.trained_here:  # a counterfactual must reach these, not just leave the undesired
        return (f" The model has {len(model.classes)} classes: {' / '.join(map(str, model.undesired))} counts as "
                f"undesired, and a way out must reach {' or '.join(map(str, model.desired))}.")
    desired = [str(c) for c in model.classes if c not in model.undesired]
    return (f" The model has {len(model.classes)} classes: {' / '.join(map(str, model.undesired))} counts as undesired, "
            f"the others ({', '.join(desired)}) as desired (one against the rest).")


#: What each of fc.models.MODELS fits for a number target (the fitted model's ``label``; a test holds them equal).
REGRESSOR_LABELS = {"rf": "Random forest regressor (100 trees)", "gb": "Histogram gradient boosting regressor",
                    "lr": "Linear regression"}

def _regressor_box() -> None:
    """The model choice for a number target, named as the regressors it fits. A widget of its own (not the
    classifier box's key): a box whose option words change between runs would hand back the old words as the
    setting."""
    options = list(fc.models.MODELS)
    st.selectbox("Regressor", options, index=options.index(st.session_state[S.MODEL]), key=REGRESSOR_KEY,
                 on_change=S.bind(REGRESSOR_KEY, S.MODEL), format_func=lambda m: REGRESSOR_LABELS[m],
                 help="For a number target the model of the same kind that predicts a number: a random forest or "
                      "gradient-boosting regressor, or a linear regression.")


#: The regressor box's widget key.
REGRESSOR_KEY = "w_sb_regressor"

#: The sidebar's label for the model a project folder brings (in place of "Train here").
PROJECT_MODEL = "The project's model"


def render_sidebar() -> Analysis | None:
    """Draw the sidebar; returns the current analysis (None after an error was shown)."""
    with st.sidebar:
        if st.session_state[S.LINK_ERROR]:
            st.warning(plain(st.session_state[S.LINK_ERROR]))
        st.subheader("Dataset")
        # Hosted mode reads uploads only: no project folders from the server (except one opened at start-up).
        kinds = S.SOURCE_KINDS[:4] if paths.hosted() and st.session_state[S.SOURCE] != S.SOURCE_KINDS[4] else S.SOURCE_KINDS
        kind = st.radio("Source", kinds, **S.bound(S.SOURCE, kinds))
        if kind == S.SOURCE_KINDS[0]:
            name = st.selectbox(
                "Built-in dataset", list(fc.data.BUILTIN_DATASETS), **S.bound(S.BUILTIN, fc.data.BUILTIN_DATASETS),
                help="toy2d: 2 features (the paper's Fig. 2); synthetic-regional: features planted as important "
                "everywhere and in one region only; breast-cancer: 30 continuous features.",
            )
            if st.session_state[S.DATASET] != {"kind": "builtin", "name": name}:
                activate({"kind": "builtin", "name": name}, **_model_settings())
        elif kind == S.SOURCE_KINDS[1]:
            _csv_form()
        elif kind == S.SOURCE_KINDS[4]:
            _project_form()
        else:
            _paper_form("loan" if kind == S.SOURCE_KINDS[2] else "accidents")
        dataset_slot = st.empty()

        st.subheader("Model")
        # On a project folder the first choice is the folder's own model, not one trained here: say so.
        on_project = st.session_state[S.DATASET]["kind"] == "project"
        source = st.radio("Model", S.MODEL_SOURCES, **S.bound(S.MODEL_SOURCE, S.MODEL_SOURCES, on_change=_forget_model_file),
                          horizontal=True, label_visibility="collapsed",
                          format_func=lambda o: PROJECT_MODEL if on_project and o == S.MODEL_SOURCES[0] else o)
        if source == S.MODEL_SOURCES[1]:
            _model_file_form()
        elif st.session_state[S.DATASET]["kind"] == "project":
            st.caption("The project folder's own model is active.")
        else:
            if st.session_state[S.DATASET].get("band"):  # a number target: the same kind of model, as a regressor
                _regressor_box()
            else:
                st.selectbox("Classifier", list(fc.models.MODELS), **S.bound(S.MODEL, fc.models.MODELS),
                             format_func=lambda m: fc.models.MODELS[m])
            st.radio("Categorical encoding", ("onehot", "label"), **S.bound(S.ENCODING, ("onehot", "label")), horizontal=True)
            st.number_input("Cross-validation folds (0 skips it)", step=1, **_range("cv_folds"), **S.bound(S.CV_FOLDS))
            st.number_input("Cross-validate on at most this many rows", step=1000, **_range("cv_rows"), **S.bound(S.CV_ROWS),
                            help="On large data, cross-validation runs on a stratified random sample of the training "
                            "rows (the model still trains on all of them); the metrics say when it did.")
        metrics_slot = st.container()

        st.subheader("Counterfactuals")
        generator = st.selectbox(
            "Generator", list(fc.counterfactuals.GENERATORS), **S.bound(S.GENERATOR, fc.counterfactuals.GENERATORS),
            format_func=lambda g: f"{g} — {fc.counterfactuals.GENERATORS[g][1]}"
        )
        _generator_settings(generator)
        default_refine = fc.counterfactuals.default_refine(generator)
        st.selectbox(
            "Size of changes", ("auto", *fc.counterfactuals.REFINE_MODES), **S.bound(S.REFINE, ("auto", *fc.counterfactuals.REFINE_MODES)),
            format_func=lambda r: {"auto": f"the generator's default ({default_refine})",
                                   "minimal": "minimal: shrunk to what the model needs",
                                   "none": "as the generator drew them"}[r],
            help="minimal: each change to a number or an ordered level is moved back toward the case's own value "
                 "as far as the prediction stays desirable, so μ and F at high τ say how much must change. "
                 "none: the generator's values (DiCE as in the paper).",
        )
        st.number_input("Seed", step=1, **_range("seed"), **S.bound(S.SEED))
        st.number_input(term("Cases to explain", "N_F"), step=10, **_range("n_factuals"), **S.bound(S.N_FACTUALS))
        st.number_input(term("Ways out per case", "N_cf"), step=1, **_range("n_cf"), **S.bound(S.N_CF))
        st.toggle(TERMS_TOGGLE, **S.bound(S.TERMS),
                  help="The pages lead with plain words; this adds the FLEX paper's terms beside them (the Glossary "
                       "page explains each).")

        analysis = quiet_analysis()
        if analysis is not None:
            _show_active(analysis, dataset_slot, metrics_slot)
        return analysis


def _f1_metric(slot, metrics, own: str, weighted: str, undesirable: str, prefix: str = "") -> None:
    """The undesirable outcome's own F1 (a majority guess cannot inflate it), the weighted one in its help;
    a model scored before it was measured shows the weighted F1, labelled so."""
    if metrics.get(own) is not None:
        slot.metric(f"{prefix}F1 ({plain(undesirable)})", f"{metrics[own]:.1%}",
                    help=f"F1 of the outcome explained; over both outcomes, weighted by rows: {metrics[weighted]:.1%}")
    else:
        slot.metric(f"{prefix}F1 (weighted)", f"{metrics[weighted]:.1%}", help="both outcomes' F1, weighted by their rows")


def _show_active(analysis: Analysis, dataset_slot, metrics_slot) -> None:
    """The active dataset's line and the model's scores, in the slots kept for them above."""
    task, metrics = analysis.task, analysis.model.metrics
    dataset_slot.caption(
        f"Active: **{plain(task.name)}** — "
        + plain(f"{reporting.plural(len(task.frame), 'row')}, {reporting.plural(len(task.features), 'feature')}, "
                f"{_predicted(analysis)} {task.undesirable_words}."
                + multiclass_note(analysis.model, analysis.task))
    )
    left, right = metrics_slot.columns(2)
    if task.band is not None and metrics.get("test_mae") is not None:  # a regressor: its numbers' errors
        left.metric("R²", f"{metrics['test_r2']:.2f}", help="1 is exact, 0 no better than predicting the average "
                    f"({metrics.get('evaluated_on', 'the test rows')})")
        right.metric("Mean error", format_number(metrics["test_mae"]),
                     help=f"Mean absolute error; predicting the average: {format_number(metrics['baseline_mae'])}")
    elif "cv_accuracy_mean" in metrics:
        left.metric("CV accuracy", f"{metrics['cv_accuracy_mean']:.1%}", help=f"± {metrics['cv_accuracy_std']:.1%} over {metrics['cv_folds']} folds")
        _f1_metric(right, metrics, "cv_f1_undesirable_mean", "cv_f1_mean", task.undesirable_words, "CV ")
    elif "test_accuracy" in metrics:
        left.metric("Accuracy", f"{metrics['test_accuracy']:.1%}", help=f"on {metrics.get('evaluated_on', 'the test rows')}")
        _f1_metric(right, metrics, "test_f1_undesirable", "test_f1", task.undesirable_words)
    elif not metrics.get("note"):
        metrics_slot.caption("No outcomes to score the model against.")
    if metrics.get("note"):
        metrics_slot.caption(plain(metrics["note"]))
