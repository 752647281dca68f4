"""The analyst's terms in plain words (the Glossary page), and why two numbers that look alike differ.

The pages lead with readings in the data dictionary's words; the terms they keep (F_j, τ, r, q, FDR,
Hamming distance, ...) are explained here once, in the outcome's own words where a dataset is loaded.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui import state as S

__all__ = ["glossary", "TERMS", "mean_versus_pooled", "outcome_words", "term", "terms_shown"]

#: The sidebar's switch that adds the analyst's terms to the plain words.
TERMS_TOGGLE = "Show the paper's terms (F_j, τ, r, q)"


def terms_shown() -> bool:
    """Whether the reader asked for the analyst's terms (the sidebar's switch; off by default, kept in the link)."""
    return bool(st.session_state.get(S.TERMS))


def term(words: str, analyst: str) -> str:
    """``words`` for the reader; with the analyst's terms on, ``analyst`` after them: "Agreement with all cases
    (Pearson r)"."""
    return f"{words} ({analyst})" if terms_shown() else words

#: term -> what it means, with {bad} for the undesirable outcome and {good} for the other, in the data's words.
TERMS: dict[str, str] = {
    "factual": "A case the model predicts {bad}: one of the cases FLEX explains.",
    "counterfactual (way out)": "A copy of a case with a few values changed so that the model predicts {good} "
                                "instead of {bad}. With minimal changes, nothing in it can be undone or shrunk "
                                "and still flip the prediction.",
    "P({bad})": "The model's probability that a case is {bad}. A way out counts when its probability is clearly below "
                "one half (the margin is in the sidebar's validity note).",
    "F_j (change frequency)": "The share of a case's ways out that change feature j, averaged over the cases: "
                              "F = 0.44 (44%) means 44 of 100 ways out change it. The pages write it as a share "
                              "(44%); the paper writes 0.44.",
    "necessary F": "The share of the ways out whose change to j is needed: undoing it alone brings back {bad}.",
    "τ (tau)": "How big a change to a number must be to count, as a share of the number's range in the data: "
               "τ = 0.10 ignores changes smaller than a tenth of the range. Set on the Thresholds page.",
    "μ_j (mean change size)": "How far a number moves when it changes, as a share of its range "
                              "(0.20: a fifth of the range).",
    "DiCE Alg. 2": "DiCE's own importance: every change counted over all ways out pooled together, so a case with "
                   "many ways out weighs more than a case with one. FLEX averages per case instead.",
    "region (k neighbours)": "A chosen case (the query) and the k cases most like it, by Hamming distance.",
    "Hamming distance": "How many features two cases differ in; a number adds the gap between them as a share of "
                        "its range (0 when equal, 1 across the whole range), a level in an order its steps apart "
                        "as a share of all the steps.",
    "Pearson r": "How closely a region's F follows the global one, from −1 to 1: near 1 the region's drivers are "
                 "the population's; lower means they differ. Divergence is 1 − r. The pages call r the agreement "
                 "with all cases.",
    "mode shift (δ_j)": "Take a feature's most common value among the region's cases (numbers cut into quarters "
                        "first); δ compares how often the ways out keep it with how often the cases have it: "
                        "(share in the ways out − share in the cases) / share in the cases. Below 0: the ways out "
                        "move away from it.",
    "quadrants A–D": "Where a feature sits on the region-against-global scatter, high meaning above that axis' "
                     "mean: A high in the region only, B low in both, C high in both, D high globally only.",
    "q-value": "A p-value corrected for having looked at many regions: the smallest false-discovery rate at which "
               "the finding counts. The found regions' table calls it the share of flukes among regions this strong: "
               "of the regions at least as strong as this one, the share expected to be flukes (not the chance that "
               "this one region is a fluke).",
    "FDR (false-discovery rate)": "The share of reported findings expected to be flukes; the Regional explorer's "
                                  "region finder keeps it at the level chosen there (0.1 unless changed).",
    "95% interval": "The range the number would likely fall in with other cases of the same kind; overlapping "
                    "intervals mean the ranking between them is not settled.",
}


#: A regression's entry in place of "P({bad})": what its model gives FLEX instead of a probability.
OFF_BAND_SCORE = ("off-band score", "What a model that predicts a number gives FLEX in place of a probability: above "
                  "0.5 exactly when its prediction is {bad}, nearer 1 the further outside the band, below 0.5 when it "
                  "is {good}. A counterfactual counts when it is clearly below one half: its prediction lies inside the "
                  "band by the margin (in the target's units) the sidebar's validity note gives. The pages show the "
                  "predicted number itself; SHAP, LIME and the ICE curves explain this score.")


def outcome_words() -> tuple[str, str, bool] | None:
    """(undesirable, desirable, whether the outcome is a number's band) in the active dataset's words, or None without
    an analysis (the sidebar says why)."""
    import flex_core as fc
    from ui.context import build_analysis

    try:
        task = build_analysis().task
    except fc.FlexError:
        return None
    return task.undesirable_words, task.desirable_words, task.band is not None


def glossary(undesirable: str = "undesirable", desirable: str = "desirable",
             regression: bool = False) -> list[tuple[str, str]]:
    """(term, meaning) pairs, the outcome named in the data's words ("Rejected", "Approved"); for a number's band
    (``regression``), the off-band score in place of the probability."""
    words = {"bad": undesirable, "good": desirable}
    terms = {**TERMS}
    if regression:
        terms = {OFF_BAND_SCORE[0] if term == "P({bad})" else term: OFF_BAND_SCORE[1] if term == "P({bad})" else meaning
                 for term, meaning in TERMS.items()}
    return [(term.format(**words), meaning.format(**words)) for term, meaning in terms.items()]


def mean_versus_pooled(counts, *, flex: str = "FLEX at τ = 0", dice: str = "DiCE Alg. 2") -> str:
    """Why ``flex`` (a mean over cases of each case's share) and ``dice`` (one share over all ways out pooled) differ.

    ``counts``: each explained case's number of valid counterfactuals. Both count any change, so they are
    equal when every case with a way out has as many; otherwise a case with many weighs more in ``dice``.
    """
    counts = np.asarray(counts, dtype=int)
    found = counts[counts > 0]
    if not len(found):
        return f"No case has a way out yet, so {flex} and {dice} are both empty."
    lead = (f"{flex} and {dice} both count any change. {flex} takes each case's share of its own ways out and "
            f"averages the cases, so every case weighs the same; {dice} pools all ways out, so a case with 10 weighs "
            "ten times one with 1. ")
    if found.min() == found.max():
        return lead + f"Here every case with a way out has {found.min():,}, so the two agree."
    return (lead + f"Here the {len(found):,} cases with a way out have {found.min():,} to {found.max():,} "
            f"({found.mean():.1f} on average), so the two differ; features changed mostly in cases with "
            f"many ways out score higher in {dice}.")
