"""The Streamlit settings the docs describe: an upload limit, and XSRF protection kept on."""

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
