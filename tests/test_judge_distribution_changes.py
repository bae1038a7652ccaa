"""The distribution judge's sessions' changes (``judge.distribution_records.Changes``): which
changes were under way while a message was in flight, as the plain reading of every change
says (asked no later than the message was owned, not answered before it was received)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pubproof.judge.distribution_records import Changes

#: a step: a client asks (True) or its changes are answered (False); or a message in flight
#: (received, owned) is asked about
_STEP = st.one_of(
    st.tuples(st.just("change"), st.sampled_from("abc"), st.booleans()),
    st.tuples(st.just("message"), st.integers(0, 30), st.integers(0, 30)),
)


def _plain(every: list[tuple[str, int, int | None]], received: int, owned: int) -> set[str]:
    """The reading of every change, one by one: (client, asked at, answered at)."""
    return {
        client for client, since, until in every
        if since <= owned and (until is None or until >= received)
    }  # fmt: skip


@given(st.lists(_STEP, max_size=40))
def test_the_changes_during_a_message_are_those_every_change_read_gives(
    steps: list[tuple[str, object, object]],
) -> None:
    changes = Changes()
    every: list[tuple[str, int, int | None]] = []  # (client, asked at, answered at)
    for order, (kind, first, second) in enumerate(steps, 1):
        if kind == "change":
            client, asking = str(first), bool(second)
            if asking:
                changes.asked(client, order)
                every.append((client, order, None))
            else:
                changes.answered_at(client, order)
                every = [
                    (c, since, order if c == client and until is None else until)
                    for c, since, until in every
                ]
        else:
            received, owned = sorted((int(str(first)), int(str(second))))
            assert changes.during(received, owned) == _plain(every, received, owned)


def test_a_change_answered_as_the_message_is_received_was_under_way() -> None:
    """The bounds: a change asked as the message is owned, or answered as it is received,
    was under way; one answered before, or asked after, was not."""
    changes = Changes()
    changes.asked("a", 1)
    changes.asked("b", 2)
    changes.answered_at("b", 4)  # before it is received
    changes.answered_at("a", 5)  # as it is received
    changes.asked("c", 8)  # as it is owned
    changes.asked("d", 9)  # after
    changes.answered_at(None, 9)  # (a link with no client: nothing)
    assert changes.during(5, 8) == {"a", "c"}
    assert changes.during(5, 9) == {"a", "c", "d"}
    assert changes.during(3, 8) == {"a", "b", "c"}
