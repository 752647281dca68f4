"""The Regional page's factual map: factual rows placed in 2-D as the model sees them, and its figure."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import plotly.colors
import plotly.graph_objects as go

from flex_core import ConfigError, FittedModel, TaskSpec
from flex_core.plotting.style import apply_style, as_floats, new_figure, panel_axes

__all__ = ["FactualMap", "project_factuals", "factual_map_figure"]


@dataclass(frozen=True, eq=False)
class FactualMap:
    """Factual rows placed in 2-D from the model's encoded inputs, standardised per column.

    Attributes
    ----------
    frame : DataFrame with columns ``row``, ``x``, ``y``, ``probability``
        One line per factual; ``probability`` is P(undesirable) from the model (a regressor's: its predicted number,
        see :attr:`numbers`).
    explained : ndarray of shape (2,)
        For a PCA map, the share of the (standardised) variance each axis explains; zeros for Isomap,
        whose axes have no such share.
    space : {"encoded", "original"}
        The model's own encoder step, or (a model without one) the original features
        with categorical ones one-hot encoded.
    method : {"isomap", "pca"}
        How the rows are placed (see :func:`project_factuals`); :attr:`description` says it in words.
    """

    frame: pd.DataFrame
    explained: np.ndarray
    space: str = "encoded"
    total: int = 0  # factuals there were; more than len(frame) when the map shows a sample
    # How rows are placed (column means, kept columns, their scales, the fitted embedding, the axes' signs and
    # the jitter's size), so rows left out of a sample can be added where they belong without refitting.
    projection: tuple | None = None
    sample_size: int = 0  # rows the map was fitted on (rows added later by ``including`` are not part of it)
    method: str = "pca"
    fitted_on: int = 0  # rows the embedding was fitted on (Isomap fits on a sample, then places every row)
    numbers: bool = False  # the colour is a regressor's predicted number, not P(undesirable)

    def including(self, task: TaskSpec, model: FittedModel, rows: Sequence[int]) -> FactualMap:
        """This map with ``rows`` added where they belong, when a sample left them out (e.g. a query and its region).

        Only the missing rows are encoded and scored (one batched call); the axes do not move.
        """
        missing = sorted(set(int(r) for r in rows) - set(self.frame["row"].tolist()))
        if not missing or self.projection is None:
            return self
        mean, keep, scale, embedding, signs, jitter = self.projection
        encoded = _encode(task, model, task.X.loc[missing])[1]
        coords = _place(embedding, ((encoded - mean)[:, keep] / scale), signs) + _jitter(missing, jitter)
        added = pd.DataFrame({"row": missing, "x": coords[:, 0], "y": coords[:, 1],
                              "probability": _colour(model, task.X.loc[missing])})
        return replace(self, frame=pd.concat([self.frame, added], ignore_index=True))

    @property
    def note(self) -> str:
        """A sentence for the reader when the map shows a sample, else empty."""
        drawn = self.sample_size or len(self.frame)
        if self.total <= drawn:
            return ""
        return (f"The map shows a seeded random sample of {drawn:,} of the {self.total:,} cases to choose from "
                "(drawing them all would slow every page); any of them can still be chosen by its row number.")

    @property
    def description(self) -> str:
        """How the map places cases, for the caption under it."""
        inputs = "the model's inputs" if self.space == "encoded" else "the features (categories one-hot)"
        if self.method == "isomap":
            fitted = (f" fitted on a seeded sample of {self.fitted_on:,} of them and placing the others by their "
                      "nearest neighbours" if self.fitted_on < (self.sample_size or len(self.frame)) else "")
            return (f"an Isomap of {inputs}, each column standardised: cases close on the map are close through "
                    f"chains of similar cases ({ISOMAP_NEIGHBOURS} nearest each){fitted}; a small fixed jitter "
                    "separates cases that are identical to the model")
        return f"a principal-component map (PCA) of {inputs}, each column standardised"


#: Most factuals drawn on the map; a larger pool is sampled (seed 0).
MAP_POINTS = 5_000
#: Isomap (scikit-learn) places the rows once there are this many: PCA put the loan data's 1,600 cases on three
#: overlapping stripes (one per education x self-employed level), where a click could not pick the dot meant.
ISOMAP_MIN_ROWS = 60
ISOMAP_NEIGHBOURS = 10
#: Isomap is fitted on at most this many rows (seeded sample; under a second on loan), then places the others:
#: fitting on 5,000 takes tens of seconds.
ISOMAP_FIT_POINTS = 1_500
#: The jitter's size, as a share of each axis's spread: enough to part identical cases, too little to move a cluster.
JITTER = 0.01


def project_factuals(task: TaskSpec, model: FittedModel, rows: Sequence[int], *, max_points: int = MAP_POINTS) -> FactualMap:
    """The factuals in 2-D as the model sees them (its own encoding), standardised per column.

    From :data:`ISOMAP_MIN_ROWS` rows on, an Isomap (scikit-learn, :data:`ISOMAP_NEIGHBOURS` neighbours, dense
    eigensolver, so no randomness) fitted on a seeded sample of at most :data:`ISOMAP_FIT_POINTS` rows places
    every row; fewer rows get PCA. Each row then gets a small jitter fixed by its row id, which parts
    cases the encoding makes identical. A model without a separate encoder step (see
    ``FittedModel.encoder_and_classifier``) is mapped from its original features, categorical ones
    one-hot encoded; ``space`` says which.

    One batched model call gives the colour (P(undesirable)). Axis signs are fixed by the scores'
    skew, which makes the map reproducible across runs and row orders. More than ``max_points``
    factuals are first sampled (seeded, sorted by row id); the map's ``total`` and ``note`` say so.
    """
    rows = [int(r) for r in rows]
    if not rows:
        raise ConfigError("There are no factual rows to place on the map.")
    total = len(rows)
    rows = sorted(rows)
    if total > max_points:
        rows = sorted(int(r) for r in np.random.default_rng(0).choice(rows, size=max_points, replace=False))
    X = task.X.loc[rows]
    space, encoded = _encode(task, model, X)
    mean = encoded.mean(axis=0)
    centred = encoded - mean
    scale = centred.std(axis=0)
    keep = scale > 0
    standardised = centred[:, keep] / scale[keep]
    explained = np.zeros(2)
    fitted_on = len(rows)
    if not standardised.shape[1] or len(rows) < 2:
        embedding, method = np.zeros((2, standardised.shape[1])), "pca"
    elif len(rows) >= ISOMAP_MIN_ROWS:
        from sklearn.manifold import Isomap

        fit = np.arange(len(rows))
        if len(rows) > ISOMAP_FIT_POINTS:
            fit = np.sort(np.random.default_rng(0).choice(len(rows), size=ISOMAP_FIT_POINTS, replace=False))
        fitted_on = len(fit)
        with warnings.catch_warnings():
            # Categorical data makes islands of identical cases; Isomap joins them (fast at these sizes) and
            # warns each time, which would flood the server's log.
            warnings.simplefilter("ignore")
            embedding = Isomap(n_neighbors=ISOMAP_NEIGHBOURS, n_components=2, eigen_solver="dense").fit(standardised[fit])
        method = "isomap"
    else:
        _, singular, components = np.linalg.svd(standardised, full_matrices=False)
        embedding = np.zeros((2, standardised.shape[1]))
        n = min(2, components.shape[0])
        embedding[:n] = components[:n]
        variance = singular**2
        explained[:n] = variance[:n] / variance.sum() if variance.sum() > 0 else 0.0
        method = "pca"
    coords = _place(embedding, standardised, np.ones(2))
    # An axis's sign is arbitrary; pointing each at its longer tail (positive third moment) does not depend
    # on the row order or the platform's eigensolver, unlike a sign from tied loadings.
    signs = np.where((coords**3).sum(axis=0) < 0, -1.0, 1.0)
    coords *= signs
    jitter = JITTER * (coords.std(axis=0) if method == "isomap" else np.zeros(2))
    coords += _jitter(rows, jitter)
    frame = pd.DataFrame({"row": rows, "x": coords[:, 0], "y": coords[:, 1], "probability": _colour(model, X)})
    return FactualMap(frame=frame, explained=explained, space=space, total=total,
                      projection=(mean, keep, scale[keep], embedding, signs, jitter), sample_size=len(rows),
                      method=method, fitted_on=fitted_on, numbers=model.band is not None)


def _colour(model, X: pd.DataFrame) -> np.ndarray:
    """A dot's colour: P(undesirable), or a regressor's predicted number (its off-band score would read as a chance)."""
    return model.predict_value(X) if model.band is not None else model.predict_proba(X)[:, 1]


def _place(embedding, standardised: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """2-D coordinates of standardised rows: PCA's two components (an array) or a fitted Isomap."""
    if isinstance(embedding, np.ndarray):
        return (standardised @ embedding.T) * signs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # as when fitting: islands of identical cases are expected
        return np.asarray(embedding.transform(standardised), dtype=float) * signs


