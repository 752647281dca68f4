"""Constraints between features: a small expression language over a counterfactual and its factual.

A constraint is one line such as ``cf.loan_amount <= 5 * cf.income_annum`` or
``if cf.Educational_level > x.Educational_level then cf.Age_band_of_driver > x.Age_band_of_driver``:

- ``cf.NAME`` is the counterfactual's value of a feature, ``x.NAME`` the factual's; a name with spaces or
  other characters is quoted (``cf."loan amount"``);
- numbers, ``+ - * /`` and parentheses over continuous features;
- comparisons ``== != < <= > >=`` (``=`` is ``==``): numbers with numbers; a level with a level of the same
  feature or a quoted level (``cf.education == "Graduate"``), ordered only for an ordinal feature, by its
  declared order;
- ``NAME in {a, "b c"}`` and ``not in``: a categorical or ordinal feature among some of its levels;
- ``and``, ``or``, ``not``, and ``if A then B`` (B must hold wherever A does).

The text is read by a hand-written tokenizer and recursive-descent parser into a checked tree: nothing
is ever passed to ``eval``. Every error (a bad token, an unknown name or level, a number compared with a
level, arithmetic on levels, an order on an unordered feature, ``cf.`` of an immutable feature, a rule
that reads no counterfactual value) is one :class:`ConfigError` naming the constraint and the position.
The tree evaluates over many rows at once (numpy), on coded rows as
:func:`flex_core.counterfactuals.encode_rows` makes them (a level is its index in the feature's levels,
which follow an ordinal feature's order). A row with a missing value (NaN) or a division by zero fails the
comparisons it reaches.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._errors import ConfigError

__all__ = ["Constraint", "parse_constraint", "parse_constraints", "constraints_from_lines", "constraint_examples"]

KEYWORDS = {"and", "or", "not", "if", "then", "in"}
COMPARISONS = {"==": "==", "=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_TOKEN = re.compile(
    r"\s*(?:(?P<number>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<string>\"[^\"]*\"|'[^']*')"
    r"|(?P<op>==|!=|<=|>=|[<>=+\-*/(){},.]))"
)


@dataclass(frozen=True)
class _Token:
    kind: str  # number, name, string, op, end
    text: str
    pos: int  # 0-based character offset


@dataclass(frozen=True)
class Node:
    """One node of a checked tree: ``op`` with its ``args``; ``kind`` is "number", "level" or "bool"."""

    op: str  # num, ref, level, in, arith (+ - * /), neg, cmp, and, or, not, if
    args: tuple
    kind: str
    feature: str | None = None  # the feature of a "level" value


@dataclass(frozen=True)
class Constraint:
    """A parsed, checked constraint: its text, its tree and the features it reads."""

    text: str
    tree: Node
    features: tuple[str, ...]

    def holds(self, cf: np.ndarray, x: np.ndarray, index: dict[str, int]) -> np.ndarray:
        """Which rows hold it: ``cf`` and ``x`` coded rows (n, F), ``index`` feature name -> column."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(_evaluate(self.tree, np.asarray(cf, float), np.asarray(x, float), index), dtype=bool)


def parse_constraint(text: str, features: Sequence) -> Constraint:
    """Parse and check one constraint against the task's features (:class:`~flex_core.data.Feature` objects)."""
    if not isinstance(text, str) or not text.strip():
        raise ConfigError("A constraint is empty: write one such as cf.loan_amount <= 5 * cf.income_annum.")
    parser = _Parser(text.strip(), {f.name: f for f in features})
    tree = parser.parse()
    if not any(side == "cf" for side, _ in parser.read):
        raise ConfigError(f"Constraint {parser.text!r}: it reads no counterfactual value (cf.NAME), so no "
                          "counterfactual can break or keep it.")
    return Constraint(parser.text, tree, tuple(dict.fromkeys(name for _, name in parser.read)))


def parse_constraints(texts, features: Sequence) -> tuple[Constraint, ...]:
    """Each text parsed and checked (:func:`parse_constraint`), in order, repeats kept once."""
    if isinstance(texts, str):
        raise ConfigError("Give constraints as a list of expressions, one per constraint.")
    return tuple(parse_constraint(t, features) for t in dict.fromkeys(str(t).strip() for t in texts or ()))


