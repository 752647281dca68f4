"""``flex dashboard [DIR]`` and the launcher behind it and ``explainer.dashboard()``: the command, never a real exec here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from flex_core import dashboard as launcher
from flex_core._extras import MissingDependencyError
from flex_core.cli import main

REPO = Path(__file__).resolve().parents[2]


def _project(folder: Path) -> Path:
    folder.mkdir()
    for name in ("data.csv", "model.skops", "settings.json"):
        (folder / name).write_text("")
    return folder


def test_the_checkout_runs_its_own_app():
    assert launcher.app_script() == REPO / "app.py"


def test_command_runs_streamlit_on_the_app_with_its_settings_and_the_project_as_an_absolute_path(tmp_path, monkeypatch):
    project = _project(tmp_path / "project")
    monkeypatch.chdir(tmp_path)
    command = launcher.dashboard_command("project", port=8765)
    assert command[:5] == [sys.executable, "-m", "streamlit", "run", str(REPO / "app.py")]
    # .streamlit/config.toml as flags, so the upload limit holds whatever folder the app starts in
    assert "--server.maxUploadSize=50" in command and "--browser.gatherUsageStats=false" in command
    assert "--server.enableXsrfProtection=true" in command
    assert "--server.headless=true" in command and "--server.port=8765" in command
    assert command[-3:] == ["--", "--project", str(project.resolve())]


def test_command_without_a_project_or_port_leaves_them_to_the_app_and_streamlit():
    command = launcher.dashboard_command(open_browser=True, python="py")
    assert command[0] == "py" and "--" not in command
    assert "--server.headless=false" in command and not any(c.startswith("--server.port") for c in command)


def test_hosted_mode_adds_the_production_settings_over_the_app_settings(monkeypatch):
    monkeypatch.delenv("FLEX_HOSTED", raising=False)
    plain = launcher.dashboard_command(python="py")
    assert "--client.toolbarMode=viewer" not in plain and "--server.address=localhost" in plain
    for hosted in (launcher.dashboard_command(python="py", hosted=True),
                   monkeypatch.setenv("FLEX_HOSTED", "1") or launcher.dashboard_command(python="py")):
        assert {"--client.showErrorDetails=none", "--client.toolbarMode=viewer", "--server.address=127.0.0.1",
                "--server.maxMessageSize=16", "--server.enableXsrfProtection=true", "--server.maxUploadSize=50",
                "--server.headless=true"} <= set(hosted)
        options = [flag.split("=")[0] for flag in hosted if flag.startswith("--")]
        assert len(options) == len(set(options)), "each option once: the hosted value replaces the app's"
    assert launcher.dashboard_env({}, hosted=True)["FLEX_HOSTED"] == "1"


def test_flex_dashboard_hosted_runs_the_hosted_command(monkeypatch):
    monkeypatch.delenv("FLEX_HOSTED", raising=False)
    ran = {}
    monkeypatch.setattr(launcher, "run_dashboard", lambda project, **kw: ran.update(kw) or 0)
    assert main(["dashboard", "--hosted"]) == 0
    assert ran["hosted"] is True


def test_config_flags_read_any_app_folder(tmp_path):
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "config.toml").write_text('[server]\nmaxUploadSize = 7\nheadless = false\n[theme]\nbase = "dark"\n')
    assert launcher.config_flags(tmp_path / "app.py") == ["--server.maxUploadSize=7", "--server.headless=false", "--theme.base=dark"]
    assert launcher.config_flags(tmp_path / "elsewhere" / "app.py") == []


def test_the_cache_folder_is_made_absolute_against_the_folder_it_starts_in(tmp_path):
    assert launcher.dashboard_env({}, cwd=tmp_path)["FLEX_CACHE_DIR"] == str(tmp_path / ".flex_cache")
    assert launcher.dashboard_env({"FLEX_CACHE_DIR": "c"}, cwd=tmp_path)["FLEX_CACHE_DIR"] == str(tmp_path / "c")
    assert launcher.dashboard_env({"FLEX_CACHE_DIR": "/abs/c"}, cwd=tmp_path)["FLEX_CACHE_DIR"] == "/abs/c"


def test_an_installed_copy_is_found_when_flex_core_is_not_in_a_checkout(tmp_path, monkeypatch):
    installed = tmp_path / "site-packages"
    (installed / "flex_core").mkdir(parents=True)
    app = installed / launcher.APP_PACKAGE
    (app / "app_pages").mkdir(parents=True)
    (app / "ui").mkdir()
    (app / "ui" / "__init__.py").write_text("")
    (app / "app.py").write_text("")
    monkeypatch.setattr(launcher, "__file__", str(installed / "flex_core" / "dashboard.py"))
    monkeypatch.syspath_prepend(str(installed))
    assert launcher.app_script() == app / "app.py"
    monkeypatch.setattr(launcher, "APP_PACKAGE", "no_such_flex_app")
    with pytest.raises(launcher.ConfigError, match="not installed"):
        launcher.app_script()


def test_missing_streamlit_names_the_extra(monkeypatch):
    monkeypatch.setattr(launcher.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(MissingDependencyError, match=r'pip install "flex-studio\[app\]"') as info:
        launcher.require_streamlit()
    assert isinstance(info.value, ImportError)


@pytest.mark.parametrize(
    "args, message",
    [
        (["dashboard", "no-such-folder"], "There is no folder 'no-such-folder'"),
        (["dashboard", "not-a-project"], "'not-a-project' is not a FLEX project folder: data.csv, model.skops, settings.json missing"),
        (["dashboard", "a-file.txt"], "is a file, not a project folder"),
        (["dashboard", "--port", "70000"], "The port must be between 1 and 65535"),
        (["dashboard", "--port", "x"], "argument --port: invalid int value"),
    ],
)
def test_bad_input_exits_2_with_one_line(args, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "not-a-project").mkdir()
    (tmp_path / "a-file.txt").write_text("")
    monkeypatch.setattr(launcher, "run_dashboard", lambda *a, **k: pytest.fail("started the app on bad input"))
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err


def test_good_input_starts_the_app_on_the_project(tmp_path, monkeypatch):
    project = _project(tmp_path / "project")
    calls = []
    monkeypatch.setattr(launcher, "run_dashboard", lambda *a, **k: calls.append((a, k)) or 0)
    assert main(["dashboard", str(project), "--port", "8700"]) == 0
    assert calls == [((project.resolve(),), {"port": 8700, "open_browser": False, "hosted": False})]
