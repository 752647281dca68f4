"""An interactive report in one HTML file: τ sliders, regions and a case's counterfactuals, offline.

The file carries the counterfactuals themselves (:func:`snapshot_payload`) and a few lines of JavaScript
that compute FLEX from them exactly as :mod:`flex_core.importance` does, so moving τ in the browser gives
the numbers the library gives at that τ. :meth:`flex_core.FlexExplainer.report` writes one; the app's
Report page and ``python -m flex_core ... --report PATH`` do too.
"""

from ._page import snapshot_html
from ._payload import FORMAT, snapshot_payload

__all__ = ["snapshot_payload", "snapshot_html", "FORMAT"]
