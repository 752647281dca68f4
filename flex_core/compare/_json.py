"""What the CLI adds to a FLEX JSON: SHAP with the FLEX-SHAP agreement, permutation importance with the
FLEX-permutation agreement, or LIME over a region."""

from __future__ import annotations

from .._contract import json_number
from .._results import FlexResult
from ._agreement import flex_shap_agreement
from ._lime import LimeImportance
from ._permutation import PermutationImportance
from ._scores import MethodScores
from ._shap import ShapImportance

__all__ = ["add_shap_to_json", "add_lime_to_json", "add_permutation_to_json"]


def add_shap_to_json(out: dict, flex: FlexResult, shap_result: ShapImportance, *, k: int = 3) -> dict:
    """Add ``shap_mean_abs``/``shap_rank`` to each feature of a FLEX JSON and a top-level ``agreement``.

    The agreement is computed over the mutable features only: FLEX gives an immutable
    feature 0 by construction, while SHAP still credits it, so including them would
    measure the constraint rather than the methods. ``shap_rank`` ranks all features.
    """
    by_name = {name: j for j, name in enumerate(shap_result.feature_names)}
    ranks = shap_result.rank
    for record in out["features"]:
        j = by_name[record["name"]]
        record["shap_mean_abs"] = json_number(shap_result.mean_abs[j])
        record["shap_rank"] = int(ranks[j])
    # The resamples are seeded as the run's factual sample was.
    seed = int(flex.config.get("sample_seed", flex.config.get("seed", 0)))
    agreement = flex_shap_agreement(flex, shap_result, k=k, seed=seed)
    out["agreement"] = {
        **agreement.to_dict(header=False),
        "between": ["flex frequency_mean", "shap mean |SHAP|"],
        "over": "mutable features (FLEX gives immutable features 0 by construction)",
    }
    out["shap"] = {key: value for key, value in shap_result.to_dict(header=False).items() if key not in ("features", "rows")}
    _add_versions(out, shap_result)
    return out


def add_permutation_to_json(out: dict, flex: FlexResult, permutation: PermutationImportance, *, k: int = 3) -> dict:
    """Add the ``permutation`` block (its own features, rows and repeats) and ``permutation_agreement``, over the
    mutable features as the FLEX-SHAP agreement is, its bootstrap seeded as the run's factual sample was."""
    seed = int(flex.config.get("sample_seed", flex.config.get("seed", 0)))
    agreement = permutation.agreement_with(flex, k=k, seed=seed)
    out["permutation_agreement"] = {
        **agreement.to_dict(header=False),
        "between": ["flex frequency_mean", "permutation mean drop of ROC AUC"],
        "over": "mutable features (FLEX gives immutable features 0 by construction)",
    }
    out["permutation"] = permutation.to_dict(header=False)
    return out


def add_lime_to_json(out: dict, lime_result: LimeImportance) -> dict:
    """Add ``lime_importance`` (mean |weight| over the region / its max) to each feature of a regional JSON."""
    by_name = {name: j for j, name in enumerate(lime_result.feature_names)}
    for record in out["features"]:
        j = by_name[record["name"]]
        record["lime_importance"] = json_number(lime_result.normalised[j])
        record["lime_mean_abs"] = json_number(lime_result.mean_abs[j])
    out["lime"] = {key: value for key, value in lime_result.to_dict(header=False).items() if key != "features"}
    _add_versions(out, lime_result)
    return out


def _add_versions(out: dict, result: MethodScores) -> None:
    """The version of the library SHAP or LIME came from, beside the others in ``out["versions"]``."""
    used = result.versions_used()
    out["versions"] = {**out.get("versions", {}), **{lib: used[lib] for lib in result.libraries if lib in used}}
