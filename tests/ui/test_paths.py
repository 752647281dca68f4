"""Server paths the app may read: confined to FLEX_DATA_ROOTS, refused without echo, and hosted mode (uploads only)."""

from __future__ import annotations

import os

import pytest
from streamlit.testing.v1 import AppTest

import flex_core as fc
from tests.pages.conftest import APP, errors, shown
from ui import paths


@pytest.fixture
def roots(tmp_path, monkeypatch):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    monkeypatch.setenv("FLEX_DATA_ROOTS", str(allowed))
    monkeypatch.delenv("FLEX_HOSTED", raising=False)
    return allowed


def test_a_path_inside_the_roots_resolves(roots):
    (roots / "data.csv").write_text("a\n1\n")
    (roots / "sub").mkdir()
    assert paths.confine(roots / "data.csv") == (roots / "data.csv").resolve()
    assert paths.confine(roots / "sub" / ".." / "data.csv") == (roots / "data.csv").resolve()
    assert paths.confine(roots / "sub", folder=True) == (roots / "sub").resolve()


@pytest.mark.parametrize("escape", ["../secret.csv", "../../etc/passwd", "/etc/passwd"])
def test_dot_dot_and_absolute_escapes_are_refused_without_naming_the_path(roots, escape):
    with pytest.raises(fc.ConfigError) as refused:
        paths.confine(roots / escape if not escape.startswith("/") else escape)
    assert str(refused.value) == paths.OUTSIDE
    assert "passwd" not in str(refused.value) and "secret" not in str(refused.value)


def test_a_symlink_out_of_the_roots_is_refused(roots, tmp_path):
    outside = tmp_path / "outside.csv"
    outside.write_text("a\n1\n")
    (roots / "link.csv").symlink_to(outside)
    with pytest.raises(fc.ConfigError, match="outside the folders"):
        paths.confine(roots / "link.csv")


def test_roots_default_to_flex_data_dir_only_not_the_apps_own_folder(monkeypatch, tmp_path):
    # The folder the app starts in holds .streamlit/secrets.toml, .git and the cache: not readable unless named.
    monkeypatch.delenv("FLEX_DATA_ROOTS", raising=False)
    monkeypatch.setenv("FLEX_DATA_DIR", str(tmp_path))
    assert paths.allowed_roots() == [tmp_path.resolve()]
    monkeypatch.delenv("FLEX_DATA_DIR")
    assert paths.allowed_roots() == []
    monkeypatch.setenv("FLEX_DATA_ROOTS", os.pathsep.join([str(tmp_path), "."]))
    assert paths.allowed_roots() == [tmp_path.resolve(), type(tmp_path).cwd().resolve()]  # named: allowed


def test_the_apps_own_folder_is_refused_by_default(monkeypatch, tmp_path):
    monkeypatch.delenv("FLEX_DATA_ROOTS", raising=False)
    monkeypatch.setenv("FLEX_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    app = tmp_path / "app"
    (app / ".streamlit").mkdir(parents=True)
    (app / ".streamlit" / "secrets.toml").write_text("[auth]\ncookie_secret = 'x'\n")
    monkeypatch.chdir(app)
    for name in (".streamlit/secrets.toml", "app.py", "."):
        with pytest.raises(fc.ConfigError) as refused:
            paths.confine(name, folder=name == ".")
        assert str(refused.value) == paths.OUTSIDE


def _unreadable_paths(roots, tmp_path) -> dict[str, tuple[str, bool]]:
    """Paths inside and outside the roots that cannot be opened, each with whether a folder is asked for."""
    (roots / "loop-a").symlink_to(roots / "loop-b")
    (roots / "loop-b").symlink_to(roots / "loop-a")
    os.mkfifo(roots / "fifo.csv")
    (roots / "folder.csv").mkdir()
    (roots / "data.csv").write_text("a,y\n1,no\n")
    (tmp_path / "outside.csv").write_text("a,y\n1,no\n")
    return {
        "NUL byte": (f"{roots}/data.csv\0.csv", False),
        "5,000 characters": (str(roots / ("x" * 5000)), False),
        "a name too long": (str(roots / ("x" * 300) / "data.csv"), False),
        "a symlink loop": (str(roots / "loop-a"), False),
        "a FIFO": (str(roots / "fifo.csv"), False),
        "a folder as a file": (str(roots / "folder.csv"), False),
        "a file as a project folder": (str(roots / "data.csv"), True),
        "missing inside": (str(roots / "missing.csv"), False),
        "missing outside": (str(tmp_path / "missing.csv"), False),
        "existing outside": (str(tmp_path / "outside.csv"), False),
    }


def test_every_path_that_cannot_be_opened_gets_the_one_refusal(roots, tmp_path):
    # One message whatever the reason: it cannot tell missing from not allowed from unopenable, so it discloses
    # nothing about the server's files; it names no path and no server folder.
    for reason, (path, folder) in _unreadable_paths(roots, tmp_path).items():
        with pytest.raises(fc.ConfigError) as refused:
            paths.confine(path, folder=folder)
        assert str(refused.value) == paths.OUTSIDE, reason


def test_a_file_the_server_may_not_read_gets_the_one_refusal(roots, monkeypatch):
    # The tests run as root, which reads any file: the permission check is answered as for another user.
    (roots / "data.csv").write_text("a,y\n1,no\n")
    assert paths.confine(roots / "data.csv") == (roots / "data.csv").resolve()
    monkeypatch.setattr(paths.os, "access", lambda path, mode: False)
    with pytest.raises(fc.ConfigError) as refused:
        paths.confine(roots / "data.csv")
    assert str(refused.value) == paths.OUTSIDE


@pytest.mark.slow
@pytest.mark.parametrize("reason", ["NUL byte", "5,000 characters", "a symlink loop", "a FIFO", "a folder as a file",
                                    "missing inside", "existing outside"])
def test_a_link_naming_a_path_that_cannot_be_opened_is_refused_on_every_load(roots, tmp_path, reason):
    path, _ = _unreadable_paths(roots, tmp_path)[reason]
    for _load in range(2):  # the link opened, then reloaded: the refusal each time, never a traceback
        at = AppTest.from_file(APP, default_timeout=60)
        at.query_params.update({"dataset": f"loan:{path}", "n_factuals": "6", "n_cf": "2"})
        at.run()
        assert not at.exception
        assert at.session_state["dataset"] == {"kind": "builtin", "name": "synthetic-regional"}  # nothing applied
        assert at.session_state["sb_n_factuals"] == 200
        warnings = [shown(w.value) for w in at.sidebar.warning]
        assert warnings == [f"The link could not be applied: {paths.OUTSIDE}"], warnings
        assert not errors(at)
        assert "dataset" not in at.query_params  # the address bar now holds the default view, not the bad link


@pytest.mark.slow
def test_a_project_link_naming_the_working_folder_does_not_name_it(monkeypatch):
    monkeypatch.delenv("FLEX_DATA_ROOTS", raising=False)  # the default allowed folders
    monkeypatch.delenv("FLEX_HOSTED", raising=False)
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"dataset": "project:.", "n_factuals": "6", "n_cf": "2"})
    at.run()
    assert not at.exception
    warnings = [shown(w.value) for w in at.sidebar.warning]
    assert warnings == [f"The link could not be applied: {paths.OUTSIDE}"]
    page = " ".join(shown(e.value) for e in (*at.warning, *at.error, *at.info, *at.caption, *at.markdown))
    assert os.getcwd() not in page and os.path.basename(os.getcwd()) not in page


