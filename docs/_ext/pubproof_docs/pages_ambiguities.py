"""The ambiguity catalog, rendered from ``pubproof.model.ambiguities.AMBIGUITIES``, and the
readings (``pubproof.model.editions.READINGS``) with their defaults per edition and the Z3
witness that separates their values, and the readings of distribution
(``pubproof.model.distribution_readings.DISTRIBUTION_READINGS``) with the catalog's
scenarios, run through the distribution model at every build."""

from __future__ import annotations

import importlib
import json
from html import escape
from typing import Any

from docutils.nodes import make_id  # type: ignore[import-untyped]

from pubproof.model.clauses import BY_ID as CLAUSES_BY_ID
from pubproof.model.distribution_readings import DISTRIBUTION_READINGS
from pubproof.model.editions import READINGS, Reading
from pubproof_docs.context import GENERATED, Context
from pubproof_docs.pages_clauses import LANGUAGE_NAMES, provenance
from pubproof_docs.pages_trace import need
from pubproof_docs.rst import esc, glossary_terms, heading, indent, list_table, literal
from pubproof_docs.sentences import whole
from pubproof_docs.witness import short, shown_packet, shown_witness

CATALOG_DOC = f"{GENERATED}/ambiguity-catalog"
READINGS_DOC = f"{GENERATED}/readings"


def witness_block(ctx: Context, theorem_id: str, reading: str | None) -> str:
    """The witness of ``theorem_id`` from the latest run: hex, decoded P, the verdicts."""
    proved = ctx.prove.theorems.get(theorem_id)
    node = ctx.trace.theorems.get(theorem_id)
    if proved is None or node is None:
        return f"The theorem {literal(theorem_id)} is not in the latest run.\n"
    head = (
        f"Z3 witness from {need(node.need)} (status **{esc(proved.status)}**, expected "
        f"{esc(proved.expected)}, {proved.seconds:.2f} s):\n\n"
    )
    if not proved.counterexample:
        return head + "No witness in the latest run.\n"
    if any("type" not in entry for entry in proved.counterexample):
        return head + trace_table(proved.counterexample)
    found = shown_witness(proved.counterexample, proved.details, proved.editions, reading)
    if found is None:
        return head + "The model encodes the witness under none of the configurations.\n"
    packets = json.dumps([shown_packet(p) for p in found.packets], ensure_ascii=False)
    rows = []
    for judged in found.verdicts:
        chosen = ", ".join(f"{k}={v}" for k, v in judged.readings.items()) or "defaults"
        rows.append([esc(judged.edition.value), literal(chosen), literal(judged.verdict)])
    return (
        head
        + f"- bytes: {literal(short(found.data))}\n- decoded: {literal(packets)}\n\n"
        + list_table(["edition", "readings", "the model's verdict"], rows, widths=[15, 40, 45])
    )


def trace_table(entries: list[dict[str, Any]]) -> str:
    """A protocol counterexample: one row per trace entry."""
    rows = []
    for index, entry in enumerate(entries, start=1):
        what = entry.get("type") or entry.get("event", "")
        rest = {k: v for k, v in entry.items() if k not in {"type", "event", "dir", "conn"}}
        rows.append(
            [str(index), esc(str(entry.get("conn", ""))), esc(str(entry.get("dir", ""))),
             literal(str(what)), literal(json.dumps(rest, ensure_ascii=False))]
        )  # fmt: skip
    return list_table(["step", "connection", "direction", "packet or event", "fields"], rows,
                      widths=[6, 10, 14, 18, 52])  # fmt: skip