def constraints_from_lines(text: str) -> list[str]:
    """The constraints of a file's text: one per line; blank lines and ``#`` comments skipped.

    A ``#`` inside a quoted name or level does not start a comment.
    """
    out = []
    for line in text.splitlines():
        kept, quote = [], None
        for ch in line:
            if quote is None and ch == "#":
                break
            if ch in "\"'":
                quote = None if quote == ch else (ch if quote is None else quote)
            kept.append(ch)
        stripped = "".join(kept).strip()
        if stripped:
            out.append(stripped)
    return out


def constraint_examples(features: Sequence) -> list[tuple[str, str]]:
    """One example constraint per kind the features allow, as (kind, text); each parses on these features.

    Kinds: a linear bound between two numbers (or on one), a condition (``if ... then``), levels (``in {...}``)
    and an order (an ordinal feature compared by its declared order).
    """
    mutable = [f for f in features if not f.immutable]
    numbers = [f for f in mutable if f.is_continuous]
    categories = [f for f in mutable if not f.is_continuous and len(f.levels) >= 2]
    ordinals = [f for f in mutable if f.is_ordinal and len(f.levels) >= 2]
    out = []
    if len(numbers) >= 2:
        a, b = _ref_name(numbers[0]), _ref_name(numbers[1])
        out.append(("linear", f"cf.{a} <= x.{a} + 0.5 * (cf.{b} - x.{b})"))
    elif numbers:
        a = _ref_name(numbers[0])
        out.append(("linear", f"cf.{a} <= 1.2 * x.{a}"))
    if numbers and (categories or len(numbers) >= 2):
        a = _ref_name(numbers[0])
        condition = (f"cf.{_ref_name(categories[0])} != x.{_ref_name(categories[0])}" if categories
                     else f"cf.{_ref_name(numbers[1])} > x.{_ref_name(numbers[1])}")
        out.append(("conditional", f"if {condition} then cf.{a} >= x.{a}"))
    if categories:
        f = categories[0]
        out.append(("levels", f"cf.{_ref_name(f)} in {{{', '.join(_quoted(v) for v in f.levels[:2])}}}"))
    if ordinals:
        f = ordinals[0]
        out.append(("order", f"cf.{_ref_name(f)} >= x.{_ref_name(f)}"))
    return out


def _ref_name(feature) -> str:
    """A feature's name as a constraint writes it: bare when it is a plain name, else quoted."""
    plain = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", feature.name) and feature.name not in KEYWORDS
    return feature.name if plain else _quoted(feature.name)


def _quoted(text: str) -> str:
    return f"'{text}'" if '"' in text else f'"{text}"'


