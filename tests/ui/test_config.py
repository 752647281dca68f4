"""The Streamlit settings the docs describe: an upload limit, XSRF protection kept on, this machine only; and the
hosted (production) settings docs/hosting.md lists."""

from __future__ import annotations

import tomllib
from pathlib import Path

CONFIG = Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml"


def test_upload_limit_and_xsrf_protection():
    server = tomllib.loads(CONFIG.read_text())["server"]
    assert server["maxUploadSize"] == 50  # MB; the "Bad input" table (docs/bad-input.md) names this limit
    assert server["enableXsrfProtection"] is True
    assert "50 MB" in (CONFIG.parents[1] / "docs" / "bad-input.md").read_text()


def test_a_served_app_neither_watches_its_files_nor_collects_all_garbage_after_every_run():
    """Both cost the shared server CPU on every rerun (see the comments in config.toml and docs/hosting.md)."""
    settings = tomllib.loads(CONFIG.read_text())
    assert settings["server"]["fileWatcherType"] == "none"
    assert settings["runner"]["postScriptGC"] is False


HOSTED = CONFIG.with_name("hosted.toml")


def test_the_app_listens_on_this_machine_only_unless_told_otherwise():
    assert tomllib.loads(CONFIG.read_text())["server"]["address"] == "localhost"


def test_the_hosted_settings_hide_errors_and_developer_items_and_keep_messages_small():
    hosted = tomllib.loads(HOSTED.read_text())
    assert hosted["server"]["address"] == "127.0.0.1"  # behind a reverse proxy on the same machine
    assert hosted["client"] == {"showErrorDetails": "none", "toolbarMode": "viewer"}
    assert hosted["server"]["maxMessageSize"] == 16 and hosted["server"]["maxWidgetStateSize"] == 2  # MB; default 200, 25
    assert hosted["server"]["enableXsrfProtection"] is True and hosted["server"]["enableAgentApi"] is False
    assert hosted["server"]["allowRunOnSave"] is False and hosted["global"]["developmentMode"] is False
    hosting = (CONFIG.parents[1] / "docs" / "hosting.md").read_text()
    for setting in ('showErrorDetails = "none"', 'toolbarMode = "viewer"', "maxMessageSize = 16", 'address = "127.0.0.1"'):
        assert setting in hosting, setting
