"""Run an implementer's decoder, or a broker at a host and port, against the strategies.

Rules / theory of operation
---------------------------
:func:`decoder_agrees` holds a decoder to the model's verdict on one packet
(:class:`~pubproof.testing.strategies.Judged`): the decoder is a function of the bytes
that returns for a packet it accepts and raises for one it rejects, and it must accept
exactly what the model accepts; the assertion names the rule and the byte offset the
model gives, and the fault the strategy drew.

:class:`BrokerUnderTest` makes a sequence of moves (:func:`~pubproof.testing.strategies.
steps`) against a live broker, each sequence in a fresh example of its own (fresh client
ids, a fresh topic prefix, as ``pubproof explore``), and judges the evidence with the
probe's judges (:func:`~pubproof.testing.verdicts.judge_example`): :meth:`BrokerUnderTest.
check` fails with the failures and the trace, packet by packet.

The pytest fixtures (:mod:`pubproof.testing.pytest_plugin`) hand both to a test.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence

from pubproof.judge.describe import describe
from pubproof.model.editions import Edition, resolve_readings
from pubproof.probe.evidence import Entry
from pubproof.probe.target import Target
from pubproof.testing.machine import Exploration
from pubproof.testing.moves import Move
from pubproof.testing.strategies import Judged, Steps
from pubproof.testing.verdicts import Verdict
from pubproof.testing.world import Example

_P_TYPES = ("PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP")


def decoder_agrees(decode: Callable[[bytes], object], packet: Judged) -> None:
    """Assert that ``decode`` accepts ``packet.data`` exactly when the model does."""
    try:
        decode(packet.data)
    except Exception as refusal:  # the decoder's way of saying no, whatever it is
        if packet.accepted:
            raise AssertionError(
                f"MQTT {packet.edition.value}: the decoder rejects {packet.data.hex()} "
                f"({type(refusal).__name__}: {refusal}), which the model accepts as "
                f"{list(packet.packets)}"
            ) from refusal
        return
    if not packet.accepted:
        where = f"at byte {packet.offset}" if packet.offset is not None else ""
        raise AssertionError(
            f"MQTT {packet.edition.value}: the decoder accepts {packet.data.hex()}, which the "
            f"model rejects {where}: {packet.message} [{packet.rule}]"
            + (f" (the strategy drew the fault {packet.fault!r})" if packet.fault else "")
        )


class BrokerUnderTest:
    """A live broker that sequences of moves are made against, each judged by the model."""

    def __init__(
        self,
        url: str,
        edition: Edition = Edition.V311,
        readings: Mapping[str, str] | None = None,
        *,
        clients: int = 4,
    ) -> None:
        self.edition = edition
        base = Example(
            target=Target.parse(url), edition=edition,
            readings=resolve_readings(edition, readings), run_id=secrets.token_hex(3),
            number=0, clients=clients,
        )  # fmt: skip
        self.run_state = Exploration.of(base)

    def run(self, steps: Steps | Sequence[Move]) -> tuple[Verdict, list[Entry]]:
        """Make the moves in a fresh example; the verdict and the evidence."""
        made = steps.moves if isinstance(steps, Steps) else tuple(steps)
        if isinstance(steps, Steps) and steps.edition is not self.edition:
            raise ValueError(f"moves of MQTT {steps.edition.value} for a broker of "
                             f"{self.edition.value}")  # fmt: skip
        done = self.run_state.replay(made)
        if done is None:
            raise ValueError("the moves are not a plan: one is not enabled after the others")
        _, entries, verdict = done
        return verdict, entries

    def check(self, steps: Steps | Sequence[Move]) -> Verdict:
        """Make the moves; ``AssertionError`` with the failures and the trace if the broker
        fails a rule, else the verdict."""
        verdict, entries = self.run(steps)
        if verdict.failures:
            lines = [f"{f.verdict} [{f.key}] ({f.source}): {f.message}" for f in verdict.failures]
            raise AssertionError("\n".join([*lines, "trace:", *trace_lines(entries)]))
        return verdict


def trace_lines(entries: Sequence[Entry]) -> list[str]:
    """The evidence, a packet or event a line."""
    lines = []
    for entry in entries:
        if "event" in entry:
            detail = entry.get("move") or entry.get("client") or ""
            lines.append(f"  {entry['event']} {detail}".rstrip())
            continue
        arrow = "->" if entry["dir"] == "to-broker" else "<-"
        what = describe(entry) if entry["type"] in _P_TYPES else entry["type"]
        lines.append(f"  {entry['client']} {arrow} {what} [{entry['hex']}]")
    return lines
