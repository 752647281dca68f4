"""flex_core stays a pure-Python core: importing it never pulls in Streamlit."""

import subprocess
import sys


def test_flex_core_does_not_import_streamlit():
    code = "import sys, flex_core, flex_core._cli; assert 'streamlit' not in sys.modules, 'streamlit was imported'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_public_api_is_declared():
    import flex_core

    assert all(hasattr(flex_core, name) for name in flex_core.__all__)