def _jitter(rows: Sequence[int], size: np.ndarray) -> np.ndarray:
    """An offset per row fixed by its id (the R2 low-discrepancy sequence), so a row lands on the same spot
    whether it was drawn at first or added later; up to ±``size`` per axis."""
    ids = np.asarray(rows, dtype=float)[:, None]
    return (np.mod(ids * np.array([0.7548776662466927, 0.5698402909980532]), 1.0) * 2 - 1) * size


def _encode(task: TaskSpec, model: FittedModel, X: pd.DataFrame) -> tuple[str, np.ndarray]:
    """The rows as the map places them: the model's own encoder step, else original features one-hot."""
    split = model.encoder_and_classifier()
    if split is not None:
        return "encoded", np.asarray(split[0].transform(model.estimator_input(X)), dtype=float)
    return "original", _one_hot(task, X)


def _one_hot(task: TaskSpec, X: pd.DataFrame) -> np.ndarray:
    """Continuous features as they are, categorical ones as indicator columns; shape (n_rows, n_columns)."""
    parts = []
    for f in task.features:
        if f.is_continuous:
            parts.append(X[f.name].to_numpy(dtype=float)[:, None])
        else:
            parts.append((X[f.name].to_numpy()[:, None] == np.asarray(f.categories, dtype=object)[None, :]).astype(float))
    return np.hstack(parts)


