"""A page per theorem, and the theorems index that links them.

Each page says what the theorem claims, under which assumptions (those the texts state,
with where; those they do not, linked to their ambiguity catalog entry), the rules it rests
on, how it was checked and how long it took, the evidence in a form a person reads (an
inductive invariant as predicates over the named state variables, a refutation's trace as a
message sequence chart with what the model's ``replay(trace)`` makes of it, a wire
witness decoded and judged), and each mutant with what told it apart.
"""

from __future__ import annotations

import fnmatch
import json
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pubproof_docs import invariant, msc_svg
from pubproof_docs.context import GENERATED, Context
from pubproof_docs.data import ProvedTheorem
from pubproof_docs.rst import esc, glossary_terms, heading, indent, list_table, literal
from pubproof_docs.trace import TheoremNode, key_50

if TYPE_CHECKING:
    from pubproof.proofs.registry import Theorem

THEOREMS_DOC = f"{GENERATED}/theorems"
THEOREM_DIR = f"{GENERATED}/theorem"


def theorem_doc(theorem_id: str) -> str:
    """The docname of a theorem's page."""
    return f"{THEOREM_DIR}/{theorem_id.replace('.', '-')}"


def theorem_ref(t: TheoremNode) -> str:
    """A link to the theorem's page, with its id as the text."""
    return f":doc:`{esc(t.id)} </{theorem_doc(t.id)}>`"


def status_words(t: TheoremNode | ProvedTheorem) -> str:
    """The status in words: what the check found, and whether that is what was expected."""
    if t.status == t.expected:
        return "proved" if t.status == "proved" else "refuted, as expected"
    return f"FAILED: {t.status}, expected {t.expected}"


@cache
def _registry() -> dict[str, Theorem]:
    from pubproof.proofs.catalog import load

    return {t.id: t for t in load()}


def _registry_readings() -> dict[str, tuple[str, ...]]:
    return {i: t.readings for i, t in _registry().items()}


def _readings(theorem_id: str) -> tuple[str, ...]:
    """The readings a theorem ranges over or compares (from the registry)."""
    return _registry_readings().get(theorem_id, ())


# --- assumptions ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Assumption:
    id: str
    theorems: tuple[str, ...]
    exceptions: tuple[str, ...]
    text: str
    stated: str | None
    catalog: str | None

    def applies(self, theorem_id: str) -> bool:
        def hit(patterns: Sequence[str]) -> bool:
            return any(fnmatch.fnmatchcase(theorem_id, p) for p in patterns)

        return hit(self.theorems) and not hit(self.exceptions)


@cache
def assumptions(path: Path) -> tuple[Assumption, ...]:
    """``docs/data/assumptions.toml``."""
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    return tuple(
        Assumption(
            id=a["id"],
            theorems=tuple(a["theorems"]),
            exceptions=tuple(a.get("except", ())),
            text=a["text"],
            stated=a.get("stated"),
            catalog=a.get("catalog"),
        )
        for a in raw["assumption"]
    )


def _assumptions_block(ctx: Context, t: TheoremNode) -> str:
    from pubproof.model.ambiguities import AMBIGUITIES

    rows = []
    for a in assumptions(ctx.docs / "data" / "assumptions.toml"):
        if not a.applies(t.id):
            continue
        if a.catalog is not None:
            where = f"**not stated by the texts**: :ref:`catalog entry <ambiguity-{a.catalog}>`"
        else:
            where = f"stated: {esc(a.stated or '')}"
        rows.append([esc(a.text), where])
    # the readings the theorem ranges over, and the catalog entries it is the witness of
    for entry in AMBIGUITIES:
        name = entry.reading or ""
        reading = bool(name) and name in _readings(t.id)
        if entry.witness == t.id or reading:
            why = f"the reading {literal(name)}" if reading else "this theorem's witness"
            rows.append(
                [f"The texts leave it open ({why}): {esc(entry.title)}.",
                 f"**not settled by the texts**: :ref:`catalog entry <ambiguity-{entry.id}>`"]
            )  # fmt: skip
    if not rows:
        return "No assumption beyond the model itself.\n"
    return list_table(["assumption", "where the texts stand"], rows, widths=[60, 40], css="pp-wide")


