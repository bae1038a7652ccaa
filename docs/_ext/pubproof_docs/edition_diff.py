"""The edition-diff page: MQTT 3.1 -> 3.1.1 -> 5.0, rule by rule, from the registry.

For each pair of adjacent editions, every wire rule of :data:`pubproof.model.rules.RULES`
is compared: it appears, disappears, changes its kind (malformed or violation), or the
reading that switches it has another default; or only its id changes. Each change the
bytes can show comes with a witness, computed at build time, never typed in:

- a **Z3 witness** where the rule is one the proofs' packet domain judges
  (:func:`pubproof.proofs.differences.witnesses`, the search behind the theorems
  ``wire.editions-agree`` and ``wire.v5.editions-agree``, focused on that rule): a packet
  the two editions, each with its default readings, judge differently, one of them under
  this rule;
- otherwise a **case of the vector corpus** (``vectors/corpus.jsonl``, which the model's
  vector generators write) that breaks the rule in the edition that has it and that the
  other edition judges otherwise.

Either way the bytes are decoded here by the model (:func:`pubproof.model.wire.decode`) in
both editions, and the page shows both verdicts; a witness whose verdicts do not differ is
not shown. The flows are compared too (the flow rules of 3.1.1 and 5.0); a flow is a
sequence of packets, so its witnesses are the 5.0 protocol theorems' traces.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pubproof.model.editions import READINGS, Edition, Limits
from pubproof.model.rules import RULES, Rule
from pubproof_docs.context import GENERATED, Context
from pubproof_docs.pages_trace import need
from pubproof_docs.rst import esc, heading, list_table, literal
from pubproof_docs.witness import short

EDITION_DIFF_DOC = f"{GENERATED}/edition-diff"

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
PAIRS = ((V31, V311), (V311, V50))


@dataclass(frozen=True, slots=True, kw_only=True)
class Shown:
    """A witness: bytes, where they come from, and each edition's verdict on them."""

    data: bytes
    origin: str  # "Z3" or "corpus case <id>"
    readings: Mapping[str, str]  # readings set away from the defaults (corpus cases)
    limits: Limits | None  # the 5.0 receiver's, for a corpus case that needs them
    verdicts: tuple[tuple[Edition, str], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    rule: Rule
    what: list[str]  # the changes in words
    wire: bool  # whether the bytes can show it (else: only the id or the text changed)
    witness: Shown | None = None


def verdict_text(
    data: bytes, edition: Edition, readings: Mapping[str, str], limits: Limits | None = None
) -> str:
    """The model's verdict: ``ok`` or ``<kind> <rule id> at offset <n>`` (and, in 5.0, the
    DISCONNECT Reason Code)."""
    from pubproof.model.wire import decode

    applicable = {k: v for k, v in readings.items() if READINGS[k].applies_to(edition)}
    found = decode(data, edition, applicable, limits if edition is V50 else None).failure
    if found is None:
        return "ok"
    text = f"{found.kind} {found.rule} at offset {found.offset}"
    return text + (f" (0x{found.reason_code:02X})" if found.reason_code is not None else "")


def _normalised(verdict: str, edition: Edition) -> str:
    """A verdict with its rule id as the registry key and no Reason Code: what two editions
    can be compared on (the same judgement under another id is no change)."""
    parts = verdict.split(" (0x")[0].split(" ")
    if len(parts) >= 2:
        with contextlib.suppress(KeyError):
            parts[1] = RULES.by_id(parts[1], edition).key
    return " ".join(parts)


def differ(verdicts: tuple[tuple[Edition, str], ...]) -> bool:
    """Whether the editions' verdicts differ beyond the rule's id and the Reason Code."""
    return len({_normalised(v, e) for e, v in verdicts}) > 1


def _defaults(rule: Rule, edition: Edition) -> str | None:
    if rule.reading is None or edition not in rule.ids:
        return None
    return READINGS[rule.reading].defaults.get(edition)


def _changes(rule: Rule, a: Edition, b: Edition) -> tuple[list[str], bool]:
    """What changes for ``rule`` from ``a`` to ``b`` in words, and whether bytes show it."""
    in_a, in_b = a in rule.ids, b in rule.ids
    if not in_a and not in_b:
        return [], False
    if not in_a:
        return [f"new in {b.value} ({rule.ids[b]}, {rule.kind_in(b).value})"], True
    if not in_b:
        return [f"gone in {b.value} (was {rule.ids[a]}, {rule.kind_in(a).value})"], True
    what: list[str] = []
    wire = False
    if rule.kind_in(a) is not rule.kind_in(b):
        what.append(f"kind {rule.kind_in(a).value} → {rule.kind_in(b).value}")
        wire = True
    da, db = _defaults(rule, a), _defaults(rule, b)
    if rule.reading is not None and da != db:
        said = [
            f"{e.value}: {v}" if v else f"no switch in {e.value}" for e, v in ((a, da), (b, db))
        ]
        what.append(f"reading {rule.reading}: " + " → ".join(said))
        wire = True
    if rule.ids[a] != rule.ids[b]:
        what.append(f"id {rule.ids[a]} → {rule.ids[b]}")
    return what, wire


@cache
def _z3_witness(key: str, a: Edition, b: Edition) -> bytes | None:
    """The bytes of Z3's witness for ``key`` between the editions' defaults, or None."""
    from pubproof.proofs.differences import PACKETS, witnesses
    from pubproof.proofs.oracle import Config
    from pubproof.proofs.probes50 import PACKETS50
    from pubproof.proofs.variant import MODEL

    domain = PACKETS50 if V50 in (a, b) else PACKETS
    if key not in domain.rule_keys:
        return None
    found = witnesses(Config.of(a), Config.of(b), MODEL, [key], domain)
    if not isinstance(found, list) or not found:
        return None
    return found[0].data


def _corpus(root: Path) -> list[dict[str, object]]:
    lines = (root / "vectors" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _corpus_witness(
    rule: Rule, a: Edition, b: Edition, corpus: list[dict[str, object]]
) -> Shown | None:
    """The first corpus case that breaks ``rule`` in an edition that has it and that the
    other edition judges otherwise."""
    for edition in (b, a):
        if edition not in rule.ids:
            continue
        for case in corpus:
            if (case.get("op"), case.get("edition"), case.get("rule")) != (
                "decode",
                edition.value,
                rule.ids[edition],
            ) or case.get("verdict") == "ok":
                continue
            data = bytes.fromhex(str(case["hex"]))
            raw = case.get("reading") or {}
            assert isinstance(raw, dict)
            # the readings the case sets away from its edition's defaults
            chosen = {
                str(k): str(v)
                for k, v in raw.items()
                if k in READINGS and READINGS[k].defaults.get(edition) != v
            }
            limits_raw = case.get("limits") or {}
            assert isinstance(limits_raw, dict)
            limits = Limits(**limits_raw) if limits_raw else None
            verdicts = tuple((e, verdict_text(data, e, chosen, limits)) for e in (a, b))
            if differ(verdicts):
                return Shown(
                    data=data, origin=f"corpus case {case['id']}", readings=chosen,
                    limits=limits, verdicts=verdicts,
                )  # fmt: skip
    return None


def changes(root: Path, a: Edition, b: Edition) -> list[Change]:
    """Every wire rule that changes from ``a`` to ``b``, with its witness where bytes show it."""
    corpus = _corpus(root)
    found: list[Change] = []
    for key, rule in RULES.items():
        what, wire = _changes(rule, a, b)
        if not what:
            continue
        shown = None
        if wire:
            data = _z3_witness(key, a, b)
            if data is not None:
                verdicts = tuple((e, verdict_text(data, e, {})) for e in (a, b))
                if differ(verdicts):
                    shown = Shown(data=data, origin="Z3", readings={}, limits=None,
                                  verdicts=verdicts)  # fmt: skip
            if shown is None:
                shown = _corpus_witness(rule, a, b, corpus)
        found.append(Change(rule=rule, what=what, wire=wire, witness=shown))
    return found


def _witness_cell(shown: Shown | None, wire: bool) -> str:
    if shown is None:
        return (
            "none: neither Z3 (in its packet domain) nor the vector corpus has a packet the "
            "two editions, with their defaults, judge otherwise than by the rule's id"
        )
    setting = ", ".join(f"{k}={v}" for k, v in shown.readings.items())
    if shown.limits is not None:
        limits = [f"topic_alias_maximum={shown.limits.topic_alias_maximum}"] * bool(
            shown.limits.topic_alias_maximum
        ) + [f"maximum_packet_size={shown.limits.maximum_packet_size}"] * (
            shown.limits.maximum_packet_size is not None
        )
        if limits:
            setting += (", " if setting else "") + "5.0 receiver's " + ", ".join(limits)
    lines = [f"{literal(short(shown.data, 24))} ({esc(shown.origin)}"
             + (f"; {esc(setting)}" if setting else "") + ")", ""]  # fmt: skip
    lines += [f"- {e.value}: {literal(v)}" for e, v in shown.verdicts]
    return "\n".join(lines)


def _pair_section(ctx: Context, a: Edition, b: Edition) -> str:
    found = changes(ctx.root, a, b)
    wire = [c for c in found if c.wire]
    renamed = [c for c in found if not c.wire]
    witnessed = sum(c.witness is not None for c in wire)
    out = [heading(f"MQTT {a.value} → {b.value}", "-")]
    out.append(
        f"{len(wire)} rules change in kind, in their reading's default, or appear or go; "
        f"{witnessed} of them with a witness the model judges differently in {a.value} and "
        f"{b.value} (decoded now, in this build). {len(renamed)} more rules keep their kind "
        "and reading and only change their id (listed after the table).\n"
    )
    rows = []
    for change in wire:
        node = ctx.trace.rules.get(
            f"R50_{_need_tail(change.rule.key)}" if b is V50 and b in change.rule.ids else ""
        ) or ctx.trace.rules.get(f"R_{_need_tail(change.rule.key)}")
        rule_cell = need(node.need) if node is not None else literal(change.rule.key)
        rows.append(
            [
                f"{literal(change.rule.key)}\n\n{rule_cell}: {esc(change.rule.title)}",
                "\n".join(f"- {esc(w)}" for w in change.what),
                _witness_cell(change.witness, change.wire),
            ]
        )
    if rows:
        out.append(
            list_table(
                ["rule", "what changes", "witness and the model's verdicts"],
                rows,
                widths=[32, 26, 42],
            )
        )
    if renamed:
        out.append(
            ".. rubric:: Same kind and reading, another id\n\n"
            "The registry's rule is the same; the packets around it may still be read "
            "otherwise (the changes above).\n"
        )
        out.append(
            list_table(
                ["rule", "change"],
                [[literal(c.rule.key), "; ".join(esc(w) for w in c.what)] for c in renamed],
                widths=[30, 70],
            )
        )
    return "\n".join(out)


def _need_tail(key: str) -> str:
    import re

    return re.sub(r"[^A-Z0-9]+", "_", key.upper()).strip("_")


def _counts() -> str:
    rows = []
    for edition in (V31, V311, V50):
        wire = [r for r in RULES.values() if edition in r.ids]
        flow = [r for r in RULES.flows() if edition in r.ids]
        switches = [n for n, r in READINGS.items() if r.applies_to(edition)]
        rows.append(
            [edition.value, str(len(wire)), str(len(flow)),
             ", ".join(literal(s) for s in switches) or "—"]
        )  # fmt: skip
    return list_table(
        ["edition", "wire rules", "flow rules", "readings (switches)"],
        rows,
        widths=[12, 12, 12, 64],
    )


def _readings() -> str:
    rows = []
    for name, reading in READINGS.items():
        cells = [reading.defaults.get(e) for e in (V31, V311, V50)]
        rows.append([literal(name), esc(reading.question),
                     *(literal(c) if c else "—" for c in cells)])  # fmt: skip
    return list_table(
        ["reading", "question", "3.1", "3.1.1", "5.0"], rows, widths=[14, 50, 12, 12, 12]
    )


def _group(key: str) -> str:
    return key.split(".")[1]


def _flows(ctx: Context) -> str:
    older = [r for r in RULES.flows() if V311 in r.ids]
    newer = [r for r in RULES.flows() if V50 in r.ids]
    groups_311 = {_group(r.key) for r in older}
    rows = []
    for rule in newer:
        suffix = rule.key.split(".", 1)[1]
        same = [r for r in older if r.key.split(".", 1)[1] == suffix]
        kin = [r for r in older if _group(r.key) == _group(rule.key)]
        if same:
            was = f"as {literal(same[0].key)} ({same[0].ids[V311]})"
        elif kin:
            was = "its group in 3.1.1: " + ", ".join(
                f"{literal(r.key)} ({r.ids[V311]})" for r in kin
            )
        else:
            was = "new in 5.0"
        node = ctx.trace.rules.get(f"R50_{_need_tail(rule.key)}")
        theorems = [] if node is None else [v for v in node.verified_by if v.startswith("TH_")]
        rows.append(
            [f"{literal(rule.key)} ({rule.ids[V50]})", esc(rule.title), was,
             ", ".join(need(t) for t in theorems) or "tests only"]
        )  # fmt: skip
    gone = [r for r in older if _group(r.key) not in {_group(n.key) for n in newer}]
    text = list_table(
        ["5.0 flow rule", "what it says", "in 3.1.1", "theorems (traces)"], rows,
        widths=[22, 34, 22, 22],
    )  # fmt: skip
    if gone:
        text += (
            "\n3.1.1 flow rules with no 5.0 rule of their group: "
            + ", ".join(f"{literal(r.key)} ({r.ids[V311]})" for r in gone)
            + f" (groups of 3.1.1: {', '.join(sorted(groups_311))}).\n"
        )
    return text


def pages(ctx: Context) -> dict[str, str]:
    out = [heading("Edition diff: MQTT 3.1 → 3.1.1 → 5.0", "=")]
    out.append(
        "What changes from one edition to the next, rule by rule, from the rule registry "
        "(``pubproof.model.rules.RULES``) and the readings (``pubproof.model.editions."
        "READINGS``). Each change the bytes of one packet can show has a witness computed "
        "while this page was built: a **Z3** witness (the search of the theorems "
        ":need:`TH_WIRE_EDITIONS_AGREE` and :need:`TH_WIRE_V5_EDITIONS_AGREE`, focused on "
        "that rule: the shortest, tidiest packet the two editions, each with its default "
        "readings, judge differently, one of them under that rule), or, for a rule outside "
        "the Z3 packet domain, a **case of the vector corpus** that breaks it. Every witness "
        "is decoded by the model in both editions and both verdicts are shown (a 5.0 verdict "
        "with the DISCONNECT Reason Code a receiver sends). The flows and a server's "
        "distribution across sessions follow, with witnesses of their own (traces, and events "
        "the distribution model runs in both editions).\n"
    )
    out.append(heading("Rules and readings per edition", "-"))
    out.append(_counts())
    out.append(
        "The readings' defaults per edition; a dash where the reading is no switch in that "
        "edition (the rules it governs are fixed there, or do not exist).\n"
    )
    out.append(_readings())
    for a, b in PAIRS:
        out.append(_pair_section(ctx, a, b))
    out.append(heading("The flows: 3.1.1 → 5.0", "-"))
    out.append(
        "3.1 and 3.1.1 share the 3.x flow tables (``pubproof.model.flows``); 5.0 has its own "
        "(``pubproof.model.flows50``, ``pubproof.model.topic_alias``): Reason Codes on the "
        "acknowledgements (an error ends a flow and nothing is re-sent), flow control (the "
        "send quota and the Receive Maximum), Topic Aliases per connection, and "
        "DISCONNECT with a Reason Code. No single packet shows a flow rule: the 5.0 protocol "
        "theorems do, each with a trace (a refuted one's counterexample is drawn in "
        "notebook 06).\n"
    )
    out.append(_flows(ctx))
    from pubproof_docs import distribution_diff

    out.append(distribution_diff.section(ctx))
    return {EDITION_DIFF_DOC: "\n".join(out)}
