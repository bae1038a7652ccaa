"""The wire-format theorems: importing this module registers them all.

Each theorem is unbounded over the values it speaks of (Z3 bit-vectors, not samples) and
each Z3 encoding is cross-checked against :mod:`pubproof.model.wire` on the witnesses Z3
finds and on a fixed sample, so that the encoding cannot drift from the model:

- :mod:`~pubproof.proofs.wire_rl`: the Remaining Length is inverse, minimal, bounded to
  268,435,455 and prefix-free (framing is unique)
- :mod:`~pubproof.proofs.wire_first_byte`: the exact sets of valid first bytes
- :mod:`~pubproof.proofs.wire_publish`: the packet identifier's presence, and the
  Remaining Length of a PUBLISH as the sum of its fields
- :mod:`~pubproof.proofs.wire_readings`: witnesses where editions and readings part
- :mod:`~pubproof.proofs.wire50_vbi`, :mod:`~pubproof.proofs.wire50_properties`,
  :mod:`~pubproof.proofs.wire50_ack`: MQTT 5.0's Property Length and Subscription
  Identifier, the property section's unique parse, the acknowledgements' Reason Codes and
  their shortest forms; :mod:`~pubproof.proofs.wire50_editions`: witnesses where 5.0 parts
  from 3.1.1 and 3.1

Each comes with mutants (a broken variant of the encoding) that its check must kill.
"""

from __future__ import annotations

# isort: off
# Import order is registration order, which is the order of every report: the field that
# frames packets first, then the first byte, the PUBLISH fields, the editions and readings.
from pubproof.proofs.wire_rl import rl_inverse, rl_max, rl_minimal, rl_prefix_free
from pubproof.proofs.wire_first_byte import first_bytes
from pubproof.proofs.wire_publish import packet_id_presence, publish_remaining_length
from pubproof.proofs.wire_readings import READING_THEOREMS, editions_agree
from pubproof.proofs.wire50_vbi import property_length, subscription_identifier
from pubproof.proofs.wire50_properties import property_section
from pubproof.proofs.wire50_ack import ack_reason_codes, ack_success_forms
from pubproof.proofs.wire50_editions import editions_agree_50
# isort: on

WIRE_THEOREMS = [
    rl_inverse,
    rl_minimal,
    rl_max,
    rl_prefix_free,
    first_bytes,
    packet_id_presence,
    publish_remaining_length,
    editions_agree,
    *READING_THEOREMS,
    property_length,
    subscription_identifier,
    property_section,
    ack_reason_codes,
    ack_success_forms,
    editions_agree_50,
]

#: The order of a run (catalog.load), whatever imported a theorem module first.
THEOREM_ORDER = WIRE_THEOREMS

__all__ = ["THEOREM_ORDER", "WIRE_THEOREMS"]
