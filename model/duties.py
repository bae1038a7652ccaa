"""Duties: whom each statement binds, and how strongly, so that a verdict charges an end
only with what that end owed.

Theory of operation
-------------------
A normative statement binds a *party*: the sender or the receiver of the packet it is
about (either role), the Client, or the Server; some bind two (MQTT-3.3.1-4: the sender
MUST NOT send QoS 3, the receiver MUST close), some bind one role in one position
(MQTT-3.6.1-1: any sender, but only a Server as receiver). Each binding has a strength:
a MUST (or MUST NOT), broken, is a *violation*; a SHOULD (or SHOULD NOT) not followed is a
*deviation*, its own verdict.

A judge that watches one end (the *judged* end, in the role ``client`` or ``server``)
charges it with a statement only if the statement binds that end where it stood: as the
sender of what it sent, as the receiver of what it received, or by its role. A statement
that binds only the other position is what the other end broke, the peer's fault or a
probe's deliberate case: it is reported as *provoked*, never as the judged end's.

The data, in order of authority:

1. :data:`OVERRIDES`, below: statements whose binding the index words in a way the parser
   below cannot read, or that the registry groups with another party's statement;
2. the normative index (``texts/normative-index.txt``: Table A for 3.1.1 and the 3.1
   flows, which cite 3.1.1 ids; Table B for 5.0), column *binds*, read by :func:`_parties`;
3. the rule registry (:data:`pubproof.model.rules.RULES`) for the project's own ids
   (``PP31-``, ``PP311-``, ``PP50-``), by the rule's ``binds`` and ``strength``.

An id that none of them knows has no duty data: :func:`duties` gives ``()`` and a judge
charges it as before (nothing is dropped on a guess).
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from pubproof.model import normative_index
from pubproof.model.editions import Edition
from pubproof.model.rules import RULES, Binds, Strength


class Party(enum.Enum):
    """Who a statement binds: a position in the flow of one packet, or a role."""

    SENDER = "sender"
    RECEIVER = "receiver"
    CLIENT = "client"
    SERVER = "server"


#: the two roles, and the two positions
ROLES = (Party.CLIENT, Party.SERVER)
POSITIONS = (Party.SENDER, Party.RECEIVER)


@dataclass(frozen=True, slots=True, kw_only=True)
class Duty:
    """One party a statement binds: ``party``, restricted to ``role`` where the statement
    binds a position of one role only ("Server (as receiver)"), with ``must`` true for a
    MUST or MUST NOT and false for a SHOULD or SHOULD NOT."""

    party: Party
    role: Party | None = None
    must: bool = True

    def __post_init__(self) -> None:
        if self.role is not None and (self.role not in ROLES or self.party not in POSITIONS):
            raise ValueError(f"a role restricts a position, not {self.party} by {self.role}")

    def binds(self, role: Party, position: Party | None) -> bool:
        """Whether this duty binds an end in ``role`` standing at ``position`` (the sender
        or the receiver of the packet concerned; None: wherever it stands)."""
        if role not in ROLES:
            raise ValueError(f"{role} is not a role")
        if self.party in ROLES:
            return self.party is role
        if self.role is not None and self.role is not role:
            return False
        return position is None or self.party is position


S, R, C, SV = Party.SENDER, Party.RECEIVER, Party.CLIENT, Party.SERVER

#: statements the index's *binds* column words beyond :func:`_parties`, or that a rule of
#: the registry groups with another party's statement. Keyed by (edition family, id): the
#: family is "3" (3.1 and 3.1.1: the 3.1 flows cite 3.1.1 ids) or "5".
OVERRIDES: Mapping[tuple[str, str], tuple[Duty, ...]] = MappingProxyType({
    # [MQTT-2.2.2-1] "Where a flag bit is marked as "Reserved" in Table 2.2 - Flag Bits, it
    # is reserved for future use and MUST be set to the value listed in that table": the
    # sender's; [MQTT-2.2.2-2] "If invalid flags are received, the receiver MUST close the
    # Network Connection": the receiver's. The registry groups them as one rule.
    ("3", "MQTT-2.2.2-1"): (Duty(party=S),),
    ("3", "MQTT-2.2.2-2"): (Duty(party=R),),
    # [MQTT-4.8.0-1] "if either the Server or Client encounters a protocol violation, it
    # MUST close the Network Connection on which it received that Control Packet": the
    # receiver of the packet, whichever role
    ("3", "MQTT-4.8.0-1"): (Duty(party=R),),
    # [MQTT-3.3.1-7] "...the Server MUST discard any message previously retained for that
    # topic. It SHOULD store the new QoS 0 message as the new retained message for that
    # topic, but MAY choose to discard it at any time": the MUST is the Server's
    ("3", "MQTT-3.3.1-7"): (Duty(party=SV),),
    # 5.0 [MQTT-4.13.1-1] "When a Server detects a Malformed Packet or Protocol Error, and
    # a Reason Code is given in the specification, it MUST close the Network Connection."
    ("5", "MQTT-4.13.1-1"): (Duty(party=R, role=SV),),
})


def _family(edition: Edition) -> str:
    return "5" if edition is Edition.V50 else "3"


def _must(strength: str) -> bool:
    """A MUST or MUST NOT among the keywords: a SHOULD alone is not a MUST."""
    return "MUST" in strength.upper()


def _qualified(words: str) -> tuple[Party | None, Party | None]:
    """(party, role) of one part of the index's *binds* column, e.g. "Server (as
    receiver)", "receiver (Client or Server)", "PUBACK sender", "publisher"."""
    text = words.lower()
    head, _, paren = text.partition("(")
    head, paren = head.strip(), paren.rstrip(")").strip()
    position = None
    for word, party in (("sender", S), ("receiver", R), ("publisher", S), ("encoder", S),
                        ("acknowledging side", S), ("subscriber", C)):  # fmt: skip
        if word in head or word in paren:
            position = party
            break
    named = {p for p, word in ((C, "client"), (SV, "server")) if word in head}
    if position is Party.CLIENT:  # "subscriber (filters only)": a Client's SUBSCRIBE
        return Party.CLIENT, None
    if position is not None:
        if len(named) == 1 and "as " in paren:  # "Server (as receiver)"
            return position, named.pop()
        return position, None
    if named == {C}:
        return C, None
    if named == {SV}:
        return SV, None
    if named == {C, SV}:
        return None, None  # "Client and Server", "Client or Server": whoever it is
    return None, None


