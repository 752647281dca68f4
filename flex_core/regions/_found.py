"""What region discovery returns: :class:`Region` (one rule-defined region scored against the pool) and
:class:`RegionsResult` (the regions that differ, ranked), with their JSON form (:mod:`._discovery` finds them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._contract import Result, json_floats, json_number

__all__ = ["Region", "RegionsResult"]


@dataclass(frozen=True, eq=False)
class Region:
    """One rule-defined region, scored against the pool.

    Attributes
    ----------
    rule : tuple of {"feature", "op", "value"}
        Conditions its factuals meet (see :mod:`flex_core.importance`); ``text`` says it in words.
    size : int
        Factuals of the pool (with a counterfactual) that meet it; ``members`` are their row ids.
    frequency : ndarray of shape (n_features,)
        The region's F_j.
    divergence, divergence_interval : float, (low, high)
        1 - r and its 95% interval (1 - r's interval from the r interval).
    pearson_r, pearson_r_interval : float, (low, high)
    l1_shift : float
    top_up, top_down : tuple of dict
        Up to three mutable features whose F rises (falls) most against the pool's, ranked:
        ``name``, ``label``, ``frequency``, ``global_frequency``, ``shift``.
    p_value, q_value : float
        Permutation p-value and Benjamini–Hochberg q-value over every candidate tested.
    significant : bool
        q_value <= the FDR level asked for and a divergence interval above 0 (see
        :meth:`interval_reaches_zero` for the regions that pass the first only).
    chance_divergence : float
        The 95th percentile of 1 - r over random regions of the same size: what chance alone reaches.
    """

    rule: tuple[dict, ...]
    text: str
    size: int
    members: tuple[int, ...]
    frequency: np.ndarray
    divergence: float
    divergence_interval: tuple[float, float]
    pearson_r: float
    pearson_r_interval: tuple[float, float]
    l1_shift: float
    top_up: tuple[dict, ...]
    top_down: tuple[dict, ...]
    p_value: float
    q_value: float
    significant: bool
    chance_divergence: float = float("nan")
    #: Per refit of the model (``replicate=K``): whether the region diverges there beyond chance; None when not asked.
    replicated: tuple[bool, ...] | None = None

    def interval_reaches_zero(self, fdr: float | None) -> bool:
        """Whether the region passes ``fdr`` (q <= fdr) yet is not significant, its divergence interval reaching 0
        (or undefined): a q-value alone would call it a finding. False when ``fdr`` is None (not known)."""
        return bool(not self.significant and fdr is not None and self.q_value <= fdr)

    def to_dict(self, feature_names: Sequence[str]) -> dict:
        return {
            **({} if self.replicated is None else {"replicated": [bool(v) for v in self.replicated]}),
            "rule": [dict(c) for c in self.rule],
            "text": self.text,
            "size": int(self.size),
            "divergence": json_number(self.divergence),
            "divergence_interval": [json_number(v) for v in self.divergence_interval],
            "pearson_r": json_number(self.pearson_r),
            "pearson_r_interval": [json_number(v) for v in self.pearson_r_interval],
            "l1_shift": json_number(self.l1_shift),
            "top_up": [dict(t) for t in self.top_up],
            "top_down": [dict(t) for t in self.top_down],
            "significant": bool(self.significant),
            "q_value": json_number(self.q_value),
            "p_value": json_number(self.p_value),
            "chance_divergence": json_number(self.chance_divergence),
            "frequency": {name: json_number(v) for name, v in zip(feature_names, self.frequency)},
            "members": [int(m) for m in self.members],
        }

    @classmethod
    def from_dict(cls, data: Mapping, feature_names: Sequence[str]) -> Region:
        frequency = data.get("frequency") or {}
        return cls(
            rule=tuple(dict(c) for c in data["rule"]),
            text=data["text"],
            size=int(data["size"]),
            members=tuple(int(m) for m in data.get("members", ())),
            frequency=json_floats(frequency.get(name) for name in feature_names),
            divergence=json_floats([data["divergence"]])[0],
            divergence_interval=tuple(json_floats(data["divergence_interval"])),
            pearson_r=json_floats([data["pearson_r"]])[0],
            pearson_r_interval=tuple(json_floats(data["pearson_r_interval"])),
            l1_shift=json_floats([data["l1_shift"]])[0],
            top_up=tuple(dict(t) for t in data.get("top_up", ())),
            top_down=tuple(dict(t) for t in data.get("top_down", ())),
            p_value=json_floats([data.get("p_value")])[0],
            replicated=None if data.get("replicated") is None else tuple(bool(v) for v in data["replicated"]),
            q_value=json_floats([data["q_value"]])[0],
            significant=bool(data["significant"]),
            chance_divergence=json_floats([data.get("chance_divergence")])[0],
        )


@dataclass(frozen=True, eq=False)
class RegionsResult(Result):
    """The regions that differ, ranked: significant ones first (by divergence), then the rest (by p-value).

    Attributes
    ----------
    regions : tuple of Region
        At most ``top`` of them, pruned (see the module's notes).
    feature_names, display_names, kinds, immutable : tuple, one entry per feature
    global_frequency, global_frequency_ci : ndarray of shape (n_features,) and (n_features, 2)
        The pool's F (what every region is compared with) and its 95% Wilson interval.
    factuals : ndarray of int
        The pool: factual row ids with a counterfactual.
    counts : dict
        ``conditions`` (single conditions with enough support), ``tested`` (candidates tested),
        ``same_members`` (candidates not tested: the same factuals as an earlier one),
        ``significant`` (q <= fdr, before pruning), ``pruned`` (two-condition regions dropped while
        the list was filled), ``near_copies`` (left out while the list was filled: at least 95% of their
        cases those of a region listed above) and ``shown`` (in ``regions``).
    generator, model, config, notes
        As in every result's JSON; ``config["discovery"]`` states the measure, the null and the pruning.
    """

    regions: tuple[Region, ...]
    feature_names: tuple[str, ...]
    display_names: tuple[str, ...]
    kinds: tuple[str, ...]
    immutable: tuple[bool, ...]
    global_frequency: np.ndarray
    global_frequency_ci: np.ndarray
    factuals: np.ndarray
    counts: dict
    generator: dict = field(default_factory=dict)
    model: dict = field(default_factory=dict)
    config: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    level: str = "regions"
    versions: dict | None = field(default=None, repr=False)

    kind = "regions"

    @property
    def significant(self) -> tuple[Region, ...]:
        return tuple(r for r in self.regions if r.significant)

    def to_frame(self) -> pd.DataFrame:
        """One row per region, in rank order (top_up / top_down as "name +0.31, ..." text)."""
        def shifts(items):
            return ", ".join(f"{t['name']} {t['shift']:+.2f}" for t in items)

        rows = [
            {
                "rank": i + 1,
                "region": r.text,
                "size": r.size,
                "divergence": r.divergence,
                "divergence_low": r.divergence_interval[0],
                "divergence_high": r.divergence_interval[1],
                "pearson_r": r.pearson_r,
                "pearson_r_low": r.pearson_r_interval[0],
                "pearson_r_high": r.pearson_r_interval[1],
                "l1_shift": r.l1_shift,
                "top_up": shifts(r.top_up),
                "top_down": shifts(r.top_down),
                "p_value": r.p_value,
                "q_value": r.q_value,
                "significant": r.significant,
                "chance_divergence": r.chance_divergence,
            }
            for i, r in enumerate(self.regions)
        ]
        columns = ["rank", "region", "size", "divergence", "divergence_low", "divergence_high", "pearson_r", "pearson_r_low",
                   "pearson_r_high", "l1_shift", "top_up", "top_down", "p_value", "q_value", "significant", "chance_divergence"]
        return pd.DataFrame(rows, columns=columns)

    def frequency_frame(self) -> pd.DataFrame:
        """Long form for small multiples: one row per (region, feature) with F, the pool's F and the shift."""
        rows = []
        for i, r in enumerate(self.regions):
            for j, name in enumerate(self.feature_names):
                rows.append({
                    "rank": i + 1, "region": r.text, "feature": name, "label": self.display_names[j],
                    "immutable": self.immutable[j], "frequency": r.frequency[j],
                    "global_frequency": self.global_frequency[j], "shift": r.frequency[j] - self.global_frequency[j],
                })
        return pd.DataFrame(rows, columns=["rank", "region", "feature", "label", "immutable", "frequency", "global_frequency", "shift"])

    def _body(self) -> dict:
        """The CLI's JSON (``level: "regions"``); :meth:`from_dict` reads it back."""
        return {
            "level": self.level,
            "regions": [r.to_dict(self.feature_names) for r in self.regions],
            "features": [
                {
                    "name": name,
                    "label": self.display_names[j],
                    "kind": self.kinds[j],
                    "immutable": bool(self.immutable[j]),
                    "global_frequency": json_number(self.global_frequency[j]),
                    "global_frequency_ci": [json_number(v) for v in self.global_frequency_ci[j]],
                }
                for j, name in enumerate(self.feature_names)
            ],
            "factuals": [int(r) for r in self.factuals],
            "counts": dict(self.counts),
            "generator": self.generator,
            "model": self.model,
            "config": self.config,
            "notes": list(self.notes),
        }

    @classmethod
    def _from_body(cls, data: Mapping) -> RegionsResult:
        records = data["features"]
        names = tuple(r["name"] for r in records)
        return cls(
            regions=tuple(Region.from_dict(r, names) for r in data["regions"]),
            feature_names=names,
            display_names=tuple(r.get("label", r["name"]) for r in records),
            kinds=tuple(r["kind"] for r in records),
            immutable=tuple(bool(r["immutable"]) for r in records),
            global_frequency=json_floats(r["global_frequency"] for r in records),
            global_frequency_ci=np.array([json_floats(r["global_frequency_ci"]) for r in records]).reshape(len(records), 2),
            factuals=np.asarray(data["factuals"], dtype=int),
            counts=dict(data.get("counts", {})),
            generator=dict(data.get("generator", {})),
            model=dict(data.get("model", {})),
            config=dict(data.get("config", {})),
            notes=tuple(data.get("notes", ())),
            level=data.get("level", "regions"),
            versions=data.get("versions"),
        )

