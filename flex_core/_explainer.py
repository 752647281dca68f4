"""FlexExplainer: FLEX for any fitted classifier, in a few lines from a notebook."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ._errors import ConfigError, DataError
from ._results import FlexResult, RegionalResult
from ._typing import Rows
from .importance._metrics import DEFAULT_TAU

__all__ = ["FlexExplainer"]

#: File names inside a folder written by :meth:`FlexExplainer.save`.
PROJECT_FILES = {"data": "data.csv", "model": "model.skops", "settings": "settings.json"}
_ROW = "__row__"


class FlexExplainer:
    """FLEX importances of a fitted classifier on a data frame.

    Parameters
    ----------
    model : fitted classifier
        Any object with ``predict_proba`` and ``classes_`` that takes a DataFrame with
        X's columns: a scikit-learn Pipeline, or an XGBoost / LightGBM classifier
        through its scikit-learn API.
    X : DataFrame of shape (n_rows, n_columns)
        The rows to explain and to draw counterfactual values from. Rows are
        identified by X's index when it holds unique integers (a RangeIndex: the
        0-based position), else by position. Columns the model does not take (when it
        records ``feature_names_in_``) are left out, and said so in ``task.notes``.
    undesired : value or sequence of values
        The class(es) of ``model.classes_`` that are the undesirable outcome.
    immutable : sequence of str, optional
        Features a counterfactual may not change.
    kinds : mapping feature -> "categorical" | "continuous" | "ordinal", optional
        Overrides of the kinds inferred from X (text, booleans and numbers with at most
        two values are categorical, other numbers continuous).
    y : array-like of shape (n_rows,), optional
        True outcomes (class values): gives accuracy and F1 on X. Without it the
        task's outcome column holds the model's predictions.
    seed : int
        Seeds the factual sample and the generator; every result is reproducible.
    generator : str
        A name from ``flex_core.counterfactuals.GENERATORS`` (default: the CLI's).
    generator_settings : mapping, optional
        Settings of that generator (e.g. ``{"n_jobs": 2}``).
    n_cf : int
        Counterfactuals per factual (the CLI's default, 10).
    tau : float or mapping feature -> float
        τ, the smallest normalised change of a continuous feature that counts.
    cache_dir : str or Path, optional
        Keep generated counterfactuals here between sessions.
    refine : {"minimal", "none"}, optional
        Shrink each change toward the factual while the outcome stays desirable
        (default: "minimal" for the batch generators, "none" for DiCE, as the CLI).
    monotone, bounds, allowed, ordinal_orders : mapping, optional
        Actionability constraints, as :func:`flex_core.make_task` takes them: a direction
        per feature ("increase" / "decrease"), a permitted (low, high) range, the levels
        a categorical feature may change to, and an order of levels (making it ordinal).

    Attributes
    ----------
    task : TaskSpec
    model : FittedModel
    """

    def __init__(
        self,
        model,
        X: pd.DataFrame,
        *,
        undesired,
        immutable: Iterable[str] | None = None,
        kinds: Mapping[str, str] | None = None,
        y=None,
        seed: int = 0,
        generator: str | None = None,
        generator_settings: Mapping | None = None,
        n_cf: int = 10,
        tau: float | Mapping[str, float] = DEFAULT_TAU,
        cache_dir: str | Path | None = None,
        refine: str | None = None,
        monotone: Mapping[str, str] | None = None,
        bounds: Mapping[str, Sequence] | None = None,
        allowed: Mapping[str, Iterable] | None = None,
        ordinal_orders: Mapping[str, Sequence] | None = None,
        name: str = "notebook data",
    ):
        from .counterfactuals import DEFAULT_GENERATOR, make_generator
        from .data import make_task
        from .models._fit import FittedModel, check_columns, model_feature_names, resolve_undesired

        if not isinstance(X, pd.DataFrame) or X.empty:
            raise DataError("X must be a non-empty pandas DataFrame with the model's feature columns.")
        if not callable(getattr(model, "predict_proba", None)) or not hasattr(model, "classes_"):
            raise ConfigError(f"The model must be a fitted classifier with predict_proba and classes_; got {type(model).__name__}.")
        chosen = resolve_undesired(tuple(model.classes_), undesired)
        columns = model_feature_names(model)
        if columns is not None:
            check_columns(columns, [str(c) for c in X.columns])
        features = [str(c) for c in X.columns] if columns is None else columns
        X = X.copy()
        X.columns = [str(c) for c in X.columns]
        index_is_id = pd.api.types.is_integer_dtype(X.index) and X.index.is_unique and (X.index >= 0).all()
        if not index_is_id:
            X.index = pd.RangeIndex(len(X))
        target = "outcome" if "outcome" not in X.columns else "__outcome__"
        notes = []
        frame = X[features].copy()
        if y is not None:
            if len(y) != len(X):
                raise DataError(f"y has {len(y)} values for {len(X)} rows of X.")
            frame[target] = np.asarray(y, dtype=object)
        else:
            incomplete = frame.isna().any(axis=1)
            if incomplete.any():
                raise DataError(
                    f"{int(incomplete.sum())} row(s) of X have missing values; drop or impute them first "
                    "(or pass y, and they are dropped and counted)."
                )
            frame[target] = np.asarray(model.predict(frame), dtype=object)
            notes.append("No y was given: the outcome column holds the model's predictions.")
        left_out = [c for c in X.columns if c not in set(features)]
        if left_out:
            notes.append(f"Left out column(s) the model does not take: {', '.join(left_out)}.")
        self.task = make_task(
            frame,
            target=target,
            undesirable=chosen,
            features=features,
            kinds=kinds,
            immutable=immutable or (),
            monotone=monotone,
            bounds=bounds,
            allowed=allowed,
            ordinal_orders=ordinal_orders,
            name=name,
            notes=notes,
            source="python",
        )
        given = self.task.frame
        self.model = FittedModel.from_estimator(
            model,
            self.task,
            undesired=chosen,
            X_test=None if y is None else self.task.X,
            y_test=None if y is None else given[target].to_numpy(),
            name=type(model).__name__,
            evaluated_on="the rows of X (training rows give optimistic scores)",
        )
        self.y_given = y is not None
        self.seed = int(seed)
        self.n_cf = int(n_cf)
        self.tau = tau
        self.cache_dir = cache_dir
        self.refine = refine
        self.generator_name = generator or DEFAULT_GENERATOR
        self.generator_settings = dict(generator_settings or {})
        self.generator = make_generator(self.generator_name, **self.generator_settings)
        self._stores: dict[int, object] = {}
        self._last_global: FlexResult | None = None
        self._last_region: RegionalResult | None = None

    # -- the pipeline ------------------------------------------------------------------------
    def store(self, *, n_cf: int | None = None):
        """The counterfactual store for n_cf (default the explainer's): one per setting, reused by every call."""
        from .counterfactuals import CounterfactualStore

        n_cf = self.n_cf if n_cf is None else int(n_cf)
        if n_cf not in self._stores:
            self._stores[n_cf] = CounterfactualStore(
                self.task, self.model, self.generator, n_cf=n_cf, seed=self.seed, directory=self.cache_dir,
                refine=self.refine,
            )
        return self._stores[n_cf]

    def explain_global(
        self,
        *,
        n_factuals: int = 200,
        n_cf: int | None = None,
        tau=None,
        sufficiency: bool = False,
        repeats: int = 1,
        generators: Sequence[str] = (),
        progress=None,
    ) -> FlexResult:
        """Global FLEX over a seeded random sample of ``n_factuals`` rows the model predicts undesired.

        ``sufficiency=True`` adds flip_alone and needed shares with intervals, and the necessity and sufficiency ratios, per feature (two generator runs
        per feature); ``repeats=N`` regenerates with N seeds and adds ``frequency_seed_sd``;
        ``generators=["dice-random"]`` reruns the factuals with those generators and adds
        ``generator_sensitivity`` (does a finding depend on the generator?).
        """
        from .importance import run_global

        result = run_global(self.store(n_cf=n_cf), n_factuals=n_factuals, tau=self.tau if tau is None else tau,
                            sufficiency=sufficiency, repeats=repeats, generators=generators, progress=progress)
        self._last_global = result
        return result

    def explain_region(
        self,
        *,
        where: str | Mapping | None = None,
        k: int = 4,
        query: int | None = None,
        n_factuals: int = 200,
        n_cf: int | None = None,
        tau=None,
        sufficiency: bool = False,
        repeats: int = 1,
        generators: Sequence[str] = (),
        progress=None,
    ) -> RegionalResult:
        """Regional FLEX: a query factual (default a seeded random one meeting ``where``) and its k Hamming neighbours.

        ``where`` is ``{"feature": value}`` or ``"feature=value"``; the region is compared
        with global FLEX at the same n_factuals, n_cf and τ.
        """
        from .importance import random_query, run_regional

        tau = self.tau if tau is None else tau
        criterion = _criterion_text(where)
        global_result = self.explain_global(n_factuals=n_factuals, n_cf=n_cf, tau=tau, progress=progress)
        store = self.store(n_cf=n_cf)
        if query is None:
            query = random_query(store, where=criterion, seed=self.seed)
        result = run_regional(store, global_result, query=int(query), k=k, where=criterion, tau=tau,
                              sufficiency=sufficiency, repeats=repeats, generators=generators, progress=progress)
        self._last_region = result
        return result

    def counterfactuals(self, rows: Rows, *, n_cf: int | None = None, progress=None):
        """The counterfactuals of these rows (a CounterfactualSet; ``.to_frame(explainer.task)`` shows them)."""
        return self.store(n_cf=n_cf).ensure(rows, progress=progress)

    def shap(self, rows: Rows | None = None, **options):
        """SHAP on the rows (default: the last global result's factuals); options as :func:`~flex_core.compare.shap_importance`."""
        from .compare import shap_importance

        if rows is None:
            rows = (self._last_global or self.explain_global()).query_index
        return shap_importance(self.model, self.task, rows, **{"seed": self.seed, **options})

    def lime(self, rows: Rows | None = None, **options):
        """LIME on the rows (default: the last region's members); options as :func:`~flex_core.compare.lime_importance`."""
        from .compare import lime_importance

        if rows is None:
            if self._last_region is None:
                raise ConfigError("Pass rows, or call explain_region first: LIME explains a region's members by default.")
            rows = self._last_region.members
        return lime_importance(self.model, self.task, rows, **{"seed": self.seed, **options})

    # -- a project folder the app opens -----------------------------------------------------------
    def settings(self) -> dict:
        """What :meth:`save` writes to settings.json (everything but the data and the model)."""
        task = self.task
        return {
            "format": "flex-project/1",
            "name": task.name,
            "target": task.target,
            "y_given": self.y_given,
            "undesired": [_plain(c) for c in self.model.undesired],
            "features": task.feature_names,
            "kinds": {f.name: f.kind for f in task.features},
            "ordinal_orders": {f.name: list(f.levels) for f in task.features if f.kind == "ordinal"},
            "immutable": task.immutable_names,
            "raw_dtypes": dict(task.raw_dtypes),
            "seed": self.seed,
            "generator": self.generator_name,
            "generator_settings": self.generator_settings,
            "n_cf": self.n_cf,
            "tau": self.tau,
            "refine": self.refine,
            "monotone": {f.name: f.direction for f in task.features if f.direction},
            "bounds": {f.name: list(f.bounds) for f in task.features if f.bounds is not None},
            "allowed": {f.name: list(f.allowed) for f in task.features if f.allowed is not None},
        }

    def save(self, directory: str | Path) -> Path:
        """Write data.csv, model.skops and settings.json to ``directory``; :meth:`load` and the app open it.

        data.csv holds the rows in the model's own column types with their ids, written
        formula-safe (a text cell such as ``=1+1`` gets a leading quote, which
        :meth:`load` takes off again).
        """
        from .data import to_safe_csv
        from .models import save_model

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        frame = self.model.estimator_input(self.task.X)
        frame[self.task.target] = self.task.frame[self.task.target].to_numpy()
        frame.index.name = _ROW
        to_safe_csv(frame, directory / PROJECT_FILES["data"], index=True)
        save_model(self.model.pipeline, directory / PROJECT_FILES["model"])
        (directory / PROJECT_FILES["settings"]).write_text(json.dumps(self.settings(), indent=2, default=str) + "\n")
        return directory

    @classmethod
    def load(cls, directory: str | Path, *, cache_dir: str | Path | None = None) -> FlexExplainer:
        """The explainer :meth:`save` wrote to ``directory`` (the model through the trusted-types check)."""
        from .models import load_model

        directory = Path(directory)
        missing = [name for name in PROJECT_FILES.values() if not (directory / name).is_file()]
        if missing:
            raise DataError(f"{directory} is not a FLEX project folder: {', '.join(missing)} missing (write one with explainer.save).")
        try:
            settings = json.loads((directory / PROJECT_FILES["settings"]).read_text())
        except json.JSONDecodeError as exc:
            raise DataError(f"settings.json is not valid JSON ({exc.msg}, line {exc.lineno}).") from None
        text_columns = {c: str for c, dtype in settings.get("raw_dtypes", {}).items() if dtype == "object"}
        frame = pd.read_csv(directory / PROJECT_FILES["data"], index_col=_ROW, dtype={settings["target"]: str, **text_columns})
        for column in [*text_columns, settings["target"]]:
            if column in frame.columns:  # undo to_safe_csv's quote in front of formula-like text
                frame[column] = frame[column].str.replace(r"^'(?=[=+\-@\t\r])", "", regex=True)
        target = settings["target"]
        if target not in frame.columns:
            raise DataError(f"data.csv has no outcome column {target!r}.")
        y = frame[target] if settings.get("y_given") else None
        if y is not None:
            y = _as_classes(y, settings["undesired"])
        return cls(
            load_model(directory / PROJECT_FILES["model"]),
            frame.drop(columns=[target]),
            undesired=settings["undesired"],
            immutable=settings.get("immutable"),
            kinds=settings.get("kinds"),
            y=y,
            seed=settings.get("seed", 0),
            generator=settings.get("generator"),
            generator_settings=settings.get("generator_settings"),
            n_cf=settings.get("n_cf", 10),
            tau=settings.get("tau", DEFAULT_TAU),
            refine=settings.get("refine"),
            monotone=settings.get("monotone") or None,
            bounds=settings.get("bounds") or None,
            allowed=settings.get("allowed") or None,
            ordinal_orders=settings.get("ordinal_orders") or None,
            cache_dir=cache_dir,
            name=settings.get("name", directory.name),
        )

    def dashboard(self, *, directory: str | Path | None = None, port: int | None = None, open_browser: bool = False) -> str:
        """Start the FLEX Studio app on this explainer in a subprocess; prints and returns its URL.

        The explainer is saved to ``directory`` (default a new temporary folder) and the
        app opens it, started as ``flex dashboard DIR`` starts it (from a checkout or an
        installed package alike; Streamlit comes with ``pip install "flex-studio[app]"``).
        The app runs until the Python session ends or ``explainer.dashboard_process.terminate()``
        is called.
        """
        from ._dashboard import app_script, free_port, require_streamlit, start_dashboard

        require_streamlit()
        app_script()  # the app's files are there, before anything is written
        folder = self.save(directory or tempfile.mkdtemp(prefix="flex-project-"))
        port = port or free_port()
        self.dashboard_process = start_dashboard(folder, port=port, open_browser=open_browser)
        url = f"http://localhost:{port}"
        print(f"FLEX Studio is starting at {url} (project folder {folder})")
        return url


def _criterion_text(where) -> str | Mapping | None:
    """``{"zone": "rural"}`` or ``"zone=rural"`` as the ``feature=value`` text the runs take."""
    if where is None or isinstance(where, str) or (isinstance(where, Mapping) and set(where) == {"feature", "value"}):
        return where
    if isinstance(where, Mapping) and len(where) == 1:
        (feature, value), = where.items()
        return f"{feature}={value}"
    raise ConfigError("where takes one criterion: {'feature': value} or 'feature=value'.")


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _as_classes(y: pd.Series, undesired: list) -> pd.Series:
    """Outcomes read back as text get the type of the saved classes (numbers stay numbers)."""
    if undesired and all(isinstance(u, (int, float)) and not isinstance(u, bool) for u in undesired):
        return pd.to_numeric(y)
    return y
