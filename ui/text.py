"""Text from a link or a file, made safe to show through Streamlit's Markdown.

Streamlit renders the text of ``st.markdown``, ``st.caption``, ``st.error`` / ``st.warning`` / ``st.info`` /
``st.success``, ``st.toast``, headers and widget labels as Markdown: links and images, autolinks
(``http://…``, ``www.…``, ``a@b.org``), emphasis, code, its own directives (``:red[…]``, ``:material/…:``),
``$math$`` and emoji shortcodes. A dataset name, a seed or a criterion from a link, or a column name, a
level or a file name from a CSV, shown as they are, can therefore draw a live link or an image inside the
app (``?dataset=upload:[Session expired: sign in again](http://…)``). Every such text goes through
:func:`plain` on its way to Markdown.
"""

from __future__ import annotations

import re
import string

__all__ = ["plain"]

#: CommonMark lets a backslash escape any ASCII punctuation character, and every Markdown construct (links,
#: images, emphasis, code, HTML, entities, headings, lists, tables, Streamlit's directives, math, autolinks)
#: starts with or needs one: escaped, none can start.
_PUNCTUATION = frozenset(string.punctuation)
#: Streamlit rewrites some text after the escapes are read: web and e-mail addresses become links (GFM's
#: autolink literals are found in the text, escapes or not), ``:streamlit:`` becomes its logo, and ``->``,
#: ``<-``, ``<->``, ``--``, ``>=``, ``<=``, ``~=`` standing alone become arrows and signs. A word joiner
#: (U+2060, invisible) keeps the text as it is: before ``http://``, ``www.`` and ``@`` (an address is linked
#: only after a space or a punctuation mark, and ``@`` only right after its name), after the first character
#: of the others.
_REWRITTEN = re.compile(r"(?i:(?=https?://|www\.))|(?=@)|:(?=streamlit:)"
                        r"|(?<!\S)(?:<(?=->(?!\S))|[-<>~](?=[-=>](?!\S)))")
_JOINER = "\u2060"


def _escape_line(line: str) -> str:
    text = _REWRITTEN.sub(lambda m: m.group(0) + _JOINER, " ".join(line.split()))
    return "".join("\\" + c if c in _PUNCTUATION else c for c in text)


def plain(value: object) -> str:
    """``value`` as text that Streamlit's Markdown shows literally: no link, image, HTML, directive or math.

    Every ASCII punctuation character is backslash-escaped, which Markdown shows as the character itself.
    Runs of spaces and tabs become one space (Markdown shows them so anyway; an indent could start a code
    block). A line break stays a line break (a hard one, so the next line cannot start a list or a heading),
    a blank line between paragraphs stays, and empty lines go. An invisible word joiner (U+2060) keeps web
    and e-mail addresses, arrows and signs from being rewritten (see ``_REWRITTEN``).

    Parameters
    ----------
    value : object
        The text (or anything, shown as ``str(value)``).

    Returns
    -------
    str
        Markdown source whose rendering reads as ``value``.
    """
    paragraphs = re.split(r"\n\s*\n", re.sub(r"\r\n?", "\n", str(value)))
    escaped = ("\\\n".join(line for line in map(_escape_line, p.split("\n")) if line) for p in paragraphs)
    return "\n\n".join(p for p in escaped if p)