# --- rules --------------------------------------------------------------------------------


def _rules_block(ctx: Context, t: TheoremNode, proved: ProvedTheorem) -> str:
    from pubproof_docs.pages_trace import paraphrase

    rows = []
    only_50 = proved.editions == ("5.0",)
    for rule_id in t.rules:
        keys = [key_50(rule_id), rule_id] if only_50 else [rule_id, key_50(rule_id)]
        statement = next((ctx.trace.statements[k] for k in keys if k in ctx.trace.statements), None)
        if statement is None:
            rows.append([literal(rule_id), "not traced", "—"])
            continue
        rules = [ctx.trace.rules[r] for r in statement.implemented_by]
        rows.append(
            [f":need:`{statement.need}`", paraphrase(statement.text) or "—",
             ", ".join(f":need:`{r.need}`" for r in rules) or "—"]
        )  # fmt: skip
    return list_table(
        ["statement", "what it says (paraphrase)", "the model's rules"],
        rows,
        widths=[22, 50, 28],
        css="pp-wide",
    )


# --- evidence ---------------------------------------------------------------------------


def _variables(theorem_id: str) -> tuple[Sequence[str], Mapping[str, str], dict[str, list[str]]]:
    """The state variables of the encoding a theorem's Spacer invariant is over: names,
    meanings, and for a state index the names of its states."""
    from pubproof.model.flows import ReceiverState, SenderState

    if theorem_id.startswith("proto.v5.") and "topic-alias" in theorem_id:
        from pubproof.proofs.protocol50_z3 import TOPIC_ALIAS_VARIABLES

        return tuple(TOPIC_ALIAS_VARIABLES), TOPIC_ALIAS_VARIABLES, {}
    if theorem_id == "proto.unique-packet-identifiers":
        from pubproof.proofs.identifiers_z3 import _STATES

        names = [f"n_{s.name}" for s in _STATES]
        meanings = {
            n: f"messages of the sender in state {s.name}"
            for n, s in zip(names, _STATES, strict=True)
        }
        return names, meanings, {}
    from pubproof.proofs.protocol_z3 import NAMES, VARIABLES

    states = {"s": [s.name for s in SenderState], "r": [s.name for s in ReceiverState]}
    return NAMES, VARIABLES, states


def readable_details(theorem_id: str, details: str) -> str:
    """``details`` as reStructuredText: a Spacer invariant as a table of predicates over the
    named state variables (and the table of the variables), the rest in words."""
    split = invariant.split_details(details)
    if split is None:
        return esc(details) + "\n"
    text, rest = split
    names, meanings, states = _variables(theorem_id)
    predicates = invariant.clauses(text, names, states)
    used = [n for n in names if any(n in p for p in predicates)]
    out = [
        f"An inductive invariant, found by Spacer: {len(predicates)} predicates that hold in "
        "the initial state, are kept by every transition and exclude every bad state. "
        "Over the state variables:\n",
        list_table(
            ["variable", "meaning"],
            [[literal(n), esc(meanings.get(n, ""))] for n in used],
            widths=[25, 75],
        ),
        list_table(
            ["#", "predicate"],
            [[str(i), literal(p)] for i, p in enumerate(predicates, start=1)],
            widths=[6, 94],
            css="pp-invariant",
        ),
    ]
    if rest:
        out.append(esc(rest) + "\n")
    return "\n".join(out)


def _is_trace(evidence: Sequence[Mapping[str, Any]]) -> bool:
    return any("dir" in e or "event" in e for e in evidence)


