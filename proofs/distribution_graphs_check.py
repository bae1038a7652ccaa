"""The forwarding graphs' encoding against the model's own walks, case by case.

Rules / theory of operation
---------------------------
:func:`drift` evaluates the encoding of :mod:`.distribution_graphs` on every case of a
small domain and compares it with what :mod:`pubproof.model.forwarding` answers for the
same message and subscriptions, in each edition and reading:

- one subscription (``subscription_copy``): every published QoS and RETAIN, granted QoS,
  a filter that matches or not, and in 5.0 every No Local, same or other ClientID, Retain
  As Published, Shared and other member;
- one session of two subscriptions (``session_delivery``): each one not matching, or
  matching with each granted QoS (5.0: and each Retain As Published), every published
  QoS and RETAIN, under both values of ``overlapping-copies``: the copies in order, each
  with its QoS, RETAIN and the filters it stands for;
- a subscription just made (``retained_on_subscribe`` and ``retained_shape``): every QoS
  of the retained message and granted, Shared or not, replacing one or not, every Retain
  Handling (5.0), and in 3.1 both values of ``retained-qos-31``.

Each case's answer is packed into one integer (a term built from the encoding's outputs),
evaluated by substituting the case's values and simplifying, so one substitution judges a
whole case.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache

from pubproof.model.editions import Edition
from pubproof.model.forwarding import (
    retained_on_subscribe,
    retained_shape,
    session_delivery,
    subscription_copy,
)
from pubproof.model.messages import Message, Publication
from pubproof.model.subscriptions import RetainHandling, Subscription
from pubproof.proofs.distribution_graphs import (
    CopySlot,
    Encoding,
    Offer,
    Setting,
    Sub,
    retained_copy,
    session_copies,
)
from pubproof.proofs.distribution_graphs import (
    subscription_copy as encoded_copy,
)
from pubproof.proofs.z3env import Expr, evaluate, z3

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
TOPIC = "a/b"
MATCHING = ("a/+", "a/#")
OTHER = ("c", "d")
SHARE = "g"


@dataclass(frozen=True, slots=True)
class Values:
    """One concrete subscription."""

    granted: int = 0
    match: bool = True
    no_local: bool = False
    rap: bool = False
    shared: bool = False
    other_member: bool = False
    handling: int = 0
    existed: bool = False

    def subscription(self, index: int, edition: Edition) -> Subscription:
        plain = (MATCHING if self.match else OTHER)[index]
        shared = self.shared and edition is V50
        return Subscription(
            topic_filter=f"$share/{SHARE}/{plain}" if shared else plain,
            granted_qos=self.granted,
            no_local=self.no_local,
            retain_as_published=self.rap,
            retain_handling=RetainHandling(self.handling),
            share_name=SHARE if shared else None,
        )


def _message(qos: int, retain: bool) -> Message:
    publication = Publication(publisher="pub", topic=TOPIC, payload=b"x", qos=qos, retain=retain)
    return Message(seq=1, received_at=0, publication=publication)


def _assign(symbolic: Sub, given: Values) -> list[tuple[Expr, int]]:
    return [
        (symbolic.granted, given.granted), (symbolic.match, given.match),
        (symbolic.no_local, given.no_local), (symbolic.rap, given.rap),
        (symbolic.shared, given.shared),
        (symbolic.other_member, given.other_member),
        (symbolic.handling, given.handling),
        (symbolic.existed, given.existed),
    ]  # fmt: skip


def _offer_values(offer: Offer, qos: int, retain: bool, same: bool) -> list[tuple[Expr, int]]:
    return [(offer.qos, qos), (offer.retain, retain),
            (offer.same_client, same)]  # fmt: skip


def pack(slots: Sequence[CopySlot]) -> Expr:
    """The copies as one integer: per slot, 0 when not sent, else 1 + QoS, RETAIN and the
    subscriptions it stands for, in base 64."""
    total: Expr = z3.IntVal(0)
    for place, slot in enumerate(slots):
        stands = sum((z3.If(s, 1 << (3 + i), 0) for i, s in enumerate(slot.stands_for)),
                     z3.IntVal(0))  # fmt: skip
        code = 1 + slot.qos + z3.If(slot.retain, 4, 0) + stands
        total = total + z3.If(slot.sent, code, 0) * (64**place)
    return total


def _code(qos: int, retain: bool, stands: Sequence[int]) -> int:
    return 1 + qos + (4 if retain else 0) + sum(1 << (3 + i) for i in stands)


def _editions_flags(edition: Edition) -> Iterator[tuple[bool, bool, bool, bool, bool]]:
    """(no_local, same_client, rap, shared, other_member): all in 5.0, none before."""
    if edition is not V50:
        yield False, False, False, False, False
        return
    yield from itertools.product((False, True), repeat=5)


@dataclass(frozen=True, slots=True)
class Drift:
    setting: Setting
    where: str
    case: str
    model_says: str
    encoding_says: int

    def describe(self) -> str:
        return (
            f"the Z3 encoding of the {self.where} and the model disagree under "
            f"{self.setting.describe()} for {self.case}: the model says {self.model_says} "
            f"(packed encoding {self.encoding_says})"
        )


def _settings() -> Iterator[Setting]:
    for edition in (V31, V311, V50):
        for overlap in ("one-copy", "per-subscription"):
            for retained in ("granted", "as-published") if edition is V31 else ("granted",):
                yield Setting(edition, overlap, retained)


def _subscriptions(encoding: Encoding, setting: Setting) -> Drift | None:
    offer = Offer.fresh(1, "_c")
    made, qos, retain = encoded_copy(encoding, setting, offer, offer.subs[0])
    term = z3.If(made, 1 + qos + z3.If(retain, 4, 0), 0)
    for pub_qos, pub_retain, granted, match in itertools.product(
        range(3), (False, True), range(3), (False, True)
    ):
        for no_local, same, rap, shared, other in _editions_flags(setting.edition):
            given = Values(granted=granted, match=match, no_local=no_local, rap=rap,
                           shared=shared, other_member=other)  # fmt: skip
            found, _ = subscription_copy(
                _message(pub_qos, pub_retain), "pub" if same else "sub",
                given.subscription(0, setting.edition), setting.edition, setting.readings(),
                other_member=other,
            )  # fmt: skip
            expected = 0 if found is None else _code(found.shape.qos, found.shape.retain, [])
            values = [*_offer_values(offer, pub_qos, pub_retain, same),
                      *_assign(offer.subs[0], given)]  # fmt: skip
            said = evaluate(term, values)
            if said != expected:
                return Drift(setting, "subscription graph", f"{given} of a QoS {pub_qos} "
                             f"message (RETAIN {int(pub_retain)}, same client {same})",
                             str(found.shape if found else None), said)  # fmt: skip
    return None


def _session_options(edition: Edition) -> list[Values]:
    found = [Values(match=False)]
    for granted in range(3):
        for rap in (False, True) if edition is V50 else (False,):
            found.append(Values(granted=granted, rap=rap, other_member=True))
    return found


def _sessions(encoding: Encoding, setting: Setting) -> Drift | None:
    offer = Offer.fresh(2, "_s")
    term = pack(session_copies(encoding, setting, offer))
    choices = _session_options(setting.edition)
    for first, second in itertools.product(choices, repeat=2):
        subs = [first.subscription(0, setting.edition), second.subscription(1, setting.edition)]
        for pub_qos, pub_retain in itertools.product(range(3), (False, True)):
            delivery = session_delivery(
                _message(pub_qos, pub_retain), "sub", subs, setting.edition, setting.readings()
            )
            expected = 0
            shapes = () if delivery is None else delivery.shapes
            # one copy for several subscriptions is the last slot; any other is its own
            several = delivery is not None and len(shapes) == 1 and len(delivery.candidates) > 1
            for shape in shapes:
                stands = [i for i, s in enumerate(subs) if s.topic_filter in shape.topic_filters]
                slot = len(subs) if several else stands[0]
                expected += _code(shape.qos, shape.retain, stands) * 64**slot
            values = [*_offer_values(offer, pub_qos, pub_retain, False),
                      *_assign(offer.subs[0], first), *_assign(offer.subs[1], second)]  # fmt: skip
            said = evaluate(term, values)
            if said != expected:
                return Drift(setting, "session graph", f"{first}, {second} and a QoS {pub_qos} "
                             f"message (RETAIN {int(pub_retain)})", str(shapes), said)  # fmt: skip
    return None


def _retained(encoding: Encoding, setting: Setting) -> Drift | None:
    offer = Offer.fresh(1, "_r")
    message_qos = z3.Int("retained_qos_r")
    slot = retained_copy(encoding, setting, message_qos, offer.subs[0])
    term = z3.If(slot.sent, 1 + slot.qos + z3.If(slot.retain, 4, 0), 0)
    handlings = range(3) if setting.edition is V50 else (0,)
    shared_values = (False, True) if setting.edition is V50 else (False,)
    for qos, granted, shared, existed, handling in itertools.product(
        range(3), range(3), shared_values, (False, True), handlings
    ):
        given = Values(granted=granted, shared=shared, handling=handling, existed=existed)
        subscription = given.subscription(0, setting.edition)
        send, _ = retained_on_subscribe(subscription, existed, setting.edition)
        expected = 0
        if send:
            shape = retained_shape(_message(qos, True), subscription, setting.edition,
                                   setting.readings())  # fmt: skip
            expected = _code(shape.qos, shape.retain, [])
        values = [(message_qos, qos), *_assign(offer.subs[0], given)]
        said = evaluate(term, values)
        if said != expected:
            return Drift(setting, "retained graph", f"{given}, a retained message of QoS {qos}",
                         str(expected), said)  # fmt: skip
    return None


@cache
def drift(encoding: Encoding) -> Drift | None:
    """The first case on which the encoding and the model's walks disagree; None if none."""
    for setting in _settings():
        for check in (_subscriptions, _sessions, _retained):
            found = check(encoding, setting)
            if found is not None:
                return found
    return None


__all__ = ["Drift", "drift", "pack"]
