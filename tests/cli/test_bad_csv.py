"""The CLI on malformed CSV files, in-process: a refusal is one line on stderr and exit status 2,
a repair is a ``data:`` note on stderr and the run goes on."""

from __future__ import annotations

import json

import numpy as np
import pytest

from flex_core.cli import main

FAST = ["--n-factuals", "8", "--n-cf", "2", "--cv-folds", "2"]
HEADER = "speed,road,y"


def good_lines(n: int = 30) -> list[str]:
    rng = np.random.default_rng(0)
    return [f"{int(s)},{r},{'severe' if s > 70 else 'slight'}"
            for s, r in zip(rng.integers(20, 120, n), rng.choice(["urban", "rural"], n))]


def run(tmp_path, capsys, content: bytes, *extra: str) -> tuple[int, list[str], dict | None]:
    data = tmp_path / "data.csv"
    data.write_bytes(content)
    out = tmp_path / "out.json"
    code = main(["global", "--data", str(data), "--target", "y", "--undesired", "severe", *FAST, "--out", str(out), *extra])
    err = capsys.readouterr().err.strip().splitlines()
    return code, err, json.loads(out.read_text()) if code == 0 else None


@pytest.mark.parametrize(
    "content, message",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00", "error: This is not a text/CSV file (it looks like a PNG image)"),
        (f"{HEADER}\n".encode(), "error: The file has a header but no rows"),
        (("speed,road,speed,y\n" + "\n".join(line + ",x" for line in good_lines())).encode(),
         "error: Column names appear more than once: 'speed' in columns 1, 3"),
        ("\n".join([HEADER, *good_lines(5), "50,urban", "60,rural,slight,extra", *good_lines(5)]).encode(),
         "error: 2 rows have a different number of fields than the header's 3: line 7 has 2, line 8 has 4"),
        (b"", "error: The file is empty"),
    ],
)
def test_refusals_are_one_line_with_exit_status_2(tmp_path, capsys, content, message):
    code, err, _ = run(tmp_path, capsys, content, "--quiet")
    assert code == 2 and len(err) == 1 and err[0].startswith(message), err


def test_repairs_are_noted_and_the_run_goes_on(tmp_path, capsys):
    """Semicolons, cp1252, an identifier column, text cells and infinities in one file, each named on stderr."""
    lines = good_lines(40)
    lines[3] = lines[3].replace(lines[3].split(",")[0], "fast", 1)
    lines[9] = lines[9].replace(lines[9].split(",")[0], "inf", 1)
    rows = [f"case{i};{line.replace(',', ';')};Zürich" for i, line in enumerate(lines)]
    content = "\n".join(["id;speed;road;y;city", *rows]).encode("cp1252")
    code, err, out = run(tmp_path, capsys, content)
    assert code == 0, err
    notes = [line for line in err if line.startswith("data: ")]
    assert any("separated by semicolons" in n for n in notes)
    assert any("not UTF-8" in n for n in notes)
    assert any(n.startswith("data: Left out id:") for n in notes)
    assert any("'speed' holds numbers but 1 cell holds text ('fast'; row 3)" in n for n in notes)
    assert any("'speed' holds 1 infinite value (row 9)" in n for n in notes)
    assert any("Dropped 2 rows with a missing feature value (Speed 2)" in n for n in notes)
    assert {f["name"] for f in out["features"]} == {"speed", "road", "city"}
    assert out["data"]["rows_used"] == 38 and out["data"]["rows_in_file"] == 40


def test_an_identifier_can_be_put_back(tmp_path, capsys):
    content = "\n".join(["id," + HEADER, *(f"case{i},{line}" for i, line in enumerate(good_lines()))]).encode()
    code, err, out = run(tmp_path, capsys, content, "--quiet", "--use-identifier", "id")
    assert code == 0, err
    assert "id" in {f["name"] for f in out["features"]}
    code, err, _ = run(tmp_path, capsys, content, "--quiet", "--use-identifier", "nope")
    assert code == 2 and err == ["error: The identifier column nope to use is not in the data."]


def test_cross_validation_on_large_data_can_be_sampled_or_skipped(tmp_path, capsys):
    content = "\n".join([HEADER, *good_lines(200)]).encode()
    code, err, out = run(tmp_path, capsys, content, "--cv-rows", "50", "--cv-folds", "2")
    assert code == 0, err
    assert "model: Cross-validation: fold 2 of 2" in err and any("sample of 50 of the 160" in e for e in err)
    assert out["model"]["cv_rows"] == 50 and out["config"]["cv_rows"] == 50
    code, err, out = run(tmp_path, capsys, content, "--cv-folds", "0", "--quiet")
    assert code == 0 and "skipped" in out["model"]["note"] and out["model"]["cv_accuracy_mean"] is None


def test_a_number_target_is_refused_with_one_line_naming_what_to_do(tmp_path, capsys):
    """Issue 38: `--target loan_amount --undesired 29900000` trained on "amount == 29,900,000" without a word."""
    lines = [f"{s},{r},{1_000_000 + 100_000 * i}" for i, (s, r) in
             enumerate(zip(range(20, 80), ["urban", "rural"] * 30))]
    data = tmp_path / "amounts.csv"
    data.write_text("\n".join(["speed,road,amount", *lines]))
    code = main(["global", "--data", str(data), "--target", "amount", "--undesired", "2900000", *FAST, "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("error: The target 'amount' holds numbers (60 different values, from 1,000,000 to 6,900,000)")
    assert "give a column of classes as the target" in err[0]
    assert all(option in err[0] for option in ("--above T", "--below T", "--band LO:HI"))  # the three ways to a band