class _Parser:
    """Recursive descent over the tokens; every method returns a checked :class:`Node`."""

    def __init__(self, text: str, features: dict):
        self.text, self.features = text, features
        self.tokens = self._tokenize()
        self.at = 0
        self.read: list[tuple[str, str]] = []  # (cf or x, feature) in order of reading

    def fail(self, pos: int, message: str):
        raise ConfigError(f"Constraint {self.text!r}, at character {pos + 1}: {message}.")

    def _tokenize(self) -> list[_Token]:
        tokens, pos = [], 0
        while pos < len(self.text):
            if self.text[pos:].strip() == "":
                break
            match = _TOKEN.match(self.text, pos)
            if match is None or match.end() == pos:
                start = len(self.text) - len(self.text[pos:].lstrip())
                self.fail(start, f"unexpected character {self.text[start]!r}")
            assert match is not None
            kind = match.lastgroup or "op"
            tokens.append(_Token(kind, match.group(kind), match.start(kind)))
            pos = match.end()
        tokens.append(_Token("end", "", len(self.text)))
        return tokens

    # -- token helpers ----------------------------------------------------------------------
    @property
    def token(self) -> _Token:
        return self.tokens[self.at]

    def accept(self, *texts: str) -> _Token | None:
        token = self.token
        if token.kind in ("op", "name") and token.text in texts:
            self.at += 1
            return token
        return None

    def expect(self, text: str, what: str) -> _Token:
        token = self.accept(text)
        if token is None:
            self.fail(self.token.pos, f"expected {what}, found {self._shown(self.token)}")
        assert token is not None
        return token

    @staticmethod
    def _shown(token: _Token) -> str:
        return "the end" if token.kind == "end" else repr(token.text)

    # -- grammar ----------------------------------------------------------------------------
    def parse(self) -> Node:
        node = self.implication()
        if self.token.kind != "end":
            self.fail(self.token.pos, f"unexpected {self._shown(self.token)} after a complete constraint")
        self.boolean(node, 0, "the constraint")
        return node

    def implication(self) -> Node:
        start = self.token
        if self.accept("if"):
            condition = self.either()
            self.boolean(condition, start.pos, "the condition after 'if'")
            then = self.expect("then", "'then'")
            result = self.either()
            self.boolean(result, then.pos, "what follows 'then'")
            return Node("if", (condition, result), "bool")
        return self.either()

    def either(self) -> Node:
        node = self.both()
        while (token := self.accept("or")) is not None:
            right = self.both()
            node = Node("or", (self.boolean(node, token.pos, "'or'"), self.boolean(right, token.pos, "'or'")), "bool")
        return node

    def both(self) -> Node:
        node = self.negation()
        while (token := self.accept("and")) is not None:
            right = self.negation()
            node = Node("and", (self.boolean(node, token.pos, "'and'"), self.boolean(right, token.pos, "'and'")), "bool")
        return node

    def negation(self) -> Node:
        token = self.accept("not")
        if token is not None:
            return Node("not", (self.boolean(self.negation(), token.pos, "'not'"),), "bool")
        return self.comparison()

    def comparison(self) -> Node:
        left = self.sum()
        token = self.token
        if token.kind == "op" and token.text in COMPARISONS:
            self.at += 1
            right = self.sum()
            return self._compare(COMPARISONS[token.text], left, right, token.pos)
        negated = token.kind == "name" and token.text == "not" and self.tokens[self.at + 1].text == "in"
        if negated:
            self.at += 1
        if self.accept("in"):
            node = self._membership(left, token.pos)
            return Node("not", (node,), "bool") if negated else node
        return left

    def sum(self) -> Node:
        node = self.product()
        while (token := self.accept("+", "-")) is not None:
            node = self._arith(token, node, self.product())
        return node

    def product(self) -> Node:
        node = self.unary()
        while (token := self.accept("*", "/")) is not None:
            node = self._arith(token, node, self.unary())
        return node

    def unary(self) -> Node:
        token = self.accept("-")
        if token is not None:
            return Node("neg", (self._number(self.unary(), token.pos, "'-'"),), "number")
        return self.atom()

    def atom(self) -> Node:
        token = self.token
        if token.kind == "number":
            self.at += 1
            return Node("num", (float(token.text),), "number")
        if token.kind == "string":
            self.at += 1
            return Node("text", (token.text[1:-1], token.pos), "text")
        if self.accept("("):
            node = self.implication()
            self.expect(")", "')'")
            return node
        if token.kind == "name" and token.text in ("cf", "x"):
            return self._reference()
        if token.kind == "name" and token.text not in KEYWORDS:
            self.fail(token.pos, f"unknown name {token.text!r}: write cf.{token.text} for the counterfactual's value "
                                 f"or x.{token.text} for the factual's")
        self.fail(token.pos, f"expected a value (a number, cf.NAME or x.NAME), found {self._shown(token)}")
        raise AssertionError  # fail always raises

    def _reference(self) -> Node:
        side = self.token
        self.at += 1
        self.expect(".", f"'.' after {side.text!r}")
        name_token = self.token
        if name_token.kind not in ("name", "string"):
            self.fail(name_token.pos, f"expected a feature name after '{side.text}.', found {self._shown(name_token)}")
        self.at += 1
        name = name_token.text[1:-1] if name_token.kind == "string" else name_token.text
        feature = self.features.get(name)
        if feature is None:
            self.fail(name_token.pos, f"unknown feature {name!r}; the features are: {', '.join(self.features)}")
        assert feature is not None
        if side.text == "cf" and feature.immutable:
            self.fail(side.pos, f"{name!r} is immutable, so cf.{name} always equals x.{name}; "
                                f"a constraint may read x.{name} but not constrain it")
        self.read.append((side.text, name))
        if feature.is_continuous:
            return Node("ref", (side.text, name), "number")
        return Node("ref", (side.text, name), "level", feature=name)

    # -- checks -------------------------------------------------------------------------------
    def boolean(self, node: Node, pos: int, where: str) -> Node:
        if node.kind != "bool":
            self.fail(pos, f"{where} needs a true/false condition (a comparison), not a {_kind_word(node)}")
        return node

    def _number(self, node: Node, pos: int, where: str) -> Node:
        if node.kind != "number":
            self.fail(pos, f"{where} needs numbers, not a {_kind_word(node)}")
        return node

    def _arith(self, token: _Token, left: Node, right: Node) -> Node:
        where = f"{token.text!r}"
        return Node("arith", (token.text, self._number(left, token.pos, where), self._number(right, token.pos, where)),
                    "number")

    def _level_code(self, node: Node, feature: str, pos: int) -> Node:
        """A quoted level (or a number, read as a level's text) as the code of ``feature``'s level."""
        levels = list(self.features[feature].levels)
        text = node.args[0] if node.op == "text" else _number_text(node.args[0])
        if text not in levels:
            self.fail(node.args[1] if node.op == "text" else pos,
                      f"{feature!r} has no level {text!r}; its levels are: {', '.join(map(str, levels))}")
        return Node("num", (float(levels.index(text)),), "level", feature=feature)

    def _compare(self, op: str, left: Node, right: Node, pos: int) -> Node:
        kinds = {left.kind, right.kind}
        if kinds == {"number"}:
            return Node("cmp", (op, left, right), "bool")
        if "bool" in kinds:
            self.fail(pos, f"{op!r} compares values, not conditions; join conditions with 'and', 'or', 'if ... then'")
        level = left if left.kind == "level" else right if right.kind == "level" else None
        if level is None:
            self.fail(pos, "a comparison needs cf.NAME or x.NAME on one side")
        assert level is not None
        other = right if level is left else left
        feature = level.feature
        assert feature is not None
        if other.kind == "number" and other.op != "num":
            self.fail(pos, f"{feature!r} has levels, not numbers: compare it with a quoted level or with itself")
        if other.kind in ("text", "number"):
            other = self._level_code(other, feature, pos)
        if other.feature != feature:
            self.fail(pos, f"{feature!r} and {other.feature!r} have different levels and cannot be compared")
        if op not in ("==", "!=") and not self.features[feature].is_ordinal:
            self.fail(pos, f"{feature!r} has no order, so {op!r} does not apply; use == or 'in {{...}}', "
                           "or give it an order")
        pair = (left, other) if level is left else (other, right)
        return Node("cmp", (op, *pair), "bool")

    def _membership(self, left: Node, pos: int) -> Node:
        if left.kind != "level" or left.op != "ref":
            self.fail(pos, f"'in' needs a categorical or ordinal feature on its left, not a {_kind_word(left)}")
        feature = left.feature
        assert feature is not None
        self.expect("{", "'{' to start the levels")
        codes = []
        while True:
            token = self.token
            if token.kind not in ("name", "string", "number"):
                self.fail(token.pos, f"expected a level, found {self._shown(token)}")
            self.at += 1
            text = Node("text", (token.text[1:-1] if token.kind == "string" else token.text, token.pos), "text")
            codes.append(self._level_code(text, feature, token.pos).args[0])
            if self.accept("}"):
                break
            self.expect(",", "',' or '}'")
        return Node("in", (left, tuple(codes)), "bool")


