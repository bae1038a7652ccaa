"""A connection's judgement: the link judge fed, the close judge set watching, findings
written as violation rows.

:class:`ConnectionJudging` (see :mod:`.connection_state` for the stack of classes) takes
each packet the classes above it have described: :meth:`~ConnectionJudging._judge` (3.1,
3.1.1) and :meth:`~ConnectionJudging._judge5` (5.0) note it in the evidence trail
(:mod:`.trail`) and feed it to the link judge of both ends (:mod:`.fast.ends`); a finding's
evidence is built only then, from the packet identifier's last packets. A packet the model
rejects (:meth:`~ConnectionJudging._offence`), or that the 5.0 link judge says its receiver
must close the connection on (:meth:`~ConnectionJudging._flow_offence`), sets the close judge
(:mod:`pubproof.judge.close`) watching what its receiver does next; its findings are written
at the end (:meth:`~ConnectionJudging._closing_findings`). Each finding is a
:class:`.ViolationRow` about the end that sent the packet (:meth:`~ConnectionJudging._violation`).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping
from typing import Any, Final

from pubproof.judge.cited import FlowOffence
from pubproof.judge.close import CloseJudge, Seen
from pubproof.judge.findings import DEVIATION, TOLERATED
from pubproof.judge.packets import FLOW_TYPES
from pubproof.model.editions import Edition
from pubproof.pipeline.connection_state import ConnectionState
from pubproof.pipeline.fast.ends import C2S, S2C
from pubproof.pipeline.fast.layout import as_dict
from pubproof.pipeline.rows import ViolationRow
from pubproof.pipeline.trail import Recent

#: the packets whose packet identifier the evidence trail follows (the PUBLISH family), bound
#: Final: the compiled module reads it from a C variable, not the module's dictionary
_FLOW_TYPES: Final = FLOW_TYPES


class ConnectionJudging(ConnectionState):
    """The judges of one connection fed, and their findings written."""

    def _judge(
        self,
        direction: str,
        frame: int,
        offset: int,
        kind: str,
        packet_id: int | None,
        fields: Mapping[str, Any],
        shown: Mapping[str, Any],
        payload_len: int | None,
        head: bytes,
    ) -> None:
        """Judge one packet: ``fields`` for the judge, ``shown`` (the same without the
        payload) and ``head`` (:func:`.payload_head`) for the evidence."""
        recent = Recent(direction, frame, offset, shown, payload_len, head)
        trail: deque[Recent] | None = None
        if packet_id is not None and kind in _FLOW_TYPES:
            trail = self.trail.note(packet_id, recent)
        assert self.judge is not None
        if self.edition is None:
            return
        found = self.judge.feed(direction, fields)
        if not found:
            return
        # the evidence is built only now: the packet's identifier's last packets, or itself
        evidence = self.trail.evidence(trail or (recent,))
        for finding in found:
            self._violation(
                direction,
                frame,
                offset,
                finding.verdict,
                finding.source,
                finding.rules,
                finding.message,
                evidence,
                finding.provoked,
            )

    def _judge5(
        self,
        direction: str,
        frame: int,
        offset: int,
        kind: str,
        packet_id: int | None,
        fields: Mapping[str, Any],
        shown: Mapping[str, Any],
        payload_len: int | None,
        head: bytes,
        data: bytes,
    ) -> None:
        """:meth:`_judge` for a 5.0 connection (``data``: the packet's bytes): also a
        packet whose receiver the link judge says must close the connection (Receive
        Maximum exceeded, an alias out of bounds or unknown, a QoS above Maximum QoS,
        RETAIN without Retain Available) is handed to the close judge, which watches what
        that receiver does next."""
        recent = Recent(direction, frame, offset, shown, payload_len, head)
        trail: deque[Recent] | None = None
        if packet_id is not None and kind in _FLOW_TYPES:
            trail = self.trail.note(packet_id, recent)
        judge = self.judge
        assert judge is not None
        given = as_dict(fields)  # a dict's look-up, not Mapping.get's method call
        found = judge.feed50(direction, given.get("type"), given)  # its judges are 5.0
        if not found:
            return
        offence = judge.offence
        if offence is not None:
            self._flow_offence(direction, frame, offset, shown, offence, data)
        # the evidence is built only now: the packet's identifier's last packets, or itself
        evidence = self.trail.evidence(trail or (recent,))
        for finding in found:
            self._violation(
                direction,
                frame,
                offset,
                finding.verdict,
                finding.source,
                finding.rules,
                finding.message,
                evidence,
                finding.provoked,
            )

    def _offence(self, seen: Seen, data: bytes, edition: Edition) -> None:
        """A PUBLISH-family packet the codec rejected: from now on, watch whether its
        receiver reads on (:mod:`pubproof.judge.close`)."""
        receiver = S2C if seen.direction == C2S else C2S
        # the answers its receiver owed before it
        owed = self._owed(receiver, seen.direction)
        if self.closing is None:
            self.closing = CloseJudge()
        if self.declared is None:
            self.closing.offence(seen, data, edition, self.readings, owed)
        else:  # 5.0: the model judges the packet with its receiver's limits
            limits = self.declared.negotiated.limits_for(seen.direction)
            self.closing.offence(seen, data, edition, self.readings, owed, limits=limits)

    def _owed(self, receiver: str, sender: str) -> list[tuple[str, int | None]]:
        """The answers ``receiver`` owed just now: the flow judge's, and the PINGREQs
        ``sender`` sent that are not yet answered."""
        assert self.judge is not None
        owed = self.judge.owed_by(receiver)
        owed += [("PINGRESP", None)] * max(0, self.pings[sender] - self.pings[receiver])
        return owed

    def _flow_offence(
        self,
        direction: str,
        frame: int,
        offset: int,
        shown: Mapping[str, Any],
        offence: FlowOffence,
        data: bytes,
    ) -> None:
        """5.0: a packet the link judge says its receiver must close the connection on
        (with the DISCONNECT Reason Code the model calls for): from now on, watch what the
        receiver does (:mod:`pubproof.judge.close`)."""
        receiver = S2C if direction == C2S else C2S
        if self.closing is None:
            self.closing = CloseJudge()
        # a QoS 1 or 2 PUBLISH's shown is its P (_packet5): the close judge's entries
        # show its fields without the judge's copy of the payload
        fields = {k: v for k, v in shown.items() if k != "payload_hex"}
        seen = Seen(direction=direction, frame=frame, offset=offset, fields=fields)
        self.closing.flow_offence(seen, offence, self._owed(receiver, direction), data)

    def _closing_findings(self) -> None:
        """At the end: a receiver that read on after a packet the model rejects (5.0: or
        whose DISCONNECT's Reason Code is not the one the model calls for)."""
        if self.closing is None or "gaps" in self.flags:
            return  # lost frames could have held the answer's cause or the close
        for offence, finding in self.closing.findings():
            # the offending packet, then the request and the answer that show its receiver
            # read on (or, 5.0, the receiver's DISCONNECT): the finding is at the last
            shown = CloseJudge.evidence(offence, finding)
            evidence = [
                self.trail.entry(s.direction, s.frame, s.offset, dict(s.fields)) for s in shown
            ]
            answer = shown[-1]
            if finding.verdict not in (TOLERATED, DEVIATION):
                self.flags.add("violations")
            self._violation(
                answer.direction,
                answer.frame,
                answer.offset,
                finding.verdict,
                finding.source,
                finding.rules,
                finding.message,
                evidence,
                finding.provoked,
            )

    def _violation(
        self,
        direction: str,
        frame: int,
        offset: int,
        kind: str,
        source: str,
        rules: tuple[str, ...],
        message: str,
        evidence: list[dict[str, Any]],
        provoked: tuple[str, ...] = (),
    ) -> None:
        """A finding about the end that sends ``direction``, by the judge ``source``:
        ``rules`` are that end's own duties, ``provoked`` what its peer broke to bring the
        finding about (:mod:`pubproof.model.duties`)."""
        role = "client" if direction == C2S else "server"
        if kind == TOLERATED:
            self.tolerated += 1
        elif kind == DEVIATION:
            self.deviations += 1
        else:
            self.violations += 1
        self.sink.violations.append(ViolationRow(
            self.capture, self.id, direction, frame, offset, rules[0] if rules else None,
            ",".join(rules), ",".join(provoked), kind, source, role, self._endpoint(role),
            message, json.dumps(evidence, sort_keys=True, ensure_ascii=False),
        ))  # fmt: skip

    def _endpoint(self, role: str) -> str:
        if role == "server":
            return f"{self.server[0]}:{self.server[1]}"
        return self.client_id if self.client_id else self.client[0]