def replay_verdict(
    theorem_id: str, trace: Sequence[Mapping[str, Any]]
) -> tuple[str, dict[int, str]]:
    """What ``replay(trace)`` (the model's sessions) makes of a trace: a sentence and, per
    row, a note for the chart."""
    from pubproof.model.flows import Method
    from pubproof.model.replay import replay

    method = Method.A if "method-a" in theorem_id else Method.B
    try:
        result = replay(trace, method=method)
    except Exception as error:
        return f"``replay(trace)`` raised {esc(type(error).__name__)}: {esc(str(error))}.", {}
    notes: dict[int, str] = {}
    for index, (_, outputs) in enumerate(result.steps):
        words = []
        for o in outputs:
            if o.kind == "deliver" and o.packet is not None:
                words.append(f"delivers {o.packet.get('payload_hex', '')}")
            elif o.kind in ("violation", "tolerated"):
                words.append(f"{o.kind} {', '.join(o.rules)}")
            elif o.kind == "disconnect":
                words.append("DISCONNECT")
        if words:
            notes[index] = "; ".join(words)
    delivered = [str(p.get("payload_hex", "")) for p in result.deliveries("receiver")]
    counts = {m: delivered.count(m) for m in dict.fromkeys(delivered)}
    told = ", ".join(f"{m or 'the empty payload'} {n} time(s)" for m, n in counts.items())
    judged = result.judgements()
    verdict = (
        f"``replay(trace)`` (the model's sessions, Method {method.name} at the receiver): the "
        f"receiver delivers {told or 'nothing'}"
        + (
            "; judged: " + "; ".join(esc(f"{o.kind} {', '.join(o.rules)}") for o in judged)
            if judged
            else "; no packet judged a violation"
        )
        + "."
    )
    return verdict, notes


_TIMES = {1: "once", 2: "twice"}


def _times(n: int) -> str:
    return _TIMES.get(n, f"{n} times")


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """Where a refuted theorem's counterexample fails, run through the system it refutes."""

    verdict: str  # the sentence under the chart
    notes: dict[int, str]  # per row, what the refuted system delivered
    row: int | None  # the row after which the property is false (None: it never is)
    label: str  # the chart's label of that row


def refuted_failure(theorem_id: str, trace: Sequence[Mapping[str, Any]]) -> Failure | None:
    """``trace`` replayed through the system the theorem refutes (its variant's tables, its
    channel, its reading: :func:`pubproof.proofs.refuted_runs.replay_refuted`), with the
    failure in words; ``None`` for a system that is not replayed that way."""
    from pubproof.proofs.refuted_runs import NotARun, replay_refuted

    try:
        run = replay_refuted(_registry()[theorem_id], trace)
    except NotARun as error:
        return Failure(verdict=f"**The trace is not a run of the refuted system**: "
                       f"{esc(str(error))}.", notes={}, row=None, label="")  # fmt: skip
    if run is None:
        return None
    notes = {
        i: "; ".join(f"delivers {m}" for m in run.new_deliveries(i))
        for i in range(run.rows)
        if run.new_deliveries(i)
    }
    counts = run.counts()
    told = ", ".join(f"{m} {_times(n)}" for m, n in counts.items()) or "nothing"
    head = (
        "Run through the system this theorem refutes (its tables, channel and reading; the "
        "model's ``replay(trace)`` is for the contrasts)"
        + (f", the receiver delivers {told}" if run.counted else "")
    )
    if run.failed_at is None:
        return Failure(verdict=f"{head}; **no property fails on this run**.", notes=notes,
                       row=None, label="")  # fmt: skip
    step = run.failed_at + 1
    properties = " and ".join(f"\u201c{p}\u201d" for p in run.failed)
    then = run.counts(run.failed_at)
    twice = [f"delivered {m} {_times(n)}" for m, n in then.items() if n > 1]
    what = "; ".join(twice) + ": " if twice else ""
    verdict = f"{head}. **{what}{esc(properties)} fails at step {step}** (marked on the chart)"
    verdict += f": {esc(run.reason)}." if run.reason else "."
    label = f"step {step}: {properties} fails"
    if len(label) > 40:  # the label has the chart's right margin
        label = f"step {step}: the property fails"
    return Failure(verdict=verdict, notes=notes, row=run.failed_at, label=label)