def _reading_section(ctx: Context, reading: Reading) -> str:
    out = [f".. _reading-{reading.name}:\n", heading(f"Reading {reading.name}", "-")]
    out.append(f"**{esc(reading.question)}**\n")
    rows = [
        [literal(value), esc(meaning),
         ", ".join(e.value for e, d in reading.defaults.items() if d == value) or "—"]
        for value, meaning in reading.values.items()
    ]  # fmt: skip
    out.append(list_table(["value", "meaning", "default in edition"], rows, widths=[18, 62, 20]))
    out.append(f"Why the default: {esc(reading.why_default)}\n")
    for passage in reading.passages:
        out.append(f".. epigraph::\n\n   {esc(passage.text)}\n\n   -- {esc(passage.source)}\n")
    theorem = f"wire.reading-irrelevant.{reading.name}"
    if reading.name in DISTRIBUTION_READINGS:
        out.append(_distribution_witness(ctx, reading))
    elif theorem in ctx.prove.theorems:
        out.append(witness_block(ctx, theorem, reading.name))
    else:
        from pubproof.model.ambiguities import AMBIGUITIES

        shown = [a for a in AMBIGUITIES if a.reading == reading.name and a.examples]
        out.append(
            f"No theorem {literal(theorem)} in the latest run. The bytes that part the "
            "values, judged by the model: "
            + (", ".join(f":ref:`{esc(a.title)} <ambiguity-{a.id}>`" for a in shown) or "none")
            + ".\n"
        )
    return "\n".join(out)


def _distribution_witness(ctx: Context, reading: Reading) -> str:
    """What parts the values of a distribution reading: the catalog's scenarios, and any
    theorem of the latest run named after the reading (``...reading-irrelevant.<name>``)."""
    from pubproof.model.ambiguities import AMBIGUITIES

    theorems = [
        t
        for t in ctx.trace.theorems.values()
        if t.id.endswith(f"reading-irrelevant.{reading.name}")
    ]
    shown = [a for a in AMBIGUITIES if a.reading == reading.name and a.scenarios]
    text = (
        "The scenarios that part the values, run through the distribution model at every "
        "build: "
        + (", ".join(f":ref:`{esc(a.title)} <ambiguity-{a.id}>`" for a in shown) or "none")
        + ".\n"
    )
    if theorems:
        text += (
            "\nTheorems: "
            + ", ".join(f"{need(t.need)} ({esc(t.status)})" for t in theorems)
            + ".\n"
        )
    return text


def readings_page(ctx: Context) -> str:
    out = [heading("The readings", "=")]  # the guide is "Editions and readings"
    out.append(
        "A *reading* is a named switch where the texts are silent or disagree. Every verdict "
        "pubproof gives is relative to an edition and a value for each reading. For each "
        "reading: its values, the default per edition, why, the passages, and the witness Z3 "
        "found in the latest ``pubproof prove`` run: a packet the values judge differently, "
        "encoded and judged again by the model here.\n"
    )
    for reading in READINGS.values():
        out.append(_reading_section(ctx, reading))
    out.append(heading("Readings of distribution", "-"))
    out.append(
        "What a server does with a message across sessions has readings of its own "
        "(``pubproof.model.distribution_readings.DISTRIBUTION_READINGS``), of two sorts: an "
        "*interpretation*, where the texts are silent or disagree and the value changes what "
        "the model allows; and a *server's choice*, where the text gives the server a MAY: the "
        "value picks what the model's server (the oracle) does, and the judge accepts every "
        "alternative the text permits whatever the value. Each is an entry of the "
        ":doc:`ambiguity catalog <ambiguity-catalog>` with a scenario the distribution model "
        "runs under every value.\n"
    )
    for reading in DISTRIBUTION_READINGS.values():
        out.append(_reading_section(ctx, reading))
    out.append(heading("Where the two editions part", "-"))
    out.append(witness_block(ctx, "wire.editions-agree", None))
    if "wire.v5.editions-agree" in ctx.prove.theorems:
        out.append(heading("Where MQTT 5.0 parts from 3.1.1 and 3.1", "-"))
        out.append(
            "The same bytes under 5.0: its property section, Reason Codes and stricter "
            "Variable Byte Integers judge some 3.1.1 packets otherwise "
            "(:doc:`the 5.0 wire format </guides/mqtt5-wire>`). The theorem's details list "
            "every witness; one is judged here:\n"
        )
        out.append(witness_block(ctx, "wire.v5.editions-agree", None))
    return "\n".join(out)


def _field(entry: Any, name: str, default: Any = None) -> Any:
    return getattr(entry, name, default)


def _excerpt_editions() -> dict[str, str]:
    """The edition of each excerpt, by language (``model/texts/provenance.json``)."""
    return {lang: str(text["edition"]) for lang, text in provenance().items()}


