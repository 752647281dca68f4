"""An interactive report in one HTML file: τ sliders, regions and a case's counterfactuals, offline.

The file carries the counterfactuals themselves (``_payload``) and a few lines of JavaScript (``flex.js``)
that compute FLEX from them exactly as :mod:`flex_core.importance` does, so moving τ in the browser gives
the numbers the library gives at that τ. A library user writes one with :meth:`flex_core.FlexExplainer.report`
(the app's Report page and ``python -m flex_core ... --report PATH`` call it too), so this package exports nothing.
"""

__all__: list[str] = []
