"""flex_core stays a light, pure-Python core with a small public surface."""

import subprocess
import sys

import flex_core

HEAVY = ("streamlit", "plotly", "shap", "lime", "dice_ml")
#: the subpackages, the explainer and the launcher: each import must load none of HEAVY
MODULES = ["flex_core", *(f"flex_core.{name}" for name in flex_core._SUBPACKAGES), "flex_core._explainer", "flex_core.dashboard"]


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
    # Issue 34 item 7: the explainer, the task and model entry points, the result types and read_result, the errors
    # and the subpackages; the runs the explainer makes (run_global, flex_importance, ...) live in flex_core.importance.
    entry_points = {"FlexExplainer", "TaskSpec", "Feature", "make_task", "load_dataset", "FittedModel", "fit_model",
                    "read_result"}
    results = {name for name in flex_core.__all__ if name.endswith("Result") or name == "FeatureScores"}
    errors = {name for name in flex_core.__all__ if name.endswith("Error")}
    assert set(flex_core.__all__) == entry_points | results | errors | set(flex_core._SUBPACKAGES)
    from flex_core._contract import Result

    assert all(issubclass(getattr(flex_core, name), Result) for name in results)
    assert len(set(flex_core.__all__)) == len(flex_core.__all__)
    for name in flex_core.__all__:
        assert getattr(flex_core, name) is not None, name


def test_subpackages_export_at_most_110_names_a_library_user_calls():
    """Each subpackage's __all__ is what a library user calls; the dashboard's helpers live in ui/."""
    import importlib

    exported = {name: importlib.import_module(f"flex_core.{name}").__all__ for name in flex_core._SUBPACKAGES}
    total = sum(len(names) for names in exported.values())
    # 100 until issue 40 added the views ExplainerDashboard users look for (SHAP's plots, partial dependence, model
    # quality); their result types stay out of __all__.
    assert total <= 110, f"{total} names exported: {exported}"
    for package, names in exported.items():
        module = importlib.import_module(f"flex_core.{package}")
        assert len(set(names)) == len(names), package
        for name in names:
            assert not name.startswith("_") and getattr(module, name) is not None, f"flex_core.{package}.{name}"


