"""The variant a wire-format encoding is built for: the model, or the model with one bug.

Every Z3 encoding of the wire format takes a :class:`Codec`. Its defaults are what
:mod:`pubproof.model.wire` does; each field is one place where a codec can plausibly go
wrong, so that a mutant is ``replace(MODEL, field=broken value)`` and runs through exactly
the same encoding and the same proof as the model.
"""

from __future__ import annotations

from dataclasses import dataclass

from pubproof.model.editions import PFI_MEI_ONCE
from pubproof.model.properties50 import ACKS, PROPERTIES, identifiers

#: MQTT 5.0 Tables 3-4 to 3-7: the Reason Codes each acknowledgement may carry, as the
#: standard lists them (the proofs' own copy, so that the model's table is checked against
#: the standard and not against itself).
STANDARD_REASON_CODES: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("PUBACK", (0x00, 0x10, 0x80, 0x83, 0x87, 0x90, 0x91, 0x97, 0x99)),
    ("PUBREC", (0x00, 0x10, 0x80, 0x83, 0x87, 0x90, 0x91, 0x97, 0x99)),
    ("PUBREL", (0x00, 0x92)),
    ("PUBCOMP", (0x00, 0x92)),
)
#: MQTT 5.0 section 2.2.2.2, Table 2-4, for the properties of PUBLISH and the
#: acknowledgements: identifier and value type (properties50.DataType.code: "byte", "two",
#: "four": fixed-size integers; "string", "binary": two-byte length prefix; "pair": two
#: strings; "varint"). Read from the model's table (pubproof.model.properties50), which
#: tests/test_properties50.py holds to the standard's text: what the proofs check is that
#: the model's reading of each type is the Z3 encoding's, and the mutants change this.
STANDARD_PROPERTIES: tuple[tuple[int, str], ...] = tuple(
    (row.identifier, row.type.code)
    for row in PROPERTIES
    if row.identifier in identifiers("PUBLISH") | identifiers(ACKS[0])
)
#: The properties whose repeat in a PUBLISH the reading pfi-mei-once decides.
ONCE_BY_READING: tuple[int, ...] = tuple(
    row.identifier for row in PROPERTIES if row.once_reading == PFI_MEI_ONCE.name
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Codec:
    """Knobs of the wire format; the defaults are the model."""

    # --- Remaining Length, decoding
    rl_digit_mask: int = 0x7F  # the value bits of each byte
    rl_max_bytes: int = 4  # how many bytes the decoder reads before giving up
    rl_end_of_input_ends: bool = False  # the last available byte ends the field (a bug)
    rl_shortest_strict: bool = True  # shortest length: value >= 128**n needs n+1 bytes
    # --- Remaining Length, encoding (section 2.2.3's algorithm)
    rl_continuation_bit: int = 0x80  # set on every byte but the last
    rl_min_bytes: int = 1  # an encoder that pads the field to this many bytes
    # --- first byte
    qos3_guard: bool = True  # QoS 3 is judged (by edition and reading)
    dup_guard_qos: int = 0  # the QoS at which DUP=1 is a violation
    pubrel_flags: int = 0b0010  # PUBREL's reserved flag value (the others have 0000)
    # --- PUBLISH fields
    id_from_qos: int = 1  # the decoder reads a packet identifier when QoS >= this
    id_max_qos: int = 3  # ... and QoS <= this
    reject_id_zero: bool = True  # packet identifier 0 is a violation
    encoder_refuses_id_on_qos0: bool = True  # the encoder refuses a QoS 0 packet with one
    rl_counts_id: bool = True  # the encoder's Remaining Length includes the identifier
    rl_counts_topic_prefix: bool = True  # ... and the topic name's two length bytes
    # --- topic name
    nul_check: bool = True  # U+0000 is judged (by edition and reading)
    wildcards: tuple[int, ...] = (0x2B, 0x23)  # "+" and "#"
    topic_max_chars: int = 32_767  # the 3.1 limit (reading topic-length)
    discouraged_del: bool = True  # U+007F counts among the discouraged control characters
    # --- MQTT 5.0
    type15_reserved_in_50: bool = False  # AUTH (15) taken as reserved, as in 3.1.1 (a bug)
    ack_flags_in_50: bool = True  # 5.0 judges the acknowledgements' flags [MQTT-2.1.3-1]
    reason_codes: tuple[tuple[str, tuple[int, ...]], ...] = STANDARD_REASON_CODES
    ack_short_reason: int = 0x00  # the Reason Code of an acknowledgement with RL 2
    ack_encode_short: bool = True  # the encoder writes RL 2 for a success without properties
    ack_encode_drops_empty_properties: bool = True  # ... and RL 3 when there are none
    subscription_id_reject_zero: bool = True  # Subscription Identifier 0 is a violation
    properties: tuple[tuple[int, str], ...] = STANDARD_PROPERTIES
    length_prefix_big_endian: bool = True  # a string's two-byte length, MSB first
    once_by_reading: tuple[int, ...] = ONCE_BY_READING  # PFI and MEI: once (pfi-mei-once)
    payload_utf8_when: int = 1  # the Payload Format Indicator that makes the payload UTF-8


#: The model itself.
MODEL = Codec()
