"""Reading a CSV the way a user's file really arrives: any delimiter, 8-bit encodings, broken rows.

Every check that needs the raw text (binary content, encoding, delimiter, header,
field counts) happens here, before pandas parses the file, so each problem gets a
message that names what to fix instead of a parser's traceback. What was guessed
(delimiter, encoding) is reported in the frame's ``attrs["notes"]``.
"""

from __future__ import annotations

import csv
import io
import os
from collections import Counter
from pathlib import Path

import pandas as pd

from .._errors import DataError
from ..limits import LIMITS

__all__ = ["read_csv", "read_notes", "MAX_FILE_BYTES", "MISSING_MARKERS", "DELIMITERS"]

#: Files larger than this are refused before parsing (the paper's files are < 3 MB).
MAX_FILE_BYTES = 200 * 1024 * 1024
#: Strings that mean "no value" in the files this tool meets (RTA uses empty cells and ``na``).
MISSING_MARKERS = ("", "na", "NA", "n/a", "N/A", "NaN", "nan", "null", "NULL", "?")
#: Delimiters tried, in order of preference on a tie, with the name a message uses.
DELIMITERS = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "vertical bars (|)"}

# Signatures of common binary formats someone may upload by mistake.
_MAGIC = {
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"%PDF": "a PDF document",
    b"PK\x03\x04": "a zip archive (an .xlsx workbook is one: save it as CSV)",
    b"\x1f\x8b": "a gzip archive",
    b"\xd0\xcf\x11\xe0": "an old Excel/Office document (save it as CSV)",
    b"PAR1": "a Parquet file",
}
_SNIFF_LINES = 50
_SHOWN = 5  # offending lines named in a message


def read_notes(frame: pd.DataFrame) -> list[str]:
    """What :func:`read_csv` guessed about the file (delimiter, encoding), as sentences."""
    return list(frame.attrs.get("notes", []))


def _raw_bytes(source, max_bytes: int) -> bytes:
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise DataError(f"File not found: {path.name}.")
        size = path.stat().st_size
        if size > max_bytes:
            raise DataError(f"The file is {size / 2**20:.1f} MB; the limit is {max_bytes / 2**20:.0f} MB.")
        return path.read_bytes()
    raw = source if isinstance(source, (bytes, bytearray)) else source.read()
    raw = raw.encode() if isinstance(raw, str) else bytes(raw)
    if len(raw) > max_bytes:
        raise DataError(f"The file is {len(raw) / 2**20:.1f} MB; the limit is {max_bytes / 2**20:.0f} MB.")
    return raw


def _decode(raw: bytes) -> tuple[str, list[str]]:
    """The text and a note when it was not UTF-8; binary content is refused."""
    for magic, what in _MAGIC.items():
        if raw.startswith(magic):
            raise DataError(f"This is not a text/CSV file (it looks like {what}); export the data as CSV.")
    if b"\x00" in raw[:8192]:
        raise DataError("This is not a text/CSV file (it holds binary data); export the data as CSV.")
    try:
        return raw.decode("utf-8-sig"), []
    except UnicodeDecodeError:
        pass
    # cp1252 (Windows' Western European) is what spreadsheets on Windows write; Latin-1 decodes any byte.
    for encoding, label in (("cp1252", "Windows-1252 (cp1252)"), ("latin-1", "Latin-1 (ISO-8859-1)")):
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        return text, [f"The file is not UTF-8; it was read as {label}. Check that accented text looks right."]
    raise AssertionError("latin-1 decodes every byte")  # pragma: no cover


def _short(name: str, limit: int = 40) -> str:
    """A column name for a message: quoted, cut to ``limit`` characters (a header is the file's text, not ours)."""
    name = name or "(empty)"
    return repr(name if len(name) <= limit else name[:limit] + "…")


def _records(text: str, delimiter: str, skipinitialspace: bool):
    """(line number, fields) of each non-blank record, as pandas will see them."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, skipinitialspace=skipinitialspace)
    for fields in reader:
        if fields and any(f.strip() for f in fields):
            yield reader.line_num, fields


def _sniff_delimiter(text: str, skipinitialspace: bool) -> str:
    """The candidate whose header has most fields among those giving every sampled line the header's count."""
    head = "\n".join(text.splitlines()[:_SNIFF_LINES])
    best, best_score = ",", (-1.0, 0)
    for delimiter in DELIMITERS:
        try:
            rows = [fields for _, fields in _records(head, delimiter, skipinitialspace)]
        except csv.Error:
            continue
        if not rows or len(rows[0]) < 2:
            continue
        consistent = sum(len(r) == len(rows[0]) for r in rows) / len(rows)
        score = (consistent, len(rows[0]))
        if score > best_score:
            best, best_score = delimiter, score
    return best


