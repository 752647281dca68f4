"""Plain-language readings of the model's curves on held-out rows and of permutation importance."""

from __future__ import annotations

import numpy as np

from flex_core.compare import RankAgreement
from flex_core.formatting import format_share, plural

__all__ = ["describe_model_curves", "describe_permutation"]

#: The share of cases the gain reading takes, highest P first.
GAIN_AT = 0.2


def describe_model_curves(curves, *, undesirable: str, desirable: str, cutoff: bool = True) -> str:
    """``curves`` (:func:`flex_core.models.model_curves`): what the ROC and PR areas, the gain at the top 20% and the most confident bin say, against no skill."""
    found = float(np.interp(GAIN_AT, curves.gain_share, curves.gain_found))
    filled = np.flatnonzero(curves.bin_rows)
    top = filled[-1]
    return (
        f"AUC {curves.roc_auc:.3f}: of one {undesirable} and one {desirable} case drawn at random, the model gives the "
        f"{undesirable} one the higher P({undesirable}) {format_share(curves.roc_auc, decimals=1)} of the time (50% by chance). "
        f"Average precision {curves.average_precision:.3f}, against {curves.prevalence:.3f} by chance (the share "
        f"{undesirable}). Checking the {format_share(GAIN_AT)} of cases most likely {undesirable} finds "
        f"{format_share(found)} of the {undesirable} ones ({found / GAIN_AT:.1f} times chance). Where P({undesirable}) "
        f"is {curves.bin_low[top]:.1f}–{curves.bin_high[top]:.1f}, {format_share(curves.bin_precision[top])} of the "
        f"{plural(int(curves.bin_rows[top]), 'case')} are {undesirable}. All on "
        f"{plural(int(curves.config.get('rows', 0)), 'held-out case')}, never seen in training. Dashed: a model "
        "without skill (guessing); dotted, on the gain curve: a perfect one."
        + (" The red point marks the cutoff chosen above." if cutoff else "")
    )


def describe_permutation(permutation, agreement: RankAgreement, *, flex_name: str) -> str:
    """``permutation`` (:func:`flex_core.compare.permutation_importance`): which feature the model leans on most, with its spread, and how that ranking agrees with FLEX's."""
    top = int(np.argmax(permutation.mean))
    repeats = int(permutation.config.get("n_repeats", permutation.importances.shape[1]))
    return (
        f"Permutation importance shuffles one feature at a time on the {plural(len(permutation.query_index), 'held-out case')} "
        f"({repeats} times, seeded) and measures how much the model's ROC AUC (here {permutation.baseline_score:.3f}) "
        f"drops: {permutation.display_names[top]} drops it most, by {permutation.mean[top]:.3f} ± "
        f"{permutation.std[top]:.3f}. It ranks what the model relies on to tell cases apart; FLEX ranks what the "
        f"smallest ways out change. Over the features that may change, Spearman {agreement.spearman:.2f} and top-"
        f"{agreement.k} overlap {format_share(agreement.top_k_overlap)} between {flex_name} and permutation importance."
    )