def _parties(binds: str, strength: str) -> tuple[Duty, ...]:
    """The duties the index's *binds* column names ("sender; receiver (Client or
    Server)" is two), at the index's strength."""
    must = _must(strength)
    found: list[Duty] = []
    for part in binds.split(";"):
        party, role = _qualified(part)
        if party is None:
            lowered = part.lower()
            if "client" in lowered and "server" in lowered:
                found += [Duty(party=C, must=must), Duty(party=SV, must=must)]
            continue
        found.append(Duty(party=party, role=role, must=must))
    return tuple(dict.fromkeys(found))


_FROM_BINDS: Mapping[Binds, tuple[Party, ...]] = MappingProxyType({
    Binds.SENDER: (S,), Binds.RECEIVER: (R,), Binds.SENDER_AND_RECEIVER: (S, R),
    Binds.CLIENT: (C,), Binds.SERVER: (SV,),
})  # fmt: skip


@functools.cache
def _index(family: str) -> Mapping[str, tuple[Duty, ...]]:
    table = normative_index.table_b() if family == "5" else normative_index.table_a()
    return MappingProxyType({
        rule_id: _parties(entry.binds, entry.strength) for rule_id, entry in table.items()
    })  # fmt: skip


def duties(rule_id: str, edition: Edition) -> tuple[Duty, ...]:
    """Whom ``rule_id`` binds in ``edition`` (``()`` when no source says)."""
    family = _family(edition)
    found = OVERRIDES.get((family, rule_id))
    if found is not None:
        return found
    found = _index(family).get(rule_id)
    if found:
        return found
    # the 3.1 flows cite 3.1.1 ids; 5.0 numbers its statements afresh, so a 5.0 id is
    # never read as the 3.1.1 statement of the same number
    lookups = (edition, Edition.V311) if edition is Edition.V31 else (edition,)
    for where in lookups:
        try:
            rule = RULES.by_id(rule_id, where)
            break
        except KeyError:
            continue
    else:
        return ()
    must = rule.strength in (Strength.MUST, Strength.MUST_NOT, Strength.DEFINITION)
    parties = _FROM_BINDS[rule.binds]
    if rule.strength is Strength.DEFINITION and rule.binds is Binds.SENDER_AND_RECEIVER:
        # a statement of the format binds the end that makes the packet; what the receiver
        # owes a packet that breaks it is the close rule's ([MQTT-4.8.0-1], 4.13)
        parties = (S,)
    return tuple(Duty(party=p, must=must) for p in parties)


def duty_of(
    rule_id: str, edition: Edition, *, role: Party, position: Party | None = None
) -> Duty | None:
    """The duty ``rule_id`` puts on an end in ``role`` standing at ``position`` (the
    strongest, if several), None if it puts none; an id with no duty data binds
    everyone (a MUST), as judges charged it before there was duty data."""
    found = duties(rule_id, edition)
    if not found:
        return Duty(party=role)
    binding = [d for d in found if d.binds(role, position)]
    if not binding:
        return None
    return max(binding, key=lambda d: d.must)


def binds_only_others(rule_id: str, edition: Edition, *, role: Party) -> bool:
    """Whether ``rule_id`` binds no end in ``role`` wherever it stands (a Server-only
    statement, for a Client): such a rule can never be the judged end's."""
    return duty_of(rule_id, edition, role=role) is None


def binds_receiver(rule_id: str, edition: Edition, *, role: Party) -> bool:
    """Whether ``rule_id`` names the receiver of a packet, in ``role``, in so many words
    (a duty whose party is the receiver); an id with no duty data counts as binding it,
    as judges charged it before there was duty data."""
    found = duties(rule_id, edition)
    if not found:
        return True
    return any(d.party is Party.RECEIVER and d.binds(role, Party.RECEIVER) for d in found)