def trace_block(
    theorem_id: str, trace: Sequence[Mapping[str, Any]], title: str, *, refuted: bool = False
) -> str:
    """A trace drawn as a message sequence chart, with the replay's verdict: a refuted
    theorem's counterexample (``refuted``) through the system it refutes, with the row where
    its property fails marked, any other trace through the model's own sessions."""
    failure = refuted_failure(theorem_id, trace) if refuted else None
    if failure is None:
        verdict, notes = replay_verdict(theorem_id, trace)
        marked = None
    else:
        verdict, notes = failure.verdict, failure.notes
        marked = None if failure.row is None else (failure.row, failure.label)
    chart = msc_svg.svg(trace, notes=notes, title=title, failure=marked)
    return (
        ".. raw:: html\n\n"
        f'   <figure class="pp-msc-figure">{chart}'
        f"<figcaption>{title}</figcaption></figure>\n\n"
        f"{verdict}\n\n"
        ".. dropdown:: The trace as JSON\n\n"
        "   .. code-block:: json\n\n"
        + indent(json.dumps(list(trace), indent=1, ensure_ascii=False), 6)
        + "\n"
    )


def _evidence(ctx: Context, t: TheoremNode, proved: ProvedTheorem) -> str:
    from pubproof_docs.pages_ambiguities import witness_block

    out = [readable_details(t.id, proved.details)]
    cx = proved.counterexample
    if cx and _is_trace(cx):
        refuted = is_refutation(t)
        if refuted and refuted_failure(t.id, cx) is not None:
            out.append(
                "The counterexample is a run of the system this theorem describes. The chart "
                "replays it through that system (its tables, its channel, its reading), "
                "marks the step where the property fails, and says what the receiver "
                "delivered; each contrast below is replayed by the model's own sessions.\n"
            )
        elif refuted:
            out.append(
                "The counterexample is a run of the system this theorem describes. "
                "``replay(trace)`` below replays it with the model's own sessions, which are "
                "the contrast: what they make of it is not the failure, which is the broken "
                "system's (see the details above).\n"
            )
        out.append(trace_block(t.id, cx, f"The counterexample of {t.id}", refuted=refuted))
    elif cx:
        out.append(
            witness_block(ctx, t.id, _readings(t.id)[0] if len(_readings(t.id)) == 1 else None)
        )
    return "\n".join(out)


def is_refutation(t: TheoremNode) -> bool:
    """A "... FAILS when ..." theorem (``proto.refute.``, ``dist.refute.``): refuted on
    purpose, its variants are the systems in which the property holds."""
    return ".refute." in t.id and t.expected == "refuted"


def _mutants(ctx: Context, t: TheoremNode, proved: ProvedTheorem) -> str:
    out = []
    # a "... FAILS when ..." theorem's variants are where the property holds (the receiver
    # as the model's tables have it, an in-order channel, another reading): never mutants
    contrast = is_refutation(t)
    for m in proved.mutants:
        out.append(heading(f"{'Contrast' if contrast else 'Mutant'}: {m.name}", "~"))
        if contrast:
            told = "told apart" if m.killed else "**not told apart**"
            out.append(
                f"{esc(m.description.rstrip('.'))}: the check {esc(m.status)} it, so it is "
                f"{told} from the system in which this theorem's property fails.\n"
            )
        else:
            killed = "killed" if m.killed else "**survived**"
            out.append(
                f"{esc(m.description.rstrip('.'))}. The check {esc(m.status)} it: {killed}.\n"
            )
        out.append(".. rubric:: What told it apart\n")
        out.append(readable_details(t.id, m.details))
        cx = m.counterexample
        if cx and _is_trace(cx):
            title = (
                f"The trace that sets the contrast {m.name!r} apart"
                if contrast
                else f"The trace that kills the mutant {m.name!r}"
            )
            out.append(trace_block(t.id, cx, title))
        elif cx:
            packets = ", ".join(literal(json.dumps(p, ensure_ascii=False)) for p in cx[:4])
            out.append(f"Its evidence: {packets}.\n")
    return "\n".join(out)


