"""flex_core stays a light, pure-Python core with a small public surface."""

import subprocess
import sys

HEAVY = ("streamlit", "plotly", "shap", "lime", "dice_ml")


def test_importing_flex_core_loads_none_of_the_heavy_modules():
    code = (
        "import sys, flex_core\n"
        f"loaded = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "assert not loaded, f'import flex_core loaded {loaded}'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_the_cli_never_imports_streamlit():
    code = "import sys, flex_core.cli, flex_core.reproduce; assert 'streamlit' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_public_api_is_small_and_every_name_resolves():
    import flex_core

    assert len(flex_core.__all__) <= 30
    assert len(set(flex_core.__all__)) == len(flex_core.__all__)
    for name in flex_core.__all__:
        assert getattr(flex_core, name) is not None, name