#: Cases the zoom panel shows beside the query and its region: the nearest others on the map, for context.
NEIGHBOURHOOD = 12


def _neighbourhood(frame: pd.DataFrame, rows: Sequence[int], size: int = NEIGHBOURHOOD) -> np.ndarray:
    """``rows`` and the ``size`` other rows nearest to any of them on the map: what the zoom panel draws."""
    points = frame[["x", "y"]].to_numpy(dtype=float)
    chosen = frame["row"].isin(list(rows)).to_numpy()
    if chosen.all() or not chosen.any():
        return chosen
    gaps = np.sqrt(((points[:, None, :] - points[None, chosen, :]) ** 2).sum(axis=2)).min(axis=1)
    gaps[chosen] = np.inf
    near = np.argsort(gaps, kind="stable")[: min(size, int((~chosen).sum()))]
    chosen = chosen.copy()
    chosen[near] = True
    return chosen


def _zoom_box(frame: pd.DataFrame, rows: Sequence[int]) -> tuple[list[float], list[float]]:
    """Axis ranges around the given rows, padded so a ring at the edge stays whole."""
    points = frame.set_index("row").loc[list(rows), ["x", "y"]]
    ranges = []
    for axis in ("x", "y"):
        low, high = float(points[axis].min()), float(points[axis].max())
        whole = float(frame[axis].max() - frame[axis].min()) or 1.0
        pad = max(0.25 * (high - low), 0.04 * whole)
        ranges.append([low - pad, high + pad])
    return ranges[0], ranges[1]