#: the kinds the catalog's filter offers: the entries' own, and the unstated assumptions
ASSUMPTION = "unstated-assumption"
KIND_LABELS = {
    "disagreement": "disagreement", "silence": "silence", "mistranslation": "mistranslation",
    ASSUMPTION: "unstated assumption", "garbled": "typo or garbled text",
    "incomplete": "incomplete", "example-mismatch": "example against its figure",
    "later-edition": "later edition", "terminology": "terminology", "numbering": "numbering",
}  # fmt: skip


def catalog_facets(entry: Any, editions: dict[str, str]) -> dict[str, list[str]]:
    """What the catalog's filter matches an entry on: the editions and languages of the
    texts it quotes (an excerpt by its language, another text by the edition its source
    names), its clause and its kinds (an ``assume-`` entry is an unstated assumption)."""
    langs, found = [], []
    for quote in _field(entry, "quotes", ()):
        source = _field(quote, "source")
        if source is None:
            langs.append(quote.lang)
            found.append(editions[quote.lang])
        else:
            found += [e for e in ("5.0", "3.1.1") if f"MQTT {e}" in source]
            found += ["3.1"] if "MQTT V3.1" in source else []
    kinds = [k.value for k in entry.kinds] + (
        [ASSUMPTION] if entry.id.startswith("assume-") else []
    )
    return {
        "edition": sorted(set(found)), "lang": sorted(set(langs)),
        "clause": [_field(entry, "clause", "")], "kind": sorted(set(kinds)),
    }  # fmt: skip


def _facets_html(entry: Any, editions: dict[str, str]) -> str:
    """The entry's visible id (a link to itself) and its facets as data attributes."""
    data = " ".join(
        f'data-{name}="{" ".join(values)}"'
        for name, values in catalog_facets(entry, editions).items()
    )
    anchor = make_id(f"ambiguity-{entry.id}")  # the id docutils gives the entry's label
    return (
        ".. raw:: html\n\n"
        f'   <p class="pp-entry" {data}><a class="pp-entry-id" href="#{anchor}">'
        f"{escape(entry.id)}</a></p>\n"
    )


def _filter_html(entries: list[Any], editions: dict[str, str]) -> str:
    """The box the site's script turns into the catalog's filter: for each facet, the values
    on offer as ``value:Label`` pairs (a label's spaces written as ``_``)."""
    facets = [catalog_facets(e, editions) for e in entries]
    offered = {name: sorted({v for f in facets for v in f[name]}) for name in facets[0]}
    labels = {
        "edition": {e: f"MQTT {e}" for e in offered["edition"]},
        "lang": LANGUAGE_NAMES,
        "clause": {c: CLAUSES_BY_ID[c].title for c in offered["clause"] if c in CLAUSES_BY_ID},
        "kind": KIND_LABELS,
    }
    data = " ".join(
        f'data-{name}="'
        + escape(" ".join(f"{v}:{labels[name].get(v, v).replace(' ', '_')}" for v in values))
        + '"'
        for name, values in offered.items()
    )
    return f'.. raw:: html\n\n   <div id="pp-catalog-filter" {data}></div>\n'


def _shown(quote: Any) -> str:
    """A quote of an excerpt as the whole sentences it lies in; another text's as it is."""
    text = str(_field(quote, "text", ""))
    return text if _field(quote, "source") else whole(text, quote.lang)


