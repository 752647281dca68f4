"""Login for a hosted app: when ``.streamlit/secrets.toml`` has an ``[auth]`` section, every page requires it.

Streamlit's OIDC login (``st.login`` / ``st.user`` / ``st.logout``) does the work; this module only
decides whether the gate applies and shows who is signed in. Without an ``[auth]`` section (a
local run) nothing changes.
"""

from __future__ import annotations

import streamlit as st

from ui.text import plain


def auth_configured() -> bool:
    """Whether the secrets hold an ``[auth]`` section (a missing or unreadable secrets file means no)."""
    try:
        return "auth" in st.secrets
    except Exception:  # Streamlit raises when there is no secrets file at all
        return False


def _signed_in() -> bool:
    return bool(st.user.is_logged_in)


def _user_name() -> str:
    return str(st.user.get("name") or st.user.get("email") or "signed in")


def require_login() -> None:
    """Stop every page behind a sign-in button until the user has logged in; then name them in the sidebar."""
    if not auth_configured():
        return
    if not _signed_in():
        st.title("FLEX Studio")
        st.info("This FLEX Studio is shared by a team: sign in to open it.")
        st.button("Sign in", type="primary", on_click=st.login, key="auth_sign_in")
        st.stop()
    with st.sidebar:
        st.caption(f"Signed in as **{plain(_user_name())}**")
        st.button("Sign out", on_click=st.logout, key="auth_sign_out")