def _check_size(text: str, delimiter: str, skipinitialspace: bool) -> None:
    """Refuse a file with more columns, rows or cells than :data:`flex_core.limits.LIMITS` allows, from its header
    and a count of its lines: before any parsing of the rows (a small file can make a huge frame)."""
    header = next(_records(text[: text.find("\n", 0, 2**20) + 1 or 2**20], delimiter, skipinitialspace), None)
    columns = len(header[1]) if header else 0
    rows = text.count("\n") + (not text.endswith("\n")) - 1  # lines after the header (blank ones too: an upper bound)
    if columns > LIMITS["columns"].high:
        raise DataError(f"This file has {columns:,} columns; the limit is {LIMITS['columns'].high:,}. "
                        "Keep the columns you need and upload it again.")
    if rows > LIMITS["rows"].high:
        raise DataError(f"This file has {rows:,} lines after its header; the limit is {LIMITS['rows'].high:,} rows. "
                        "Keep a sample of the rows and upload it again.")
    if columns * rows > LIMITS["cells"].high:
        raise DataError(f"This file has {rows:,} rows x {columns:,} columns = {rows * columns:,} cells; the limit is "
                        f"{LIMITS['cells'].high:,}. Keep fewer rows or columns and upload it again.")


def _check_structure(text: str, delimiter: str, skipinitialspace: bool) -> None:
    """Refuse duplicate column names, header-only files and rows whose field count differs from the header's."""
    records = _records(text, delimiter, skipinitialspace)
    try:
        header_line, header = next(records, (0, None))
        if header is None:
            raise DataError("The file is empty: upload a CSV with a header line and data rows.")
        names = [h.strip() for h in header]
        repeated = [name for name, n in Counter(names).items() if n > 1]
        if repeated:
            where = "; ".join(
                f"{_short(name)} in columns {', '.join(str(i + 1) for i, h in enumerate(names) if h == name)}"
                for name in repeated[:_SHOWN]
            )
            more = f" and {len(repeated) - _SHOWN} more" if len(repeated) > _SHOWN else ""
            raise DataError(f"Column names appear more than once: {where}{more}. Give each column its own name.")
        bad, rows = [], 0
        for line, fields in records:
            rows += 1
            if len(fields) != len(header):
                bad.append((line, len(fields)))
    except csv.Error as exc:
        raise DataError(f"The file is not a readable CSV ({exc}).") from None
    if rows == 0:
        raise DataError("The file has a header but no rows: add the data below the header line.")
    if bad:
        shown = ", ".join(f"line {line} has {n}" for line, n in bad[:_SHOWN])
        more = f" (and {len(bad) - _SHOWN:,} more)" if len(bad) > _SHOWN else ""
        raise DataError(
            f"{len(bad):,} {'row has' if len(bad) == 1 else 'rows have'} a different number of fields than the "
            f"header's {len(header)}: "
            f"{shown}{more}. Fix or remove those lines (a value containing the delimiter needs quotes)."
        )


def read_csv(source, *, max_bytes: int = MAX_FILE_BYTES, **kwargs) -> pd.DataFrame:
    """Read a CSV from a path, bytes or a file-like object, refusing what cannot be read faithfully.

    The delimiter (comma, semicolon, tab or ``|``) is detected, and a file that is
    not UTF-8 is read as Windows-1252 or Latin-1; both guesses are recorded as
    sentences in ``frame.attrs["notes"]`` (a list of str, empty when nothing was guessed). Refused with a
    :class:`DataError` naming what to fix: binary files, empty or header-only files,
    repeated column names and rows with more or fewer fields than the header.

    Parameters
    ----------
    source : path, bytes or file-like
    max_bytes : int
        Larger input is refused before it is parsed.
    **kwargs
        Passed to :func:`pandas.read_csv` (e.g. ``skipinitialspace=True``).

    Returns
    -------
    DataFrame of shape (n_rows, n_columns)
        Index 0..n_rows-1 (each row's position among the file's data rows); column
        names stripped of surrounding spaces.
    """
    raw = _raw_bytes(source, max_bytes)
    if not raw.strip():
        raise DataError("The file is empty: upload a CSV with a header line and data rows.")
    text, notes = _decode(raw)
    skipinitialspace = bool(kwargs.get("skipinitialspace", False))
    delimiter = _sniff_delimiter(text, skipinitialspace)
    if delimiter != ",":
        notes.append(f"The columns are separated by {DELIMITERS[delimiter]}, not commas; read them that way.")
    _check_size(text, delimiter, skipinitialspace)
    _check_structure(text, delimiter, skipinitialspace)
    try:
        frame = pd.read_csv(io.StringIO(text), sep=delimiter, index_col=False, keep_default_na=False,
                            na_values=list(MISSING_MARKERS), **kwargs)
    except (pd.errors.ParserError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"The file is not a readable CSV ({first}).") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    frame.index = pd.RangeIndex(len(frame))
    frame.attrs["notes"] = notes
    return frame
