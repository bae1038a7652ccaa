"""The source texts as a reader should see them, without their capture artefacts.

``model/texts/publish.*.txt`` are unchanged copies of what was captured: the Chinese text
keeps the ``==`` marks its web page used to highlight the normative sentences, and every
text keeps the line breaks of its page or PDF, in mid-sentence. The site shows them clean:

- a ``==``-delimited run becomes a highlight (``<mark class="pp-normative">``);
- a line broken in mid-sentence is joined to the next one (with a space between two Latin
  words, with nothing between CJK characters);
- everything else (the lines of a flattened table, headings, the words themselves) stays.

:func:`words_kept` is the test's oracle: apart from whitespace and the ``==`` marks, the
clean text is the source character for character.
"""

from __future__ import annotations

import html
import re

MARK = "=="

#: A CJK character (ideographs, kana, full-width forms and CJK punctuation).
_CJK = r"\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"
_CJK_CHAR = re.compile(f"[{_CJK}]")
#: What ends a sentence or a label, so the line break after it is the text's own.
_FINAL = tuple("。．！？；：:;!?.|")
#: A line that starts a heading, a figure or a table caption: never joined onto.
_HEADING = re.compile(r"^(\d+(\.\d+)+\s|图例|表格|図|表\s|Figure|Table|Abbildung|Tabla|Tabelle)")
_LABEL = re.compile(r"^[^,。:：]{1,6}[:：]")
_PACKET = re.compile(r"(PUBLISH|PUBACK|PUBREC|PUBREL|PUBCOMP)")
_LATIN_TAIL = re.compile(r"[A-Za-z0-9,(]$")
_LATIN_HEAD = re.compile(r"^[a-zäöüßáéíóúñ(]")


def _bare(line: str) -> str:
    return line.replace(MARK, "").strip()


def _joins(line: str, following: str, lang: str) -> str | None:
    """The separator to join ``line`` and ``following`` with, or None to keep the break."""
    this, after = _bare(line), _bare(following)
    if not this or not after or "|" in this or "|" in after:
        return None
    if _HEADING.match(after) or _HEADING.match(this) or this.endswith(_FINAL):
        return None
    if lang in ("zh", "ja"):
        # a sentence of the page broken by its capture: a line of CJK text (not a label
        # such as "位置:") that does not end the sentence, going on with CJK characters or
        # with a packet name that the sentence goes on after ("...的\nPUBLISH\n报文")
        sentence = bool(_CJK_CHAR.search(this)) and not _LABEL.match(this) and len(this) > 4
        if sentence and (
            _CJK_CHAR.match(after) or (_PACKET.fullmatch(after) and _CJK_CHAR.match(this[-1]))
        ):
            return ""
        if _PACKET.fullmatch(this) and _CJK_CHAR.match(after):
            return ""
        return None
    # Latin scripts: a long line that stops without ending its sentence, or a line that
    # stops on a word followed by a lower-case word
    if len(this) > 45 and re.match(r"[A-Za-z(]", after):
        return " "
    if _LATIN_TAIL.search(this) and _LATIN_HEAD.match(after) and len(this) > 30:
        return " "
    return None


def joined(text: str, lang: str) -> str:
    """``text`` with its mid-sentence line breaks joined (the ``==`` marks kept)."""
    lines = text.split("\n")
    out = [lines[0]] if lines else []
    for line in lines[1:]:
        separator = _joins(out[-1], line, lang)
        if separator is None:
            out.append(line)
        else:
            out[-1] = out[-1].rstrip() + separator + line.lstrip()
    return "\n".join(out)


def _balanced(text: str) -> str:
    """``text`` with an even number of ``==`` marks: an excerpt cut out of a highlighted
    run has lost one end of it (a quote that starts inside a highlight, or ends in one)."""
    if text.count(MARK) % 2 == 0:
        return text
    return text + MARK if text.lstrip().startswith(MARK) else MARK + text


def to_html(text: str, lang: str) -> str:
    """The clean excerpt as HTML: escaped, lines joined, ``==`` runs as highlights."""
    pieces = _balanced(joined(text, lang)).split(MARK)
    out = []
    for index, piece in enumerate(pieces):
        escaped = html.escape(piece, quote=False)
        if index % 2 and piece:
            out.append(f'<mark class="pp-normative">{escaped}</mark>')
        else:
            out.append(escaped)
    return "".join(out)


def to_text(text: str, lang: str) -> str:
    """The clean excerpt as plain text (what the text builder and the search index see)."""
    return joined(text, lang).replace(MARK, "")


def words_kept(source: str, shown: str) -> bool:
    """Whether ``shown`` is ``source`` without its ``==`` marks, but for whitespace."""
    squeeze = re.compile(r"\s+")
    return squeeze.sub("", source.replace(MARK, "")) == squeeze.sub("", shown)