def _catalog_entry(ctx: Context, entry: Any, editions: dict[str, str]) -> str:
    out = [
        f".. _ambiguity-{entry.id}:\n",
        heading(esc(entry.title), "-"),
        _facets_html(entry, editions),
    ]
    clause = CLAUSES_BY_ID.get(_field(entry, "clause", ""))
    facts = []
    if clause is not None:
        facts.append(f"clause :ref:`{esc(clause.title)} <clause-{clause.id}>`")
    if entry.kinds:
        facts.append("kind: " + ", ".join(esc(k.value) for k in entry.kinds))
    facts.append(f"severity: {esc(entry.severity.value)}")
    out.append(" · ".join(facts) + "\n")
    out.append(esc(_field(entry, "summary", "")) + "\n")
    quotes = _field(entry, "quotes", ())
    if quotes:
        out.append(".. rubric:: The passages\n")
        rows = []
        for quote in quotes:
            lang = _field(quote, "lang", "")
            source = _field(quote, "source")
            rows.append(
                [esc(source) if source else esc(LANGUAGE_NAMES.get(lang, lang)),
                 f".. pp-excerpt::\n   :lang: {lang}\n\n{indent(_shown(quote), 3)}",
                 esc(_field(quote, "note", "") or "")]
            )  # fmt: skip
        out.append(list_table(["text", "quote", "note"], rows, widths=[12, 58, 30]))
    readings = _field(entry, "readings", ())
    if readings:
        out.append(".. rubric:: The readings\n")
        out.extend(f"- {esc(str(r))}" for r in readings)
        out.append("")
    model = _field(entry, "model")
    reading = _field(entry, "reading")
    if model or reading or entry.rules:
        out.append(".. rubric:: What the model does\n")
        if model:
            out.append(esc(str(model)) + "\n")
        switch = READINGS.get(reading) or DISTRIBUTION_READINGS.get(reading)
        if reading and switch is not None:
            defaults = ", ".join(f"{e.value}: {literal(v)}" for e, v in switch.defaults.items())
            out.append(
                f"Switch: the reading :ref:`{reading} <reading-{reading}>` (defaults {defaults}).\n"
            )
        if entry.rules:
            out.append(
                "Rules: "
                + ", ".join(need(ctx.trace.rules_for_key(k).need) for k in entry.rules)
                + "\n"
            )
    witness = _field(entry, "witness")
    examples = _field(entry, "examples", ())
    if witness:
        out.append(".. rubric:: The witness\n")
        if witness not in ctx.prove.theorems and examples:
            out.append(
                f"The theorem {literal(witness)} is not registered yet: until it is, the "
                "examples below, which the model's decoder judges at every build, are the "
                "witness.\n"
            )
        else:
            out.append(witness_block(ctx, witness, reading if reading in READINGS else None))
    if examples:
        out.append(examples_block(examples))
    traces = _field(entry, "traces", ())
    if traces:
        out.append(traces_block(traces))
    scenarios = _field(entry, "scenarios", ())
    if scenarios and reading in DISTRIBUTION_READINGS:
        out.append(scenarios_block(scenarios, reading))
    return "\n".join(out)


def _step_cells(step: Any) -> list[str]:
    from pubproof.model.ambiguity_scenarios import OPERATIONS

    (op,) = [k for k in step if k in OPERATIONS]
    rest = {k: v for k, v in step.items() if k != op}
    return [literal(op), literal(str(step[op])),
            literal(json.dumps(rest, ensure_ascii=False)) if rest else ""]  # fmt: skip


def scenarios_block(scenarios: Any, reading: str) -> str:
    """Events written by hand, run through the distribution model under each value of the
    reading (:func:`pubproof.model.ambiguity_scenarios.outcome`), beside what the catalog
    states for each."""
    from pubproof.model.ambiguity_scenarios import outcome

    out = [".. rubric:: The scenarios (run through the distribution model at every build)\n"]
    for scenario in scenarios:
        setting = f"MQTT {scenario.edition.value}"
        if scenario.config:
            setting += "; server: " + ", ".join(f"{k}={v}" for k, v in scenario.config.items())
        out.append(f"- {esc(scenario.note)} ({esc(setting)}):\n")
        steps = [[str(i), *_step_cells(step)] for i, step in enumerate(scenario.steps, start=1)]
        out.append(
            indent(list_table(["step", "event", "client", "with"], steps,
                              widths=[6, 14, 12, 68]), 2) + "\n"
        )  # fmt: skip
        rows = []
        for value, stated in scenario.expect.items():
            actual = outcome(scenario, reading, value)
            mark = "✔" if actual == stated else "✘"
            rows.append(
                [literal(f"{reading}={value}"),
                 f"{mark} the model (this build):\n\n"
                 + "\n".join(f"- {literal(line)}" for line in actual)]
            )  # fmt: skip
        out.append(
            indent(list_table(["value", "what the server does"], rows, widths=[24, 76]), 2) + "\n"
        )
    return "\n".join(out) + "\n"


