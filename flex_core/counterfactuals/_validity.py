"""When a counterfactual counts as valid: one rule, used by every generator, the refinement and the necessity check.

A forest's P(undesirable) is a vote. A counterfactual at P = 0.50 is a tie, one at 0.49 a
knife edge: the same kind of forest refitted on the same rows with another seed often votes the
other way (Pawelczyk, Broelemann and Kasneci, UAI 2020: counterfactuals near the decision boundary
are invalidated by equally accurate models, *predictive multiplicity*). Dutta et al. (ICML 2022,
RobX) measure a counterfactual's *stability* as the mean minus the standard deviation of the
model's score over a Gaussian neighbourhood of it, and call it robust above a threshold. Here the
neighbourhood has radius zero: a counterfactual is valid when

    P(undesirable) < 0.5 - margin

so the desirable class's score exceeds 0.5 + margin (with 100 trees: at least 100 * margin more trees
vote desirable than undesirable). Why not the neighbourhood: it costs K model rows for every row a
search or a refinement scores (it scores tens of thousands), and a Gaussian neighbourhood is
undefined for categorical features; the margin is the same criterion at radius zero and costs
nothing. A tie is never valid (the inequality is strict), and ``margin=0`` is the paper's setting:
P(undesirable) < 0.5.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._errors import ConfigError

__all__ = ["Validity", "DEFAULT_MARGIN", "PAPER_MARGIN", "validity_of"]

#: The default margin on P(undesirable): valid below 0.5 - 0.1 = 0.4 (see the module docstring).
DEFAULT_MARGIN = 0.1
#: The paper's setting: valid below 0.5, no margin.
PAPER_MARGIN = 0.0


@dataclass(frozen=True)
class Validity:
    """The validity rule: P(undesirable) < 0.5 - ``margin``.

    Parameters
    ----------
    margin : float in [0, 0.5), default :data:`DEFAULT_MARGIN`
        0 is the paper's setting (P < 0.5; a tie at 0.5 is still not valid).
    """

    margin: float = DEFAULT_MARGIN

    def __post_init__(self):
        margin = float(self.margin)
        if not 0.0 <= margin < 0.5:
            raise ConfigError(f"The validity margin must be at least 0 and below 0.5 (got {self.margin!r}).")
        object.__setattr__(self, "margin", margin)

    @property
    def threshold(self) -> float:
        """Valid strictly below this P(undesirable)."""
        return 0.5 - self.margin

    def desirable(self, p_undesirable) -> np.ndarray:
        """Which P(undesirable) values (any shape) make a valid counterfactual."""
        return np.asarray(p_undesirable, dtype=float) < self.threshold

    def describe(self) -> dict:
        """The rule as the JSON ``generator`` block and a set's config name it."""
        return {
            "criterion": "P(undesirable) < 0.5 - margin",
            "margin": self.margin,
            "threshold": self.threshold,
            "setting": "paper" if self.margin == PAPER_MARGIN else "robust",
        }


def validity_of(generator) -> Validity:
    """The rule a generator was given (its ``margin`` setting), or the default for one without it."""
    return Validity(getattr(generator, "margin", DEFAULT_MARGIN))
