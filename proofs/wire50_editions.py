"""Where MQTT 5.0 parts from 3.1.1 and 3.1 on the same bytes: Z3 witnesses, model-confirmed.

The claim "3.1.1 and 5.0 (each with its default readings) give every packet the same
verdict" is expected to be refuted, with one witness per place they part (the focus
rules): a 3.1.1 PUBLISH whose first payload byte 5.0 reads as a Property Length (missing,
too big, or followed by no valid identifier), a Remaining Length longer than needed
(accepted by 3.1.1's default, [MQTT-1.5.5-1] in 5.0), type 15 (reserved in 3.1.1, AUTH in
5.0), an acknowledgement of Remaining Length 3 or 4 (malformed in 3.1.1, valid in 5.0)
and one with a Reason Code outside its table, and an empty topic ([MQTT-4.7.3-1] in 3.1.1,
PP50-3.3.2-topic-or-alias in 5.0). 3.1 against 5.0 gets its shortest witness. Every
witness is searched in :mod:`~pubproof.proofs.packet50_symbolic`'s domain and decoded by
the model under both editions (:mod:`~pubproof.proofs.differences`).
"""

from __future__ import annotations

from dataclasses import replace

from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition
from pubproof.proofs.differences import compare
from pubproof.proofs.oracle import Config
from pubproof.proofs.probes50 import PACKETS50
from pubproof.proofs.registry import Broken, Result, theorem
from pubproof.proofs.variant import MODEL, STANDARD_REASON_CODES, Codec
from pubproof.proofs.wire_common import rule_ids

EDITIONS = (Edition.V311, Edition.V50, Edition.V31)
#: The places 3.1.1 and 5.0 part, in the order the witnesses are listed.
FOCUS = (
    R.PROPERTIES_PRESENT, R.PROPERTY_LENGTH, R.PROPERTY_IDENTIFIER, R.RL_MINIMAL,
    R.RESERVED_TYPE, R.ACK_RL["PUBACK"], R.ACK_REASON_CODE["PUBACK"], R.TOPIC_OR_ALIAS,
)  # fmt: skip


@theorem(
    id="wire.v5.editions-agree",
    statement="MQTT 3.1.1 and 5.0, and 3.1 and 5.0, each with its default readings, give every "
    "packet the same verdict (expected refuted: 5.0 reads a Property Length after the "
    "variable header, requires the shortest Remaining Length, makes type 15 AUTH, accepts "
    "acknowledgements with a Reason Code and judges it, and reports an empty topic without a "
    "Topic Alias under its own rule)",
    rules=rule_ids([*FOCUS, R.TOPIC_NOT_EMPTY], EDITIONS),
    editions=EDITIONS,
    readings=("rl-encoding",),
    method="z3-witness",
    expected="refuted",
    model=MODEL,
    mutants=[
        Broken("pubrel-takes-puback-codes", "5.0 gives PUBREL the PUBACK Reason Codes",
               replace(MODEL, reason_codes=(*STANDARD_REASON_CODES[:2],
                                            ("PUBREL", STANDARD_REASON_CODES[0][1]),
                                            STANDARD_REASON_CODES[3]))),
    ],
)  # fmt: skip
def editions_agree_50(codec: Codec) -> Result:
    v50 = Config.of(Edition.V50)
    focused = compare([(Config.of(Edition.V311), v50)], codec, [r.key for r in FOCUS], PACKETS50)
    if focused.status != "refuted":
        return focused
    shortest = compare([(Config.of(Edition.V31), v50)], codec, (), PACKETS50)
    if shortest.status != "refuted":
        return shortest
    return replace(focused, details=f"{focused.details}; {shortest.details}")


__all__ = ["FOCUS", "editions_agree_50"]
