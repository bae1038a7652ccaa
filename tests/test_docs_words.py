"""The standard's own words beside the paraphrase: every id of the normative and
distribution indexes (Tables A to D) shows, on the traceability page, a quote of the
standard that carries the id's own label, in the id's edition, or stands in the page's
explicit "not quoted yet" list. Light: the page's reStructuredText is generated from the
extension's Python directly (a stand-in prove run; no build)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

# docs/_ext is on sys.path at run time (docs_site puts it there)
from pubproof_docs import data, pages_trace, trace, wording
from pubproof_docs.context import Context, dist_index_path, out_of_scope_path
from pubproof_docs.rst import esc
from support.docs_site import ROOT

DOCS = ROOT / "docs"

#: The index ids the site shows with their paraphrase only (none since the data files
#: standard311.toml and standard50.toml record the rest).
NOT_QUOTED: frozenset[tuple[str, str]] = frozenset()


@cache
def _context() -> Context:
    index = DOCS / "data" / "normative-index.md"
    tables = {
        "index": data.load_index(index),
        "index_50": data.load_index_50(index),
        "dist_index": data.load_dist_index(dist_index_path(DOCS), "C"),
        "dist_index_50": data.load_dist_index(dist_index_path(DOCS), "D"),
    }
    # the statements' words do not depend on the theorems' statuses: no prove run needed
    prove = data.ProveRun(seconds=0.0, theorems={}, path=ROOT / "no-prove-run.json")
    model = trace.build(
        root=ROOT, out_of_scope=data.load_out_of_scope(out_of_scope_path(DOCS)), prove=prove,
        **tables,
    )  # fmt: skip
    return Context(root=ROOT, docs=DOCS, prove=prove, trace=model, **tables)


def _entries(page: str) -> dict[tuple[str, str], str]:
    """Each index id's entry on the page, by (edition, id): a statement need (an id of every
    edition counts for both) or a paragraph of "The indexes' other ids"."""
    entries: dict[tuple[str, str], str] = {}
    needs, _, others = page.partition("The indexes' other ids\n")
    for block in re.split(r"\n(?=\.\. stmt:: )", needs)[1:]:
        ref = re.search(r"^   :label: (\S+)$", block, re.M)
        edition = re.search(r"^   :edition: (\S+)$", block, re.M)
        assert ref is not None and edition is not None, block[:200]
        for e in ("3.1.1", "5.0") if edition[1] == "all" else (edition[1],):
            entries[(e, ref[1])] = block
    for block in re.split(r"\n(?=\*\*MQTT-)", others)[1:]:
        head = re.match(r"\*\*(\S+)\*\* \(MQTT (\S+), ", block)
        assert head is not None, block[:200]
        entries[(head[2], esc(head[1]))] = block
    return entries


def _quoted(entry: str) -> str:
    """The part of an entry after "The standard's own words:" (the quotes), or ""."""
    _, found, words = entry.partition("The standard's own words:")
    return words if found else ""


def test_every_index_id_shows_its_own_sentence_or_is_listed_as_not_quoted() -> None:
    ctx = _context()
    page = pages_trace.statements_page(ctx)
    entries = _entries(page)
    ids = pages_trace.index_ids(ctx)
    assert len(ids["3.1.1"]) == 83 and len(ids["5.0"]) == 163
    unquoted = []
    for edition, refs in ids.items():
        source = {"3.1.1": ("MQTT 3.1.1 ", "publish.en.txt"), "5.0": ("MQTT 5.0 ",)}[edition]
        for ref in refs:
            entry = entries.get((edition, ref))
            assert entry is not None, f"{ref} ({edition}) is not on the page"
            words = _quoted(entry)
            if (edition, ref) in NOT_QUOTED:
                assert not words and wording.NOT_QUOTED in entry, ref
                unquoted.append(f"{ref} ({edition})")
                continue
            # its own label, as the standard prints it, inside a quote of its own edition
            label = esc(f"[{wording.PRINTED.get(ref, ref) if edition == '3.1.1' else ref}]")
            quotes = re.findall(r"\.\. epigraph::\n\n\s+(.+)\n\n\s+-- (.+)\n", words)
            assert any(label in text and by.startswith(source) for text, by in quotes), (
                f"{ref} ({edition}): no quote of {edition} carries {label}: {words[:300]!r}"
            )
    listed = re.search(re.escape(pages_trace.NOT_QUOTED_LIST) + r": (.*?)\.\n", page)
    assert listed is not None
    assert listed[1] == (esc(", ".join(unquoted)) or "none")


@pytest.mark.parametrize("edition", ["3.1.1", "5.0"])
def test_the_data_files_record_each_label_once_in_its_edition(edition: str) -> None:
    passages, problems = wording.recorded(DOCS, edition)
    assert problems == []
    own = [p for ps in passages.values() for p in ps if p.origin.endswith(".toml")]
    assert own and all(p.source.startswith(f"MQTT {edition} section ") for p in own)


def test_a_passage_under_a_neighbours_label_or_in_the_wrong_edition_is_a_problem(
    tmp_path: Path,
) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "standard311.toml").write_text(
        "[[passage]]\n"
        'source = "MQTT 3.1.1 section 4.6"\n'
        'text = "It MUST send PUBACK packets in the order ... [MQTT-4.6.0-2]."\n'
        "[[passage]]\n"
        'source = "MQTT 3.1.1 section 4.6"\n'
        'text = "The words of MQTT-4.6.0-3, filed twice [MQTT-4.6.0-2]."\n'
        "[[passage]]\n"
        'source = "MQTT 5.0 section 4.1"\n'
        'text = "A 5.0 sentence in the 3.1.1 file [MQTT-4.1.0-1]."\n',
        "utf-8",
    )
    passages, problems = wording.recorded(tmp_path, "3.1.1")
    assert problems == [
        "standard311.toml: MQTT-4.6.0-2 is recorded twice",
        "standard311.toml: MQTT-4.1.0-1's source is not a section of 3.1.1",
    ]
    # the id the second passage meant is not quoted by it (no rule quotes 4.6.0-3)
    assert wording.unquoted(passages, ["MQTT-4.6.0-3"]) == ["MQTT-4.6.0-3"]
    # a wrongly printed label counts for its id in 3.1.1 only
    assert wording.labels("... a PUBLISH Packet [MQTT-3.3.1.-1].", "3.1.1") == ["MQTT-3.3.1-1"]
    assert wording.labels("... [MQTT-3.3.1.-1].", "5.0") == []
    with pytest.raises(ValueError, match="without its label"):
        wording.Passage(
            edition="3.1.1", source="MQTT 3.1.1 section 4.6", label="MQTT-4.6.0-3",
            text="It MUST send PUBACK packets ... [MQTT-4.6.0-2].", origin="test",
        )  # fmt: skip


def test_an_id_without_a_passage_gets_the_mark_never_its_paraphrase_as_a_quote() -> None:
    shown = wording.words({}, "MQTT-9.9.9-1")
    assert wording.NOT_QUOTED in shown and "epigraph" not in shown


def test_the_clause_page_shows_each_index_id_s_sentence_beside_its_paraphrase() -> None:
    from pubproof_docs import pages_clauses

    ctx = _context()
    page = pages_clauses.pages(ctx)[pages_clauses.CLAUSES_DOC]
    by_need = {s.need: s for s in ctx.trace.statements.values()}
    indexed = pages_trace.index_ids(ctx)["3.1.1"]
    checked = 0
    for row in re.split(r"\n   \* - ", page)[1:]:
        found = re.match(r":need:`(\w+)`", row)
        if found is None or found[1] not in by_need:
            continue
        statement = by_need[found[1]]
        if statement.ref not in indexed or pages_trace.words_edition(statement) != "3.1.1":
            continue
        # the paraphrase's cell, the standard's words under the paraphrase
        words = row.split("\n     - ")[3].partition("**The standard:**")[2]
        printed = wording.PRINTED.get(statement.ref, statement.ref)
        of_311 = "(MQTT 3.1.1 " in words or "(publish.en.txt)" in words
        assert (esc(f"[{printed}]") in words and of_311) or (
            ("3.1.1", statement.ref) in NOT_QUOTED and wording.NOT_QUOTED in words
        ), (statement.ref, words[:300])
        checked += 1
    assert checked >= 40
