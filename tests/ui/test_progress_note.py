"""The progress message of a generation carries the generator's first-call note, when it has one."""

from __future__ import annotations

import contextlib

import pytest

from ui import cache


class _Generator:
    def __init__(self, note):
        self.first_call_note = note


class _Explainer:
    def __init__(self, generator, used="tree"):
        self.generator = generator
        self.generator_name, self.generator_used = "tree", used
        self.asked: list[list[int]] = []

    def not_generated(self, rows):
        return [r for r in rows if r != 0]

    def counterfactuals(self, rows, progress=None):
        self.asked.append(list(rows))


@pytest.mark.parametrize(("generator", "used", "start"), [
    (_Generator("The loops are compiled first."), "tree", "Finding the ways out of 2 cases… The loops are compiled first."),
    (_Generator(None), "tree", "Finding the ways out of 2 cases…"),
    (object(), "tree", "Finding the ways out of 2 cases…"),  # a generator of the protocol without the attribute
    # the model is served by another generator (tree hands a model it cannot read to batch): its loops never run
    (_Generator("The loops are compiled first."), "batch", "Finding the ways out of 2 cases…"),
])
def test_the_start_message_carries_the_note(monkeypatch, generator, used, start):
    shown = []

    @contextlib.contextmanager
    def bar(text, step):
        shown.append(text)
        yield lambda done, total: None

    monkeypatch.setattr(cache, "progress_bar", bar)
    explainer = _Explainer(generator, used)
    cache.ensure_rows(explainer, [0, 1, 2])
    assert shown == [start] and explainer.asked == [[1, 2]]