def traces_block(traces: Any) -> str:
    """5.0 traces written by hand, each step, and what the catalog states the model's
    sessions do with it beside what they do now (:func:`pubproof.model.ambiguities.
    trace_outcome`)."""
    from pubproof.model.ambiguities import trace_outcome

    out = [".. rubric:: The traces (replayed by the model's 5.0 sessions at every build)\n"]
    for trace in traces:
        actual = trace_outcome(trace)
        limits = f"receiver's Receive Maximum {trace.receive_maximum}, Topic Alias Maximum " + (
            f"{trace.topic_alias_maximum}; QoS 2 Method {trace.method}"
        )
        out.append(f"- {esc(trace.note)} ({esc(limits)}):\n")
        out.append(indent(trace_table([dict(e) for e in trace.entries]), 2) + "\n")
        rows = []
        for key, stated in trace.expect.items():
            mark = "✔" if actual[key] == stated else "✘"
            rows.append(
                [
                    esc(key),
                    "\n".join(f"- {literal(s)}" for s in stated) or "none",
                    f"{mark} " + ("; ".join(literal(s) for s in actual[key]) or "none"),
                ]
            )
        out.append(
            indent(
                list_table(["outcome", "stated", "the model's sessions (this build)"], rows,
                           widths=[14, 43, 43]),
                2,
            )
            + "\n"
        )  # fmt: skip
    return "\n".join(out) + "\n"


def examples_block(examples: Any) -> str:
    """Bytes written by hand from the wire contract, the verdict the catalog states for
    each configuration and the one the model's decoder gives now."""
    from pubproof.model.ambiguities import judge

    out = [".. rubric:: The examples (written by hand from the wire contract)\n"]
    for example in examples:
        rows = []
        for expected in example.verdicts:
            actual = judge(example.data, expected)
            mark = "✔" if actual == expected.verdict else "✘"
            rows.append(
                [esc(expected.label), literal(expected.verdict), f"{mark} {literal(actual)}"]
            )
        out.append(f"- bytes {literal(example.hex)}: {esc(example.note)}\n")
        out.append(
            indent(
                list_table(
                    ["configuration", "stated verdict", "the model's verdict (this build)"],
                    rows,
                    widths=[30, 35, 35],
                ),
                2,
            )
            + "\n"
        )
    return "\n".join(out) + "\n"


def catalog_page(ctx: Context) -> str:
    out = [heading("Ambiguity catalog", "=")]
    try:
        module = importlib.import_module("pubproof.model.ambiguities")
    except ModuleNotFoundError:
        return (
            "\n".join(out) + "\nThe catalog data (``pubproof.model.ambiguities``) is not there.\n"
        )
    entries = list(module.AMBIGUITIES.values() if hasattr(module.AMBIGUITIES, "values")
                   else module.AMBIGUITIES)  # fmt: skip
    out.append(
        f"{len(entries)} places where the five texts disagree with each other or with the later "
        "editions, where one is silent, where a translation is wrong, incomplete or garbled, "
        "or where an example does not match its own figure; rendered from "
        "``pubproof.model.ambiguities.AMBIGUITIES`` (``model/texts/ambiguities.toml``). Each "
        "quotes the passages, states the readings, names the model's switch and, where one "
        "exists, shows what separates the readings: the Z3 witness, bytes the model's decoder "
        "judges, traces its 5.0 sessions replay, or (distribution) scenarios its server "
        "runs under each value of the reading. To change an entry, edit "
        "the TOML, not this page: ``tests/test_ambiguities.py`` checks every quote against the "
        "texts and every name against the registries. Some entries are assumptions: a "
        "condition a theorem rests on that the texts do not state (their ids start with "
        "``assume-``); each theorem's page links the ones it rests on.\n"
    )
    rows = [
        [f":ref:`{esc(e.title)} <ambiguity-{e.id}>`", esc(e.severity.value),
         literal(_field(e, "reading", "") or "")]
        for e in entries
    ]  # fmt: skip
    out.append(
        glossary_terms("ambiguity", "edition", "reading", "normative id", "project id",
                       "witness", "rule", "model")
    )  # fmt: skip
    editions = _excerpt_editions()
    out.append(_filter_html(entries, editions))
    out.append(list_table(["entry", "severity", "reading"], rows, widths=[60, 20, 20]))
    out.extend(_catalog_entry(ctx, e, editions) for e in entries)
    return "\n".join(out)


def pages(ctx: Context) -> dict[str, str]:
    return {READINGS_DOC: readings_page(ctx), CATALOG_DOC: catalog_page(ctx)}
