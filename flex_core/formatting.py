"""Numbers, shares, durations, ranges and orders as people read and type them: one wording everywhere.

The CLI's messages, the reproduction's report and the app (``ui/``) write numbers with the same
functions, and read back what a person typed with the same rules. A public module beside
:mod:`flex_core.limits`: shared by the library and the app, it is no stage of the pipeline, so
it is not one of the subpackages (whose ``__all__`` list what a library user calls).

- :func:`format_number` (``21,500,000``, ``0.0123``, never ``2.15e+07``), :func:`format_share`
  (``83%``), :func:`format_duration` (``about 40 seconds``), :func:`plural` (``1 case``, ``3 cases``),
  :func:`listing` (``feature age``, ``rows 3 and 8``);
- :func:`read_number` (a typed number, with or without thousands separators), :func:`parse_range`
  (``LO:HI``, either end open) and :func:`parse_order` (``a < b < c``), as the CLI and the app's
  features table take constraints.
"""

from ._format import format_duration, format_number, format_share, listing, plural, read_number
from .data._summary import parse_order, parse_range

__all__ = ["format_number", "format_share", "format_duration", "plural", "listing", "read_number", "parse_range", "parse_order"]
