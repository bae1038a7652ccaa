"""Tests generated from the model: ``pubproof explore`` and a library for implementers.

``pubproof explore`` (:mod:`.explore`) drives a live broker with a few clients making moves
the model enables (:mod:`.moves`, :mod:`.world`), as a Hypothesis state machine
(:mod:`.machine`): every packet is judged by the probe's judges (:mod:`.verdicts`), every
failure shrunk to the fewest moves that still fail the same rule and written as a
reproducer with a standalone script (:mod:`.reproducer`, :mod:`.replayer`), and the run
ends with the coverage of the model's tables (:mod:`.coverage`).

For implementers who test in Python, the same generator as Hypothesis strategies, each
draw with the model's verdict, and the checks that run a decoder or a broker against them::

    from hypothesis import given
    from pubproof.model.editions import Edition
    from pubproof.testing import BrokerUnderTest, decoder_agrees, packets, steps

    @given(packets(Edition.V311))
    def test_my_decoder(packet):
        decoder_agrees(my_decode, packet)

    @given(steps(Edition.V311, clients=2))
    def test_my_broker(sequence):
        BrokerUnderTest("mqtt://127.0.0.1:1883").check(sequence)

The pytest fixtures ``pubproof_decoder`` and ``pubproof_broker`` are in
:mod:`.pytest_plugin`.
"""

from pubproof.testing.expectations import Expected, expect
from pubproof.testing.fixtures import BrokerUnderTest, decoder_agrees
from pubproof.testing.moves import Move, MoveKind, Plan
from pubproof.testing.strategies import Judged, Steps, judged, packets, steps

__all__ = [
    "BrokerUnderTest",
    "Expected",
    "Judged",
    "Move",
    "MoveKind",
    "Plan",
    "Steps",
    "decoder_agrees",
    "expect",
    "judged",
    "packets",
    "steps",
]
