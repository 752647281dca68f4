"""Write docs/json-format.md from flex_core/schema/result.schema.json (the schema is the source; never edit the page).

    python -m tools.json_docs            # rewrite docs/json-format.md
    python -m tools.json_docs --check    # exit 1 when the page is out of date
    python -m tools.json_docs --keys     # the key snapshot of this format version (tests/schema_snapshot.json)

Every kind gets a table of its keys, nested keys as paths (``features[].rank``: the key ``rank``
of each entry of ``features``; ``refine.{name}``: the value under each generator's name).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "json-format.md"
SCHEMA_LINK = "../flex_core/schema/result.schema.json"
#: How the key patterns of the schema read in a path.
PATTERN_NAMES = {"^top[0-9]+_overlap$": "top{k}_overlap", "^[0-9]+$": "{number}", "^[0-9.]+$": "{tau}"}
#: Keys shown first and last in a kind's table, whatever the schema's order.
FIRST, LAST = ("format_version", "kind"), ("config", "versions")


@dataclass(frozen=True)
class Row:
    path: str
    type: str
    required: bool
    meaning: str


class Schema:
    """The schema with its $refs and allOf resolved into one view per node."""

    def __init__(self, schema: dict):
        self.root = schema

    def pointer(self, ref: str) -> dict:
        node = self.root
        for part in ref.removeprefix("#/").split("/"):
            node = node[part]
        return node

    def resolve(self, node: dict) -> dict:
        """``node`` with the keywords of its $ref and allOf merged in (its own win; properties and required add up)."""
        if not isinstance(node, dict):
            return node
        parts = [self.resolve(self.pointer(node["$ref"]))] if "$ref" in node else []
        parts += [self.resolve(sub) for sub in node.get("allOf", []) if "if" not in sub]
        merged: dict = {}
        for part in [*parts, node]:
            for key, value in part.items():
                if key == "properties":
                    merged["properties"] = {**merged.get("properties", {}), **value}
                elif key == "required":
                    merged["required"] = [*merged.get("required", []), *[v for v in value if v not in merged.get("required", [])]]
                elif key not in ("$ref", "allOf"):
                    merged[key] = value
        return merged

    def kind_of(self, node: dict) -> str | None:
        """The kind a node stands for when it is a whole result (a $ref to ``<kind>_kind``)."""
        ref = node.get("$ref", "") if isinstance(node, dict) else ""
        match = re.fullmatch(r"#/\$defs/(\w+)_kind", ref)
        return match.group(1) if match else None

    def type_text(self, node) -> str:
        if node is False:
            return "nothing"
        kind = self.kind_of(node)
        if kind:
            return f"a `{kind}` result"
        node = self.resolve(node)
        if "const" in node:
            return json.dumps(node["const"])
        if "enum" in node:
            return " \\| ".join(json.dumps(v) for v in node["enum"])
        if "oneOf" in node:
            return " or ".join(self.type_text(sub) for sub in node["oneOf"])
        types = node.get("type", "any")
        types = [types] if isinstance(types, str) else list(types)
        texts = []
        for t in types:
            if t == "array":
                if "prefixItems" in node:
                    texts.append("[" + ", ".join(self.type_text(sub) for sub in node["prefixItems"]) + "]")
                else:
                    texts.append(f"[{self.type_text(node.get('items', {}))}]")
            elif t == "object" and isinstance(node.get("additionalProperties"), dict) and not node.get("properties"):
                texts.append(f"{{name: {self.type_text(node['additionalProperties'])}}}")
            else:
                texts.append({"number": "number", "integer": "int", "string": "text", "boolean": "bool",
                              "null": "null", "object": "object"}.get(t, t))
        return " \\| ".join(texts)

    def rows(self, node: dict, prefix: str = "") -> list[Row]:
        """Every key under ``node``, depth first, as table rows."""
        node = self.resolve(node)
        required = set(node.get("required", []))
        keys = [*node.get("properties", {}).items(),
                *((PATTERN_NAMES.get(p, p), sub) for p, sub in node.get("patternProperties", {}).items())]
        if not prefix:
            order = {name: i for i, name in enumerate(FIRST)} | {name: 1000 + i for i, name in enumerate(LAST)}
            keys.sort(key=lambda item: order.get(item[0], 100))
        out = []
        for name, sub in keys:
            path = f"{prefix}{name}"
            meaning = (sub.get("description") or self.resolve(sub).get("description", "")) if isinstance(sub, dict) else ""
            out.append(Row(path, self.type_text(sub), name in required, " ".join((meaning + _range(sub)).split())))
            if self.kind_of(sub) or not isinstance(sub, dict):
                continue
            out += self.children(self.resolve(sub), path)
        return out

    def children(self, node: dict, path: str) -> list[Row]:
        """Rows of the keys inside an object, inside each entry of a list, or inside each value of a map."""
        if node.get("properties") or node.get("patternProperties"):
            return self.rows(node, f"{path}.")
        items = node.get("items")
        if isinstance(items, dict) and not self.kind_of(items):
            inner = self.resolve(items)
            if inner.get("properties"):
                return self.rows(inner, f"{path}[].")
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and not self.kind_of(extra):
            inner = self.resolve(extra)
            if inner.get("properties"):
                return self.rows(inner, f"{path}.{{name}}.")
        return []

    def kinds(self) -> dict[str, dict]:
        return {kind: self.root["$defs"][f"{kind}_kind"] for kind in self.root["properties"]["kind"]["enum"]}


def _range(node) -> str:
    """" From 0 to 1." for a number (or a map of numbers) the schema bounds; else nothing."""
    if not isinstance(node, dict):
        return ""
    inner = node.get("additionalProperties")
    bounded = inner if isinstance(inner, dict) else node
    if "minimum" not in bounded and "maximum" not in bounded:
        return ""
    return f" From {bounded.get('minimum', '-∞')} to {bounded.get('maximum', '∞')}."


def kind_rows(schema: dict) -> dict[str, list[Row]]:
    view = Schema(schema)
    return {kind: view.rows(node) for kind, node in view.kinds().items()}


def key_snapshot(schema: dict) -> dict:
    """Per kind, every key path with its type and whether it is required: what a breaking change changes."""
    return {
        kind: {r.path: f"{_plain_type(r)}{', required' if r.required else ''}" for r in rows}
        for kind, rows in kind_rows(schema).items()
    }


def _plain_type(row: Row) -> str:
    """The row's type without Markdown escapes; the version itself is no part of the keys' shape."""
    return "text" if row.path == "format_version" else row.type.replace("\\|", "|")


def needed_bump(old: dict, new: dict) -> tuple[str | None, list[str]]:
    """"major", "minor" or None from one key snapshot to another, and what changed.

    A removed key, a changed type and a key newly required (or no longer required) break readers: MAJOR.
    A new optional key does not: MINOR.
    """
    changes, bump = [], None
    for kind in sorted(set(old) | set(new)):
        before, after = old.get(kind, {}), new.get(kind, {})
        for path in sorted(set(before) | set(after)):
            if path not in after:
                changes.append(f"{kind}: {path} removed")
                bump = "major"
            elif path not in before:
                changes.append(f"{kind}: {path} added ({after[path]})")
                bump = "major" if after[path].endswith("required") else bump or "minor"
            elif before[path] != after[path]:
                changes.append(f"{kind}: {path} was {before[path]}, is {after[path]}")
                bump = "major"
    return bump, changes


def _table(rows: list[Row]) -> list[str]:
    lines = ["| key | type | required | meaning |", "|---|---|---|---|"]
    for row in rows:
        meaning = row.meaning.replace("|", "\\|")
        lines.append(f"| `{row.path}` | {row.type} | {'yes' if row.required else ''} | {meaning} |")
    return lines


def render(schema: dict) -> str:
    view = Schema(schema)
    version = schema["$defs"]["format_version"]["const"]
    lines = [
        "# JSON format of results",
        "",
        "<!-- Generated by `python -m tools.json_docs` from flex_core/schema/result.schema.json; edit the schema, not this page. -->",
        "",
        f"Every result flex_core writes (a result's `to_dict()` / `to_json()`, and the CLI's `--out` JSON) is an object "
        f"with `format_version` (now **{version}**), `kind`, the `config` that produced it and the library `versions`. "
        f"The [JSON Schema]({SCHEMA_LINK}) (draft 2020-12, shipped inside the package as "
        "`flex_core/schema/result.schema.json`) describes every kind; this page is generated from it.",
        "",
        "- **Versions.** " + " ".join(schema["$defs"]["format_version"]["description"].split()),
        "- **Reading back.** `FlexResult.from_json(path_or_text)` (and the same on every result class) reads a result, "
        "also the CLI's JSON; a dict of another kind or another major version is refused with a message. It first "
        "checks the dict against this schema (a 1.x dict as the 2.0 dict it is; a later 2.x one, which may carry "
        "newer keys, is not checked): a missing key, a wrong type, a number outside its range (frequencies and "
        "shares lie in [0, 1]) or NaN / Infinity is one `DataError` naming the place. "
        "`flex_core.read_result(...)` reads any kind.",
        "- **Numbers.** NaN and infinite values are written as `null`. Row ids are 0-based positions in the input file.",
        "- **Paths.** `features[].rank` is the key `rank` of each entry of `features`; `refine.{name}` is the value "
        "under each generator's name. *required* means the key is always present where its parent is.",
        "",
        "Kinds: " + ", ".join(f"[`{kind}`](#{kind})" for kind in view.kinds()) + ".",
        "",
    ]
    written: dict[str, list[Row]] = {}
    for kind, node in view.kinds().items():
        rows = view.rows(node)
        lines += [f"## {kind}", "", " ".join(view.resolve(node).get("description", "").split()), ""]
        # A kind that has most of an earlier kind's keys (regional: flex's) lists only what differs.
        base = next((k for k, other in written.items() if len(set(rows) & set(other)) >= 0.75 * len(other)), None)
        if base is not None:
            paths = {row.path for row in rows}
            absent = [row.path for row in written[base] if "." not in row.path and row.path not in paths]
            lines.append(f"Every key of [`{base}`](#{base}), with the same meaning, and the keys below "
                         "(new here, or different)." + (f" Not here: {', '.join(f'`{p}`' for p in absent)}." if absent else ""))
            lines.append("")
            rows = [row for row in rows if row not in set(written[base])]
        lines += [*_table(rows), ""]
        written[kind] = view.rows(node)
    return "\n".join(lines).rstrip("\n") + "\n"


def result_schema() -> dict:
    """The JSON Schema shipped inside the package (package data, not a private module)."""
    import flex_core

    return json.loads((Path(flex_core.__file__).parent / "schema" / "result.schema.json").read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/json-format.md is out of date")
    parser.add_argument("--keys", action="store_true", help="print the key snapshot of the current format version")
    args = parser.parse_args(argv)
    schema = result_schema()
    if args.keys:
        version = schema["$defs"]["format_version"]["const"]
        print(json.dumps({version: key_snapshot(schema)}, indent=1))
        return 0
    text = render(schema)
    if args.check:
        current = DOC.read_text() if DOC.is_file() else ""
        if current != text:
            print(f"{DOC.relative_to(REPO)} is out of date: run python -m tools.json_docs", file=sys.stderr)
            return 1
        return 0
    DOC.parent.mkdir(exist_ok=True)
    DOC.write_text(text)
    print(f"wrote {DOC.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
