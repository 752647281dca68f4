"""The README and docs/ hold together: every relative link finds its file (and its heading), and the README stays short."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")  # [text](target) and ![alt](target)
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def _prose(text: str) -> str:
    """The page without code blocks and code spans, where brackets are not links."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered."""
    seen: dict[str, int] = {}
    out = set()
    for heading in HEADING.findall(FENCE.sub("", path.read_text())):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(_prose(page.read_text())):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        file_part, _, anchor = target.partition("#")
        path = (page.parent / file_part).resolve() if file_part else page
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no such heading")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_every_relative_link_finds_its_file_and_heading(page):
    assert broken_links(page) == []


def test_the_checker_sees_a_broken_link_and_a_missing_heading(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other\n\n## A `code` heading, twice\n\n## A `code` heading, twice\n")
    page.write_text(
        "[fine](other.md#a-code-heading-twice-1) [gone](missing.md) ![img](pic.png) [web](https://example.org)\n"
        "[no anchor](other.md#nowhere) `[not a link](missing.md)`\n\n```\n[also not](missing.md)\n```\n"
    )
    assert broken_links(page) == ["missing.md: no such file", "pic.png: no such file", "other.md#nowhere: no such heading"]


def test_the_readme_stays_at_most_300_lines():
    assert len((REPO / "README.md").read_text().splitlines()) <= 300


def test_the_readme_names_the_json_format_version_the_library_writes():
    """The README once said "now 1.0" after the format moved to 2.0: the stated version is read from the code."""
    from flex_core._contract import FORMAT_VERSION

    stated = re.search(r"`format_version` \(now (\d+\.\d+)", (REPO / "README.md").read_text())
    assert stated is not None and stated.group(1) == FORMAT_VERSION
