"""Reading users' CSV files: each kind of bad input is refused or noted with a message naming what to fix."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

import flex_core as fc
from flex_core.data import read_csv
from flex_core.data._read import read_notes

GOOD = "speed,road,y\n50,urban,no\n90,rural,yes\n70,urban,no\n110,rural,yes\n"


@pytest.mark.parametrize("delimiter, name", [(";", "semicolons"), ("\t", "tabs"), ("|", "vertical bars")])
def test_the_delimiter_is_detected_and_named(delimiter, name):
    frame = read_csv(GOOD.replace(",", delimiter).encode())
    assert list(frame.columns) == ["speed", "road", "y"] and frame["speed"].tolist() == [50, 90, 70, 110]
    assert any(name in note for note in read_notes(frame))


def test_a_comma_file_reads_without_notes_even_with_semicolons_inside_values():
    frame = read_csv(b'a,b,y\n"x;1",2,no\n"x;2",3,yes\n')
    assert list(frame.columns) == ["a", "b", "y"] and read_notes(frame) == []


def test_a_european_file_with_decimal_commas_splits_on_semicolons():
    frame = read_csv(b"speed;vis;y\n50,5;0,2;no\n90,1;0,7;yes\n")
    assert list(frame.columns) == ["speed", "vis", "y"]


def test_latin1_and_cp1252_files_are_read_with_a_note():
    text = "city,temp,y\nMünchen,1,no\nZürich,2,yes\n"
    frame = read_csv(text.encode("latin-1"))
    assert frame["city"].tolist() == ["München", "Zürich"]
    assert any("not UTF-8" in n and "cp1252" in n for n in read_notes(frame))
    euro = read_csv("price,y\n5 €,no\n6 €,yes\n".encode("cp1252"))
    assert euro["price"].tolist() == ["5 €", "6 €"]
    utf8_bom = read_csv("\ufeffcity,y\nMünchen,no\n".encode())
    assert list(utf8_bom.columns) == ["city", "y"] and read_notes(utf8_bom) == []


def _zip_bytes() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("data.csv", GOOD)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "content, what",
    [(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "PNG image"), (_zip_bytes(), "zip archive"), (b"abc\x00\x01\x02", "binary")],
)
def test_binary_files_are_not_text(content, what):
    with pytest.raises(fc.DataError, match=f"not a text/CSV file .*{what}"):
        read_csv(content)


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "The file is empty"),
        (b"\n\n  \n", "The file is empty"),
        (b"speed,road,y\n", "has a header but no rows"),
        (b"speed,road,y\n\n\n", "has a header but no rows"),
        (b"speed,road,speed,y\n1,a,2,no\n", r"appear more than once: 'speed' in columns 1, 3"),
        (b"speed , road,speed,y\n1,a,2,no\n", r"'speed' in columns 1, 3"),
    ],
)
def test_structural_problems_are_refused(content, message):
    with pytest.raises(fc.DataError, match=message):
        read_csv(content)


def test_a_repeated_header_is_named_cut_short_not_echoed_whole():
    # A header is the file's text: a 5,000-character name repeated, and seven repeated names, are summarised.
    long = "[Session expired: sign in again](http://x) " + "x" * 5000
    header = ",".join([long, long, *(f"c{i}" for i in range(7) for _ in range(2)), "y"])
    with pytest.raises(fc.DataError) as info:
        read_csv(f"{header}\n{','.join('1' * 16)},no\n".encode())
    message = str(info.value)
    assert len(message) < 400 and "x" * 100 not in message
    assert message.startswith("Column names appear more than once: '[Session expired: sign in again](http://…' in "
                              "columns 1, 2; 'c0' in columns 3, 4;")
    assert "'c3' in columns 9, 10 and 3 more." in message


def test_ragged_rows_are_refused_naming_lines_and_field_counts():
    lines = ["a,b,y", "1,2,no", "3,yes", "4,5,no", "6,7,8,yes"] + ["1,2,no"] * 3 + ["1"] * 6
    with pytest.raises(fc.DataError) as info:
        read_csv("\n".join(lines).encode())
    message = str(info.value)
    assert message.startswith("8 rows have a different number of fields than the header's 3")
    assert "line 3 has 2, line 5 has 4, line 9 has 1" in message and "(and 3 more)" in message


def test_rows_all_one_field_longer_are_refused_not_shifted_into_an_index():
    with pytest.raises(fc.DataError, match="line 2 has 4, line 3 has 4"):
        read_csv(b"a,b,y\n1,2,no,x\n3,4,yes,x\n")


def test_an_unclosed_quote_is_refused():
    with pytest.raises(fc.DataError, match="different number of fields"):
        read_csv(b'a,b\n"1,2\n3,4\n')


def test_infinite_values_become_floats_for_the_task_to_handle():
    frame = read_csv(b"x,y\n1,no\ninf,yes\n-inf,no\n")
    assert np.isinf(frame["x"]).sum() == 2


# -- size limits: refused from the header and a count of lines, before any row is parsed (issue 31, finding 4) --
@pytest.fixture
def no_parsing(monkeypatch):
    """Fail the test if the rows are parsed: the structure check (every record) or pandas."""
    from flex_core.data import _read

    def parsed(*args, **kwargs):
        raise AssertionError("the whole file was parsed before the size check")

    monkeypatch.setattr(_read, "_check_structure", parsed)
    monkeypatch.setattr(_read.pd, "read_csv", parsed)


def test_a_file_with_too_many_columns_is_refused_before_parsing(no_parsing):
    header = ",".join(f"c{i}" for i in range(5_000))
    rows = "\n".join(",".join(["1"] * 5_000) for _ in range(200))
    with pytest.raises(fc.DataError, match="This file has 5,000 columns; the limit is 500"):
        read_csv(f"{header}\n{rows}\n".encode())


def test_a_file_with_too_many_rows_is_refused_before_parsing(no_parsing):
    content = b"speed,road,y\n" + b"50,urban,no\n" * 1_000_000
    with pytest.raises(fc.DataError, match="This file has 1,000,000 lines after its header; the limit is 200,000 rows"):
        read_csv(content)


def test_a_file_with_too_many_cells_is_refused_with_both_counts(no_parsing):
    header = ",".join(f"c{i}" for i in range(100))
    rows = ("," * 99 + "\n") * 60_000  # 60,000 x 100 = 6,000,000 cells, each count under its own limit
    with pytest.raises(fc.DataError, match="60,000 rows x 100 columns = 6,000,000 cells; the limit is 5,000,000"):
        read_csv((header + "\n" + rows).encode())


def test_the_limits_come_from_one_table(monkeypatch):
    """The check reads flex_core.limits.LIMITS: lowering a limit there lowers it for every reader."""
    from flex_core.limits import LIMITS, Limit

    monkeypatch.setitem(LIMITS, "columns", Limit(1, 2, "columns of a CSV file"))
    with pytest.raises(fc.DataError, match="This file has 3 columns; the limit is 2"):
        read_csv(GOOD.encode())
    monkeypatch.setitem(LIMITS, "columns", Limit(1, 3, "columns of a CSV file"))
    assert read_csv(GOOD.encode()).shape == (4, 3)  # at the limit: read
