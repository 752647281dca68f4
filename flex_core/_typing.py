"""Type aliases of the public signatures (for the type checker and the reader; nothing is checked at run time)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import numpy as np

#: Row ids (labels of the task frame's index): a list, a range or a numpy array of ints.
Rows: TypeAlias = Sequence[int] | np.ndarray
#: Numbers such as τ values or distances: a list or a numpy array.
Numbers: TypeAlias = Sequence[float] | np.ndarray
