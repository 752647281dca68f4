"""The generator registry: every counterfactual generator the CLI and the app offer, by name."""

from __future__ import annotations

from collections.abc import Callable

from .._errors import ConfigError
from ._batch import BatchGenerator
from ._dice import DiceGenerator
from ._set import CounterfactualGenerator, GeneratorParams
from ._tree import TreeGenerator

__all__ = ["DEFAULT_GENERATOR", "GENERATORS", "register_generator", "make_generator", "generator_key", "generator_defaults"]

#: The generator the CLI and the app use unless told otherwise.
DEFAULT_GENERATOR = "tree"

#: name -> (factory(**settings), one-line description)
GENERATORS: dict[str, tuple[Callable[..., CounterfactualGenerator], str]] = {
    "dice-random": (lambda **kw: DiceGenerator("random", **kw), "DiCE random sampling (the paper's generator)"),
    "dice-genetic": (lambda **kw: DiceGenerator("genetic", **kw), "DiCE genetic search"),
    "dice-kdtree": (lambda **kw: DiceGenerator("kdtree", **kw), "DiCE KD-tree over training data"),
    "batch": (lambda **kw: BatchGenerator(**kw), "Batched random search with sparsification (fast, native)"),
    "batch-plausible": (
        lambda **kw: BatchGenerator(plausible=True, **kw),
        "Batched search from nearest training rows of the desired class, sparsified",
    ),
    "tree": (lambda **kw: TreeGenerator(**kw),
             "Exact minimal counterfactuals read from a tree model's splits (others: batch)"),
}


def register_generator(name: str, factory: Callable[..., CounterfactualGenerator], description: str) -> None:
    """Make a generator available by name to the CLI, the app and :func:`make_generator`."""
    GENERATORS[name] = (factory, description)


def make_generator(name: str, **settings) -> CounterfactualGenerator:
    try:
        factory, _ = GENERATORS[name]
    except KeyError:
        raise ConfigError(f"Unknown generator {name!r}; choose one of {', '.join(GENERATORS)}.") from None
    try:
        return factory(**settings)
    except TypeError as exc:
        raise ConfigError(f"Generator {name!r} does not take these settings: {exc}.") from None


def _settings(generator) -> dict:
    """``result_params()`` of a generator declaring its settings, else its public attributes (a plain protocol object)."""
    if isinstance(generator, GeneratorParams):
        return generator.result_params()
    return {k: v for k, v in vars(generator).items() if not k.startswith("_") and k != "name"}


def generator_key(generator: CounterfactualGenerator) -> dict:
    """The generator's name and the settings that decide its output besides seed and n_cf (the store's key)."""
    return {"name": generator.name, **_settings(generator)}


def generator_defaults(name: str) -> dict:
    """The settings the app offers for a registered generator, with their defaults.

    Not those its name fixes (``named_params``), nor those it cannot honour (``unavailable_params``,
    e.g. dice-genetic's post-hoc sparsity, which dice-ml never runs).
    """
    if name not in GENERATORS:
        raise ConfigError(f"Unknown generator {name!r}; choose one of {', '.join(GENERATORS)}.")
    generator = make_generator(name)
    hidden = set(getattr(generator, "named_params", ())) | set(getattr(generator, "unavailable_params", ()))
    return {k: v for k, v in _settings(generator).items() if k not in hidden}

