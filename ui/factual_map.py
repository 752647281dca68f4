"""The Regional page's factual map: factual rows placed in 2-D as the model sees them, and its figure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from flex_core import ConfigError, FittedModel, TaskSpec
from flex_core.plotting._flex import apply_style, as_floats, new_figure

__all__ = ["FactualMap", "project_factuals", "factual_map_figure"]


@dataclass(frozen=True, eq=False)
class FactualMap:
    """Factual rows placed in 2-D by PCA of the model's encoded inputs.

    Attributes
    ----------
    frame : DataFrame with columns ``row``, ``x``, ``y``, ``probability``
        One line per factual; ``probability`` is P(undesirable) from the model.
    explained : ndarray of shape (2,)
        Share of the (standardised) variance each axis explains.
    space : {"encoded", "original"}
        The model's own encoder step, or (a model without one) the original features
        with categorical ones one-hot encoded.
    """

    frame: pd.DataFrame
    explained: np.ndarray
    space: str = "encoded"
    total: int = 0  # factuals there were; more than len(frame) when the map shows a sample
    # How rows are placed (column means, kept columns, their scales, the two signed components), so rows
    # left out of a sample can be added where they belong without refitting the map.
    projection: tuple | None = None
    sample_size: int = 0  # rows the map was fitted on (rows added later by ``including`` are not part of it)

    def including(self, task: TaskSpec, model: FittedModel, rows: Sequence[int]) -> FactualMap:
        """This map with ``rows`` added where they belong, when a sample left them out (e.g. a query and its region).

        Only the missing rows are encoded and scored (one batched call); the axes do not move.
        """
        missing = sorted(set(int(r) for r in rows) - set(self.frame["row"].tolist()))
        if not missing or self.projection is None:
            return self
        mean, keep, scale, components = self.projection
        encoded = _encode(task, model, task.X.loc[missing])[1]
        coords = ((encoded - mean)[:, keep] / scale) @ components.T
        added = pd.DataFrame({"row": missing, "x": coords[:, 0], "y": coords[:, 1],
                              "probability": model.predict_proba(task.X.loc[missing])[:, 1]})
        return replace(self, frame=pd.concat([self.frame, added], ignore_index=True))

    @property
    def note(self) -> str:
        """A sentence for the reader when the map shows a sample, else empty."""
        drawn = self.sample_size or len(self.frame)
        if self.total <= drawn:
            return ""
        return (f"The map shows a seeded random sample of {drawn:,} of the {self.total:,} factuals "
                "(drawing them all would slow every page); any factual can still be chosen by its row number.")


#: Most factuals drawn on the map; a larger pool is sampled (seed 0).
MAP_POINTS = 5_000


def project_factuals(task: TaskSpec, model: FittedModel, rows: Sequence[int], *, max_points: int = MAP_POINTS) -> FactualMap:
    """PCA of the factuals as the model sees them (its own encoding), standardised per column.

    A model without a separate encoder step (see ``FittedModel.encoder_and_classifier``)
    is mapped from its original features, categorical ones one-hot encoded; ``space`` says which.

    One batched model call gives the colour (P(undesirable)). Component signs are fixed
    by the scores' skew, which makes the map reproducible across runs and row orders.
    More than ``max_points`` factuals are first sampled (seeded, sorted by row id); the
    map's ``total`` and ``note`` say so.
    """
    rows = [int(r) for r in rows]
    if not rows:
        raise ConfigError("There are no factual rows to place on the map.")
    total = len(rows)
    if total > max_points:
        rows = sorted(int(r) for r in np.random.default_rng(0).choice(rows, size=max_points, replace=False))
    X = task.X.loc[rows]
    space, encoded = _encode(task, model, X)
    mean = encoded.mean(axis=0)
    centred = encoded - mean
    scale = centred.std(axis=0)
    keep = scale > 0
    centred = centred[:, keep] / scale[keep]
    coords = np.zeros((len(rows), 2))
    explained = np.zeros(2)
    signed = np.zeros((2, centred.shape[1]))
    if centred.shape[1] and len(rows) > 1:
        _, singular, components = np.linalg.svd(centred, full_matrices=False)
        n = min(2, components.shape[0])
        coords[:, :n] = centred @ components[:n].T
        # A component's sign is arbitrary; pointing each axis at its longer tail (positive third moment)
        # does not depend on the row order or the platform's SVD, unlike a sign from tied loadings.
        signs = np.where((coords[:, :n] ** 3).sum(axis=0) < 0, -1.0, 1.0)
        coords[:, :n] *= signs
        signed[:n] = components[:n] * signs[:, None]
        variance = singular**2
        explained[:n] = variance[:n] / variance.sum() if variance.sum() > 0 else 0.0
    probability = model.predict_proba(X)[:, 1]
    frame = pd.DataFrame({"row": rows, "x": coords[:, 0], "y": coords[:, 1], "probability": probability})
    return FactualMap(frame=frame, explained=explained, space=space, total=total,
                      projection=(mean, keep, scale[keep], signed), sample_size=len(rows))


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


def factual_map_figure(
    fmap: FactualMap,
    *,
    query: int | None = None,
    members: Sequence[int] = (),
    meeting: Sequence[int] | None = None,
    criterion: str | None = None,
    title: str = "Factuals: click a dot to explore its region",
) -> go.Figure:
    """The factuals in 2-D, coloured by P(undesirable); the query and region members highlighted.

    With a query, a second panel zooms on the region, so the members and the query stay
    apart however close they sit on the whole map. ``meeting`` (rows meeting the region
    criterion, described by ``criterion``) keeps those dots solid and fades the others.
    Every trace's ``customdata`` holds row ids, so a click or lasso in either panel maps
    back to rows with :func:`rows_from_selection`. Traces: factuals, region members and
    query on the map, then the same three in the zoom panel.
    """
    frame = fmap.frame
    lookup = frame.set_index("row")
    has_query = query is not None and int(query) in lookup.index
    region = [int(m) for m in members if int(m) in lookup.index and int(m) != query]
    fig = new_figure(rows=1, cols=2, column_widths=[0.64, 0.36], horizontal_spacing=0.07,
                     subplot_titles=("all factuals", "zoom on the region")) if has_query else new_figure()
    meets = np.ones(len(frame), bool) if meeting is None else frame["row"].isin([int(r) for r in meeting]).to_numpy()

    def add_panel(rows_mask: np.ndarray, col: int | None) -> None:
        where = dict(row=1, col=col) if col else {}
        part = frame[rows_mask]
        part_meets = meets[rows_mask]
        fig.add_trace(
            go.Scatter(
                name="factuals" if col in (None, 1) else "factuals (zoom)",
                mode="markers",
                x=as_floats(part["x"]),
                y=as_floats(part["y"]),
                customdata=[[int(r)] for r in part["row"]],
                marker=dict(
                    size=8 if col in (None, 1) else 11,
                    color=as_floats(part["probability"]),
                    colorscale="OrRd",
                    cmin=0.5,
                    cmax=1.0,
                    showscale=col in (None, 1),
                    # The title sits beside the bar, not above it, where it ran into the "1" tick.
                    colorbar=dict(title=dict(text="P(undesirable)", side="right"), thickness=12, x=1.0, xpad=4),
                    opacity=[1.0 if m else 0.25 for m in part_meets],
                    line=dict(color=["#7f1d1d" if m and meeting is not None else "white" for m in part_meets],
                              width=[1.2 if m and meeting is not None else 0.5 for m in part_meets]),
                ),
                hovertemplate="row %{customdata[0]}<br>P(undesirable) = %{marker.color:.2f}<extra></extra>",
                showlegend=False,
            ),
            **where,
        )
        if region:
            fig.add_trace(
                go.Scatter(
                    name="region members",
                    mode="markers",
                    x=as_floats(lookup.loc[region, "x"]),
                    y=as_floats(lookup.loc[region, "y"]),
                    customdata=[[r] for r in region],
                    marker=dict(size=18 if col in (None, 1) else 22, color="rgba(0,0,0,0)",
                                line=dict(color="#1e293b", width=2.5)),
                    hovertemplate="member row %{customdata[0]}<extra></extra>",
                    showlegend=col in (None, 1),
                ),
                **where,
            )
        if has_query:
            fig.add_trace(
                go.Scatter(
                    name="query",
                    mode="markers",
                    x=[float(lookup.loc[int(query), "x"])],
                    y=[float(lookup.loc[int(query), "y"])],
                    customdata=[[int(query)]],
                    marker=dict(size=22 if col in (None, 1) else 26, symbol="star", color="#2563eb",
                                line=dict(color="white", width=1.5)),
                    hovertemplate="query row %{customdata[0]}<extra></extra>",
                    showlegend=col in (None, 1),
                ),
                **where,
            )

    add_panel(np.ones(len(frame), bool), 1 if has_query else None)
    e1, e2 = (float(v) for v in fmap.explained)
    fig.update_xaxes(title_text=f"map axis 1 ({100 * e1:.0f}% of variation)", zeroline=False)
    fig.update_yaxes(title_text=f"map axis 2 ({100 * e2:.0f}% of variation)", zeroline=False)
    if has_query:
        x_range, y_range = _zoom_box(frame, [int(query), *region])
        inside = frame["x"].between(*x_range).to_numpy() & frame["y"].between(*y_range).to_numpy()
        add_panel(inside, 2)
        fig.update_xaxes(range=x_range, title_text="axis 1 (zoomed)", row=1, col=2)
        fig.update_yaxes(range=y_range, title_text=None, row=1, col=2)
    if meeting is not None and criterion:
        fig.add_trace(go.Scatter(name=f"meets {criterion}", x=[None], y=[None], mode="markers", hoverinfo="skip",
                                 marker=dict(size=9, color="#fca5a5", line=dict(color="#7f1d1d", width=1.2))))
        fig.add_trace(go.Scatter(name="does not (faded)", x=[None], y=[None], mode="markers", hoverinfo="skip",
                                 marker=dict(size=9, color="#fca5a5", opacity=0.25)))
    # Dragging pans: with dragmode "lasso" a click arrives as an empty lasso and selects nothing.
    # Box and lasso stay in the modebar for selecting several.
    fig.update_layout(clickmode="event+select", dragmode="pan")
    return apply_style(fig, title=title, height=500)