def theorem_page(ctx: Context, t: TheoremNode) -> str:
    proved = ctx.prove.theorems[t.id]
    out = [heading(t.id, "=")]
    out.append(f"**{esc(t.statement)}**\n")
    facts = [
        ["status", f"**{esc(status_words(t))}** (the check found {esc(t.status)}; expected "
                   f"{esc(t.expected)})"],
        ["method", literal(t.method)],
        ["time", f"{t.seconds:.2f} s in the latest ``pubproof prove --json`` run"],
        ["editions", ", ".join(esc(e) for e in proved.editions)],
        ["readings", ", ".join(literal(r) for r in _readings(t.id)) or "—"],
        ["reproduce", literal(f"pubproof prove --theorem {t.id} --details")],
    ]  # fmt: skip
    table = list_table(["", ""], facts, widths=[15, 85])
    out.append(table.replace(":header-rows: 1", ":header-rows: 0", 1))
    out.append(_need_directive(t))
    out.append(heading("Assumptions", "-"))
    out.append(_assumptions_block(ctx, t))
    out.append(heading("The rules it rests on", "-"))
    out.append(_rules_block(ctx, t, proved))
    out.append(heading("The evidence", "-"))
    out.append(_evidence(ctx, t, proved))
    if is_refutation(t):
        out.append(heading("Contrasts", "-"))
        out.append(
            "This theorem is refuted on purpose: it shows a property failing in the system "
            "it describes. Each contrast is a variant in which the property holds (the "
            "model's own tables, an in-order channel, another reading), never a mutant: the "
            "same check must prove it, which tells the two apart.\n"
        )
    else:
        out.append(heading("Mutants", "-"))
        out.append(
            "Each mutant is a deliberately broken variant that the same check must tell apart "
            "from the real thing.\n"
        )
    out.append(_mutants(ctx, t, proved))
    return "\n".join(out)


def _need_directive(t: TheoremNode) -> str:
    options = {
        "id": t.need,
        "label": t.id,
        "status": status_words(t),
        "result": t.status,
        "method": t.method,
        "seconds": f"{t.seconds:.2f}",
        "verifies": ", ".join(t.verifies),
    }
    lines = [f".. thm:: {t.id}"] + [f"   :{k}: {v}" for k, v in options.items() if v]
    return "\n".join(lines) + "\n\n   The traceability record of this theorem.\n"


def index_page(ctx: Context) -> str:
    out = [heading("Theorems", "=")]
    out.append(
        glossary_terms("theorem", "counterexample", "witness", "mutant", "Method A", "Method B",
                       "edition", "reading")
    )  # fmt: skip
    out.append(
        f"Every theorem of ``pubproof.proofs``, with the status, method and time of the latest "
        f"``pubproof prove --json`` run (made by ``scripts/docs`` for this build; the whole run "
        f"took {ctx.prove.seconds:.1f} s). Each has its page: the claim, its assumptions, the "
        "rules it rests on, the evidence (an invariant as predicates, a counterexample drawn as "
        "a message sequence chart and replayed by the model) and its mutants. A theorem "
        "verifies the model rules whose ids it rests on; it counts for coverage only when it "
        "reached its expected status. *Refuted, as expected* marks a claim the project shows "
        "to be false (a counterexample is the result).\n"
    )
    rows = []
    for t in ctx.trace.theorems.values():
        rows.append(
            [theorem_ref(t), esc(t.statement), esc(status_words(t)), esc(t.method),
             f"{t.seconds:.2f}"]
        )  # fmt: skip
    out.append(
        list_table(
            ["theorem", "claim", "status", "method", "seconds"],
            rows,
            widths=[20, 38, 12, 23, 7],
            css="pp-wide pp-theorems",
        )
    )
    out.append(
        ".. toctree::\n   :hidden:\n\n"
        + "\n".join(f"   /{theorem_doc(t.id)}" for t in ctx.trace.theorems.values())
        + "\n"
    )
    return "\n".join(out)


def pages(ctx: Context) -> dict[str, str]:
    found = {THEOREMS_DOC: index_page(ctx)}
    for t in ctx.trace.theorems.values():
        found[theorem_doc(t.id)] = theorem_page(ctx, t)
    return found
