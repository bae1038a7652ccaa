"""A catalog quote shown as the whole sentences it was cut from.

The catalog's quotes are exact substrings of the captured texts, and a text keeps the line
breaks of its page: a quote often stops where a line of the page did ("the means by which a
client sends a message to a"). The catalog shows the sentence the quote lies in, from the
text's line (its mid-sentence breaks joined, :func:`pubproof_docs.clean.joined`) that holds
the quote, extended to the sentence's first character and to its full stop. A quote from a
flattened table (a line with ``|`` cells) or a heading (a line with no full stop), one that
spans two lines of the joined text or one the text does not hold is shown as it is.
"""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files

from pubproof_docs.clean import MARK, joined

#: where a sentence ends: a full stop, question or exclamation mark (Latin ones followed by
#: a space), or the CJK ones
_END = re.compile(r"[.!?](?=\s)|[.!?]$|[。！？]")


@cache
def _lines(lang: str) -> tuple[str, ...]:
    raw = (files("pubproof.model") / "texts" / f"publish.{lang}.txt").read_text("utf-8")
    return tuple(" ".join(line.replace(MARK, "").split()) for line in joined(raw, lang).split("\n"))


def whole(quote: str, lang: str) -> str:
    """The sentences of the ``lang`` excerpt that ``quote`` lies in, or ``quote`` as it is."""
    wanted = " ".join(quote.replace(MARK, "").split())
    if not wanted:
        return quote
    for line in _lines(lang):
        at = line.find(wanted)
        if at < 0:
            continue
        ends = [m.end() for m in _END.finditer(line)]
        if "|" in line or not ends:
            return quote
        start = max((e for e in ends if e <= at), default=0)
        stop = min((e for e in ends if e >= at + len(wanted)), default=len(line))
        return line[start:stop].strip()
    return quote
