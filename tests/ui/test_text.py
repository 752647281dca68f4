"""ui.text.plain: any text from a link or a file reads as itself in Streamlit's Markdown, with no live syntax."""

from __future__ import annotations

import re
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.pages.conftest import live_markdown, shown, syntax_characters
from ui.text import plain


def unescaped_punctuation(markdown: str) -> list[str]:
    return [c for _, c in syntax_characters(markdown)]


ATTACKS = [
    "[Session expired: sign in again](http://x)",  # ?dataset=upload:…
    "![x](http://x)",  # ?seed=…
    "<a href='http://x'>x</a> <img src=x onerror=alert(1)> &lt;b&gt;",
    "http://x.org www.x.org a@b.org <http://x>",  # autolinks
    ":red[alert] :material/lock: :streamlit: :smile: :blue-background[x]",  # Streamlit directives, emoji
    "$x^2$ $$\\int$$",  # math
    "a -> b <-> c <- d -- e >= f <= g ~= h",  # Streamlit's arrows and signs
    "**bold** _it_ `code` ~~gone~~ # heading\n- item\n1. item\n> quote\n    code block\n| a | b |\n|---|---|",
    "[ref]: http://x\n[ref]",  # a reference link
    "a\\[b](http://x) \\\\[c](http://x)",  # backslashes already in the text
]


def test_every_attack_reads_as_itself_with_nothing_live():
    assert all(live_markdown(text) for text in ATTACKS[:6])  # the check does see them, unescaped
    for text in ATTACKS:
        markdown = plain(text)
        assert unescaped_punctuation(markdown) == [] and live_markdown(markdown) == [], (text, markdown)
        lines = [" ".join(line.split()) for line in text.split("\n") if line.strip()]
        assert [line for line in shown(markdown).split("\n") if line] == lines, text
        # No line can start an indented code block, a list or a heading; no `:word:` for the emoji plugin to find.
        assert not any(line.startswith(" ") for line in markdown.split("\n"))
        assert not re.search(r":[\w+-][\w_+-]*:", markdown)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80)
       | st.text(alphabet=string.punctuation + "ab :/.\n\t\\", max_size=80)
       | st.lists(st.sampled_from(["->", "<->", "<-", "--", ">=", "<=", "~=", ":streamlit:", " ", "\n", "a", "[x](y)",
                                   "http://", "HTTPS://", "www.", "WwW.", "@", "x.org", "/"]))
       .map("".join))
def test_any_text_reads_as_itself_and_nothing_in_it_is_markdown(text):
    markdown = plain(text)
    # Every ASCII punctuation character is escaped: no link, image, HTML tag, entity, emphasis, code, directive,
    # math, heading, list, table or autolink (each needs one unescaped) can start.
    assert unescaped_punctuation(markdown) == []
    assert not re.search(r":[\w+-][\w_+-]*:", markdown)
    # Nor can Streamlit rewrite the text after reading the escapes (its logo, arrows and signs; its own regexes).
    text_nodes = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)
    assert ":streamlit:" not in text_nodes
    assert not re.search(r"(^|\s)(<->|->|<-|--|>=|<=|~=)(\s|$)", text_nodes, re.M)
    # GFM finds web and e-mail addresses in the text (escaped or not) after a space or a punctuation mark, and
    # an e-mail's name right before its @: a word joiner stands there instead.
    assert all(text_nodes[m.start() - 1:m.start()] == "\u2060"
               for m in re.finditer(r"https?://|www\.|@", text_nodes, re.IGNORECASE))
    # It reads as the text: the same words, line by line (runs of spaces are one space, as Markdown shows them).
    expected = [" ".join(line.split()) for line in re.sub(r"\r\n?", "\n", text).split("\n")]
    assert [line for line in shown(markdown).split("\n") if line] == [line for line in expected if line]
    assert not any(line.startswith((" ", "\t")) for line in markdown.split("\n"))