#: Plotly's "OrRd" as [position, colour] pairs: unvalidated traces reach the browser as written, and plotly.js
#: knows only a few scales by name (Plotly's validation spells the name out).
ORANGE_RED = plotly.colors.get_colorscale("OrRd")


def factual_map_figure(
    fmap: FactualMap,
    *,
    query: int | None = None,
    members: Sequence[int] = (),
    meeting: Sequence[int] | None = None,
    criterion: str | None = None,
    title: str = "Cases to choose from: click a dot to explore its region",
    probability: str = "P(undesirable)",
) -> go.Figure:
    """The factuals in 2-D, coloured by P(undesirable) (named ``probability``, e.g. "P(Rejected)"); the query and
    region members highlighted.

    With a query, a second panel zooms on the region, so the members and the query stay
    apart however close they sit on the whole map; it draws only them and the
    :data:`NEIGHBOURHOOD` other cases nearest to them (not every dot that falls in its box). ``meeting`` (rows meeting the region
    criterion, described by ``criterion``) keeps those dots solid and fades the others.
    Every trace's ``customdata`` holds row ids, so a click or lasso in either panel maps
    back to rows with :func:`rows_from_selection`. Traces: factuals, region members and
    query on the map, then the same three in the zoom panel.
    """
    frame = fmap.frame
    lookup = frame.set_index("row")
    query_row = int(query) if query is not None and int(query) in lookup.index else None
    has_query = query_row is not None
    region = [int(m) for m in members if int(m) in lookup.index and int(m) != query]
    fig = new_figure(rows=1, cols=2, column_widths=[0.64, 0.36], horizontal_spacing=0.07,
                     subplot_titles=("all of them", "zoom on the region")) if has_query else new_figure()
    meets = np.ones(len(frame), bool) if meeting is None else frame["row"].isin([int(r) for r in meeting]).to_numpy()
    # Traces are plain dicts, put into the figure at the end without Plotly's validation: validating the
    # 1,600-dot traces took about 0.2 s on every click on the map (tests validate the figure instead).
    panel = {"frame": frame, "meets": meets, "faded": meeting is not None, "lookup": lookup, "region": region,
             "query_row": query_row, "probability": probability, "numbers": fmap.numbers}
    traces = _panel_traces(np.ones(len(frame), bool), 1 if has_query else None, **panel)
    _map_axes(fig, fmap)
    if query_row is not None:
        shown = _neighbourhood(frame, [query_row, *region])
        x_range, y_range = _zoom_box(frame, frame["row"][shown].tolist())
        traces += _panel_traces(shown, 2, **panel)
        fig.update_xaxes(range=x_range, title_text="axis 1 (zoomed)", row=1, col=2)
        fig.update_yaxes(range=y_range, title_text=None, row=1, col=2)
    if meeting is not None and criterion:
        traces.append(_trace(dict(name=f"meets {criterion}", x=[None], y=[None], mode="markers", hoverinfo="skip",
                                  marker=dict(size=9, color="#fca5a5", line=dict(color="#7f1d1d", width=1.2))), None))
        traces.append(_trace(dict(name="does not (faded)", x=[None], y=[None], mode="markers", hoverinfo="skip",
                                  marker=dict(size=9, color="#fca5a5", opacity=0.25)), None))
    # Dragging pans: with dragmode "lasso" a click arrives as an empty lasso and selects nothing.
    # Box and lasso stay in the modebar for selecting several.
    # "closest": a click picks the dot whose centre is nearest the pointer (not the whole column under it).
    fig.update_layout(clickmode="event+select", dragmode="pan", hovermode="closest")
    apply_style(fig, title=title, height=500)
    return go.Figure(data=traces, layout=fig.to_dict()["layout"], _validate=False)