def test_no_subpackage_import_loads_an_optional_dependency():
    # One process, checked after each import, so the first import that loads one is named.
    code = (
        "import importlib, sys\n"
        f"for module in {MODULES!r}:\n"
        "    importlib.import_module(module)\n"
        f"    loaded = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "    assert not loaded, f'import {module} loaded {loaded}'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


BLOCKED = "import sys\nfor name in ('shap', 'lime', 'plotly', 'dice_ml', 'streamlit'):\n    sys.modules[name] = None\n"


CALLS = {  # a call that needs the package -> the extra its message must name
    "fc.compare.shap_importance(None, None, [0])": "compare",
    "fc.compare.lime_importance(None, None, [0])": "compare",
    "fc.plotting.importance_figure": "plots",
    "fc.counterfactuals.DiceGenerator('random').generate(None, None, None, n_cf=1)": "dice",
    "fc.dashboard.require_streamlit()": "app",
}


def test_a_missing_optional_dependency_is_one_error_naming_its_extra():
    # One process with every optional package blocked; each call prints its error's one line.
    code = BLOCKED + "import flex_core as fc, flex_core.dashboard\n" + "".join(
        f"try:\n    {call}\nexcept ImportError as exc:\n    assert isinstance(exc, fc.ConfigError), type(exc)\n"
        f"    print(str(exc).replace(chr(10), ' '))\nelse:\n    print('no error')\n"
        for call in CALLS
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=120).stdout
    lines = out.splitlines()
    assert len(lines) == len(CALLS)
    for (call, extra), line in zip(CALLS.items(), lines, strict=True):
        assert f'pip install "flex-studio[{extra}]"' in line, (call, line)


def test_the_cli_says_which_extra_a_generator_needs():
    code = BLOCKED + (
        "from flex_core.cli import main\n"
        "sys.exit(main(['global', '--data', 'builtin:toy2d', '--generator', 'dice-random', '--n-factuals', '3',"
        " '--n-cf', '2', '--cv-folds', '0', '--quiet']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == 'error: A DiCE generator needs dice-ml, which is not installed: pip install "flex-studio[dice]".\n'


#: flex_core's public top-level modules that are no stage of the pipeline, and why each is public: the app (ui/),
#: the repository's tools and an operator use them from outside flex_core, which may import no private module
#: (tests/test_import_graph.py). Counted here, apart from the subpackages' 100 names a library user calls.
SHARED_MODULES = {
    "limits": "every setting's range, checked by the library, the CLI, the app's links and sidebar",
    "formatting": "numbers as people read and type them, the same in the CLI, the report and the app",
    "dashboard": "starting the app: explainer.dashboard(), flex dashboard, tools/serve.py and an operator's flags",
}


def test_the_shared_public_modules_are_these_few_and_small():
    import importlib
    from pathlib import Path

    package = Path(flex_core.__file__).parent
    public = {p.stem for p in package.glob("*.py") if not p.stem.startswith("_")}
    assert public == set(SHARED_MODULES), f"a new public module needs a reason in SHARED_MODULES: {public}"
    names = {m: importlib.import_module(f"flex_core.{m}").__all__ for m in SHARED_MODULES}
    assert sum(len(n) for n in names.values()) <= 25, names


#: Subpackage names that only the dashboard (ui/, app_pages/) calls today but a library user calls too, and why.
#: Any other name only the dashboard uses belongs in ui/ (issue 34 item 7): the test below says which.
DASHBOARD_AND_LIBRARY = {
    "data.KINDS": "the kinds make_task's kinds= takes",
    "data.BUILTIN_DATASETS": "the names load_builtin takes",
    "data.MAX_OUTCOME_LEVELS": "outcome_columns' rule, which load_csv applies to the target",
    "data.identifier_columns": "the columns load_csv leaves out unless use_identifiers names them",
    "counterfactuals.CounterfactualGenerator": "the base class of a generator of one's own",
    "counterfactuals.generator_defaults": "a generator's settings and their defaults",
    "importance.check_rule": "a rule checked and made canonical, beside Condition, rule_text and rule_mask",
    "importance.with_necessity_sufficiency": "adds the scores necessity_sufficiency computed apart to a result",
    "plotting.regions_heatmap": "a figure of a notebook's regional results",
    "plotting.what_must_change_figure": "a figure of explain_global(sufficiency=True)",
    "plotting.confusion_matrix_figure": "a figure of models.quality_at_cutoff",
    "plotting.calibration_figure": "a figure of models.calibration_table",
}


def test_names_only_the_dashboard_uses_live_in_ui():
    """Each subpackage name is used outside the dashboard (by another part of flex_core, the CLI, the benchmarks,
    the tools, the examples or the docs), or DASHBOARD_AND_LIBRARY says why a library user calls it."""
    import importlib
    import re
    from pathlib import Path

    root = Path(flex_core.__file__).parent.parent
    texts = {p: p.read_text() for folder in ("flex_core", "benchmarks", "tools", "examples", "docs")
             for p in (root / folder).rglob("*") if p.suffix in (".py", ".md")}
    texts[root / "README.md"] = (root / "README.md").read_text()
    dashboard_only = []
    for package in flex_core._SUBPACKAGES:
        own = root / "flex_core" / package
        for name in importlib.import_module(f"flex_core.{package}").__all__:
            word = re.compile(rf"\b{re.escape(name)}\b")
            if not any(word.search(text) for path, text in texts.items() if own not in path.parents):
                dashboard_only.append(f"{package}.{name}")
    assert sorted(set(dashboard_only) - set(DASHBOARD_AND_LIBRARY)) == [], "move these to ui/, or say why a library user calls them"
    assert sorted(set(DASHBOARD_AND_LIBRARY) - set(dashboard_only)) == [], "used outside the dashboard now: drop from the list"
