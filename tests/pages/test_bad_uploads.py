"""Bad CSV uploads in the app: one st.error naming what to fix, no exception, the previous dataset stays;
repairable files load with notes, and the identifier column can be put back."""

from __future__ import annotations

import pytest

from tests.pages.conftest import chart, errors, shown, start

# Every test here drives the real app through AppTest (seconds each): not in the fast run.
pytestmark = pytest.mark.slow

HEADER = "speed,road,y"
LINES = [f"{20 + (i * 7) % 100},{'urban' if i % 3 else 'rural'},{'severe' if (20 + (i * 7) % 100) > 70 else 'slight'}"
         for i in range(60)]

BAD_FILES = {
    "picture.csv": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "This is not a text/CSV file"),
    "header.csv": (f"{HEADER}\n".encode(), "The file has a header but no rows"),
    "twice.csv": (("speed,road,speed,y\n" + "\n".join(f"{line},x" for line in LINES)).encode(),
                  "Column names appear more than once: 'speed' in columns 1, 3"),
    "ragged.csv": ("\n".join([HEADER, *LINES[:3], "1,urban", *LINES[3:]]).encode(),
                   "1 row has a different number of fields than the header's 3: line 5 has 2"),
}


def test_each_bad_file_gets_one_error_and_the_previous_dataset_stays():
    at = start("toy2d")
    before = chart(at, "global_chart")["data"][0]["x"]
    at.sidebar.radio(key="w_sb_source").set_value("CSV upload").run()
    for name, (content, message) in BAD_FILES.items():
        at.sidebar.get("file_uploader")[0].set_value((name, content, "text/csv")).run()
        assert not at.exception, name
        shown = errors(at)
        assert len(shown) == 1 and shown[0].startswith(message), (name, shown)
        assert "previous dataset stays active" in shown[0] and "/work/" not in shown[0] and "/tmp" not in shown[0]
        assert at.session_state["dataset"] == {"kind": "builtin", "name": "toy2d"}
        assert chart(at, "global_chart")["data"][0]["x"] == before


def test_a_file_needing_repairs_loads_with_notes_and_the_identifier_can_be_put_back():
    lines = [f"case{i};{line.replace(',', ';')}" for i, line in enumerate(LINES)]
    lines[5] = lines[5].replace(";" + LINES[5].split(",")[0] + ";", ";fast;", 1)
    content = "\n".join(["id;speed;road;y", *lines]).encode()
    at = start("toy2d")
    at.sidebar.radio(key="w_sb_source").set_value("CSV upload").run()
    at.sidebar.get("file_uploader")[0].set_value(("semi.csv", content, "text/csv")).run()
    assert any("separated by semicolons" in shown(c.value) for c in at.sidebar.caption)
    at.sidebar.selectbox(key="sb_csv_target").set_value("y").run()
    at.sidebar.multiselect(key="sb_csv_undesirable").set_value(["severe"]).run()
    at.sidebar.radio(key="sb_csv_missing").set_value("impute").run()
    at.sidebar.button(key="sb_csv_load").click().run()
    assert not at.exception and not errors(at)
    assert set(chart(at, "global_chart")["data"][0]["customdata"]) == {"speed", "road"}
    at.switch_page("app_pages/data_model.py").run()
    notes = [shown(i.value) for i in at.info]
    assert any("Left out id:" in n for n in notes)
    assert any("'fast'" in n for n in notes) and any("Imputed missing values in 1 row " in n for n in notes)
    at.sidebar.multiselect(key="sb_csv_identifiers").set_value(["id"]).run()
    at.sidebar.button(key="sb_csv_load").click().run()
    assert not at.exception and not errors(at)
    assert "id" in {f.name for f in _task_features(at)}


def test_a_file_without_an_outcome_column_says_so_before_any_target_is_picked():
    content = "\n".join(["speed,weight", *(f"{20 + i * 1.5},{60 + (i * 7) % 41}" for i in range(60))]).encode()
    at = start("toy2d")
    at.sidebar.radio(key="w_sb_source").set_value("CSV upload").run()
    at.sidebar.get("file_uploader")[0].set_value(("numbers.csv", content, "text/csv")).run()
    assert not at.exception
    shown = errors(at)
    assert len(shown) == 1 and shown[0].startswith("No column looks like an outcome"), shown
    assert "speed: 60 different values" in shown[0] and "Add the column holding each case's outcome" in shown[0]
    assert not [s for s in at.sidebar.selectbox if s.key == "sb_csv_target"]  # nothing to pick, nothing to fail later
    assert at.session_state["dataset"] == {"kind": "builtin", "name": "toy2d"}


def test_a_file_with_an_empty_column_loads_without_it_and_says_so():
    content = "\n".join([HEADER + ",notes", *(f"{line}," for line in LINES)]).encode()
    at = start("toy2d")
    at.sidebar.radio(key="w_sb_source").set_value("CSV upload").run()
    at.sidebar.get("file_uploader")[0].set_value(("empty.csv", content, "text/csv")).run()
    # Not the empty column; speed marked as a number (picking it asks for its band: tests/pages/test_band_form.py).
    assert at.sidebar.selectbox(key="sb_csv_target").options == ["road", "y", "speed (a number)"]
    at.sidebar.selectbox(key="sb_csv_target").set_value("y").run()
    at.sidebar.multiselect(key="sb_csv_undesirable").set_value(["severe"]).run()
    at.sidebar.button(key="sb_csv_load").click().run()
    assert not at.exception and not errors(at)
    assert at.session_state["dataset"]["kind"] == "csv"
    assert set(chart(at, "global_chart")["data"][0]["customdata"]) == {"speed", "road"}
    at.switch_page("app_pages/data_model.py").run()
    assert any("Dropped an empty column (no value in any row): notes." in shown(i.value) for i in at.info)


def _one_class_files() -> dict[str, tuple[bytes, str]]:
    """Bad files 04 and 05 of the issue: the outcome column holds one class (05 also with blank outcome cells)."""
    from tests.factories import accident_frame

    mild = accident_frame(60).assign(severity="mild")
    severe = accident_frame(60).assign(severity="severe")
    severe.loc[::7, "severity"] = None
    return {"04-one-class.csv": (mild.to_csv(index=False).encode(), "Column 'severity' ('mild') holds one value only"),
            "05-one-class-blanks.csv": (severe.to_csv(index=False).encode(),
                                        "Column 'severity' ('severe') holds one value only")}


@pytest.mark.parametrize("name", ["04-one-class.csv", "05-one-class-blanks.csv"])
def test_a_one_class_outcome_is_named_and_no_other_column_takes_its_place(name):
    content, message = _one_class_files()[name]
    at = start("toy2d")
    at.sidebar.radio(key="w_sb_source").set_value("CSV upload").run()
    at.sidebar.get("file_uploader")[0].set_value((name, content, "text/csv")).run()
    assert not at.exception
    shown = errors(at)
    assert len(shown) == 1 and shown[0].startswith(message) and "cannot be the outcome" in shown[0], shown
    target = at.sidebar.selectbox(key="sb_csv_target")
    assert target.value is None and "severity" not in target.options  # nothing chosen in its place (it was `zone`)
    assert not [b for b in at.sidebar.button if b.key == "sb_csv_load"]  # nothing to train on until one is chosen
    assert at.session_state["dataset"] == {"kind": "builtin", "name": "toy2d"}


def _task_features(at):
    from ui.cache import load_base_task

    return load_base_task(at.session_state["dataset"]).features

