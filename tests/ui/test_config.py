"""The Streamlit settings the README documents: an upload limit, and XSRF protection kept on."""

from __future__ import annotations

import tomllib
from pathlib import Path

CONFIG = Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml"


def test_upload_limit_and_xsrf_protection():
    server = tomllib.loads(CONFIG.read_text())["server"]
    assert server["maxUploadSize"] == 50  # MB; the README's "Bad input" table names this limit
    assert server["enableXsrfProtection"] is True
    assert "50 MB" in (CONFIG.parents[1] / "README.md").read_text()
