"""Optional dependencies: imported where they are used, with an install hint naming the extra.

``import flex_core`` and every subpackage import load none of them (tests/test_purity.py checks it).
The extras are pyproject.toml's ``[project.optional-dependencies]``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ._errors import ConfigError

#: optional top-level module -> (the pip package, the extra that installs it)
EXTRAS = {
    "shap": ("shap", "compare"),
    "lime": ("lime", "compare"),
    "plotly": ("plotly", "plots"),
    "dice_ml": ("dice-ml", "dice"),
    "streamlit": ("streamlit", "app"),
}


class MissingDependencyError(ConfigError, ImportError):
    """An optional dependency is not installed. Both a :class:`ConfigError` (the CLI prints it as one line) and an ImportError."""


def install_hint(extra: str) -> str:
    return f'pip install "flex-studio[{extra}]"'


def require(module: str, purpose: str) -> ModuleType:
    """``importlib.import_module(module)``; when its package is missing, an error saying which extra installs it.

    ``purpose`` names what needs it ("SHAP", "the figures"). Only the optional package itself being absent
    is turned into the hint; an ImportError inside an installed package propagates as it is.
    """
    top = module.partition(".")[0]
    package, extra = EXTRAS[top]
    try:
        importlib.import_module(top)
    except ModuleNotFoundError as exc:
        if exc.name != top:
            raise
        raise MissingDependencyError(f"{purpose} needs {package}, which is not installed: {install_hint(extra)}.") from None
    return importlib.import_module(module)