def _kind_word(node: Node) -> str:
    return {"number": "number", "level": "level", "text": "quoted level", "bool": "condition"}[node.kind]


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


_COMPARE = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater,
            ">=": np.greater_equal}
_ARITH = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}


def _evaluate(node: Node, cf: np.ndarray, x: np.ndarray, index: dict[str, int]):
    """The node's value over every row: floats for numbers and level codes, bools for conditions."""
    op, args = node.op, node.args
    if op == "num":
        return args[0]
    if op == "ref":
        return (cf if args[0] == "cf" else x)[:, index[args[1]]]
    if op == "neg":
        return -_evaluate(args[0], cf, x, index)
    if op == "arith":
        return _ARITH[args[0]](_evaluate(args[1], cf, x, index), _evaluate(args[2], cf, x, index))
    if op == "cmp":
        left, right = _evaluate(args[1], cf, x, index), _evaluate(args[2], cf, x, index)
        return np.broadcast_to(_COMPARE[args[0]](left, right), (len(cf),))
    if op == "in":
        return np.isin(_evaluate(args[0], cf, x, index), args[1])
    values = [_evaluate(a, cf, x, index) for a in args]
    if op == "and":
        return values[0] & values[1]
    if op == "or":
        return values[0] | values[1]
    if op == "not":
        return ~values[0]
    return ~values[0] | values[1]  # if A then B
