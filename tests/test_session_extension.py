"""The 5.0 session model extends the 3.x one: :class:`SessionModel50` is a
:class:`SessionModel` whose state per packet identifier, allocation and bookkeeping are the
base's own (not copies), and both ends allocate identifiers alike (the next unused one
after the last, wrapping from 65535 to 1) [MQTT-2.3.1-2]. The stateful tests
(``test_session_stateful.py``, ``test_session50_stateful.py``) hold each model equal to
its reference session; these hold what they cannot reach in a few dozen steps."""

from __future__ import annotations

import pytest

from pubproof.model.flows import Method
from pubproof.model.session import Outgoing, Output, SessionModel
from pubproof.model.session50 import Output50, SessionModel50


def test_the_50_session_is_a_session() -> None:
    end = SessionModel50(Method.A, receive_maximum=3)
    assert isinstance(end, SessionModel) and end.method is Method.A
    assert issubclass(Output50, Output)
    for shared in ("_allocate", "_move", "_set_incoming"):
        assert getattr(SessionModel50, shared) is getattr(SessionModel, shared), shared
    end.publish("a", b"x", 1)
    assert [type(flow) for flow in end.outgoing.values()] == [Outgoing]
    assert end.snapshot().keys() == {"outgoing", "incoming", "quota", "alias_in", "alias_out"}


@pytest.mark.parametrize("make", [SessionModel, SessionModel50], ids=["3.x", "5.0"])
def test_allocation_wraps_and_skips_identifiers_in_use(make: type[SessionModel]) -> None:
    end = make()
    first = end.publish("a", b"x", 1)[0].packet
    assert first is not None and first["packet_id"] == 1
    end.last_id = 65534
    ids = []
    for _ in range(3):  # 65535, then 1 is in use: 2, then 3
        packet = end.publish("a", b"x", 2)[0].packet
        assert packet is not None
        ids.append(packet["packet_id"])
    assert ids == [65535, 2, 3]
    assert list(end.outgoing) == [1, 65535, 2, 3]