def _trace(trace: dict, col: int | None) -> dict:
    """A scatter trace as a plain dict, on panel ``col`` of the grid (none: the only panel)."""
    return {"type": "scatter", **trace, **panel_axes(col)}


def _map_axes(fig: go.Figure, fmap: FactualMap) -> None:
    """The map's axis titles: PCA's share of variation per axis; Isomap's axes carry none (and no tick labels)."""
    if fmap.method == "pca":
        e1, e2 = (float(v) for v in fmap.explained)
        fig.update_xaxes(title_text=f"map axis 1 ({100 * e1:.0f}% of variation)", zeroline=False)
        fig.update_yaxes(title_text=f"map axis 2 ({100 * e2:.0f}% of variation)", zeroline=False)
    else:  # Isomap's axes carry no share of variation
        fig.update_xaxes(title_text="map axis 1", zeroline=False, showticklabels=False)
        fig.update_yaxes(title_text="map axis 2", zeroline=False, showticklabels=False)


def _panel_traces(rows_mask: np.ndarray, col: int | None, *, frame: pd.DataFrame, meets: np.ndarray, faded: bool,
                  lookup: pd.DataFrame, region: list[int], query_row: int | None,
                  probability: str = "P(undesirable)", numbers: bool = False) -> list[dict]:
    """One panel's traces: the factuals in ``rows_mask``, then the region's members and the query (when there are)."""
    part = frame[rows_mask]
    part_meets = meets[rows_mask]
    main = col in (None, 1)
    traces = [_trace(
        dict(
            name="cases" if main else "cases (zoom)",
            mode="markers",
            x=as_floats(part["x"]),
            y=as_floats(part["y"]),
            customdata=[[int(r)] for r in part["row"]],
            marker=dict(
                # Plotly picks, among the dots whose disc holds the pointer, the one drawn last (not the nearest
                # centre): small dots on a spread map make such ties rare, so a click picks the dot pointed at.
                size=6 if main else 11,
                color=as_floats(part["probability"]),
                colorscale=ORANGE_RED,
                cmin=None if numbers else 0.5,  # a predicted number: its own range
                cmax=None if numbers else 1.0,
                showscale=main,
                # The title sits beside the bar, not above it, where it ran into the "1" tick.
                colorbar=dict(title=dict(text=probability, side="right"), thickness=12, x=1.0, xpad=4),
                opacity=[1.0 if m else 0.25 for m in part_meets],
                line=dict(color=["#7f1d1d" if m and faded else "white" for m in part_meets],
                          width=[1.2 if m and faded else 0.5 for m in part_meets]),
            ),
            hovertemplate="row %{customdata[0]}<br>" + probability + (" = %{marker.color:,.4~g}" if numbers else
                                                                      " = %{marker.color:.2f}") + "<extra></extra>",
            showlegend=False,
        ),
        col,
    )]
    if region:
        traces.append(_trace(
            dict(
                name="region members",
                mode="markers",
                x=as_floats(lookup.loc[region, "x"]),
                y=as_floats(lookup.loc[region, "y"]),
                customdata=[[r] for r in region],
                marker=dict(size=18 if main else 22, color="rgba(0,0,0,0)", line=dict(color="#1e293b", width=2.5)),
                hovertemplate="member row %{customdata[0]}<extra></extra>",
                showlegend=main,
            ),
            col,
        ))
    if query_row is not None:
        traces.append(_trace(
            dict(
                name="query",
                mode="markers",
                x=[float(lookup.loc[query_row, "x"])],
                y=[float(lookup.loc[query_row, "y"])],
                customdata=[[query_row]],
                marker=dict(size=22 if main else 26, symbol="star", color="#2563eb", line=dict(color="white", width=1.5)),
                hovertemplate="query row %{customdata[0]}<extra></extra>",
                showlegend=main,
            ),
            col,
        ))
    return traces