def test_hosted_mode_refuses_every_server_path(roots, monkeypatch):
    monkeypatch.setenv("FLEX_HOSTED", "1")
    (roots / "data.csv").write_text("a\n1\n")
    with pytest.raises(fc.ConfigError) as refused:
        paths.confine(roots / "data.csv")
    assert str(refused.value) == paths.HOSTED


def test_a_link_naming_a_path_outside_the_roots_loads_nothing_and_does_not_echo_it(roots):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"dataset": "loan:/etc/passwd", "n_factuals": "6", "n_cf": "2"})
    at.run()
    assert not at.exception
    assert at.session_state["dataset"]["kind"] == "builtin"  # the default stays: nothing was read
    text = " ".join([*errors(at), *(shown(w.value) for w in at.warning), *(shown(i.value) for i in at.info)])
    assert "outside the folders" in text and "passwd" not in text and "/etc" not in text


def test_a_typed_path_outside_the_roots_is_refused_and_the_dataset_kept(roots):
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"dataset": "builtin:toy2d", "n_factuals": "6", "n_cf": "2"})
    at.run()
    at.sidebar.radio(key="w_sb_source").set_value("Loan approval (paper)").run()
    at.sidebar.text_input(key="w_sb_loan_path").set_value(os.path.join(str(roots), "..", "loan.csv")).run()
    at.sidebar.button(key="sb_loan_load").click().run()
    assert not at.exception
    assert any("outside the folders" in e for e in errors(at))
    assert all("loan.csv" not in e for e in errors(at))
    assert at.session_state["dataset"] == {"kind": "builtin", "name": "toy2d"}


def test_hosted_mode_hides_path_inputs_and_project_folders(roots, monkeypatch):
    monkeypatch.setenv("FLEX_HOSTED", "1")
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"dataset": "builtin:toy2d", "n_factuals": "6", "n_cf": "2"})
    at.run()
    assert "Project folder" not in at.sidebar.radio(key="w_sb_source").options
    at.sidebar.radio(key="w_sb_source").set_value("Loan approval (paper)").run()
    assert not at.exception
    assert not [t for t in at.sidebar.text_input if t.key == "w_sb_loan_path"]
    at.sidebar.button(key="sb_loan_load").click().run()
    assert any("Upload loan_approval_dataset.csv, then press Load" in e for e in errors(at))


def _gated_app(monkeypatch, *, signed_in: bool) -> AppTest:
    # No identity provider runs offline here: the gate is tested with st.user's answers mocked.
    import ui.auth

    monkeypatch.setattr(ui.auth, "auth_configured", lambda: True)
    monkeypatch.setattr(ui.auth, "_signed_in", lambda: signed_in)
    monkeypatch.setattr(ui.auth, "_user_name", lambda: "Ada Analyst")
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"dataset": "builtin:toy2d", "n_factuals": "6", "n_cf": "2"})
    return at.run()


def test_with_auth_configured_every_page_waits_for_sign_in(monkeypatch):
    at = _gated_app(monkeypatch, signed_in=False)
    assert not at.exception
    assert [b.label for b in at.button] == ["Sign in"]
    assert not at.get("plotly_chart") and not at.sidebar.radio  # no page and no sidebar before sign-in


def test_a_signed_in_user_sees_the_app_and_their_name(monkeypatch):
    at = _gated_app(monkeypatch, signed_in=True)
    assert not at.exception
    assert any("Ada Analyst" in shown(c.value) for c in at.sidebar.caption)
    assert at.get("plotly_chart")
