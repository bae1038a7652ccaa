"""The variant a wire-format encoding is built for: the model, or the model with one bug.

Every Z3 encoding of the wire format takes a :class:`Codec`. Its defaults are what
:mod:`pubproof.model.wire` does; each field is one place where a codec can plausibly go
wrong, so that a mutant is ``replace(MODEL, field=broken value)`` and runs through exactly
the same encoding and the same proof as the model.
"""

from __future__ import annotations

from dataclasses import dataclass


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


#: The model itself.
MODEL = Codec()
