"""A CONNECT, read and judged as a server takes it: the edition it names, the session it
asks for, its will, and why a broker refuses it.

Rules / theory of operation
---------------------------
The protocol name and level come first (3.1.1 section 3.1.2.1, 3.1.2.2): ``MQIsdp`` at
level 3 is MQTT 3.1, ``MQTT`` at 4 is 3.1.1, ``MQTT`` at 5 is 5.0. A level the broker does
not serve is answered with CONNACK return code 0x01 in the 3.x format (a 3.x client reads
nothing else; 5.0 [MQTT-3.1.2-2] lets the server answer 0x84 instead, which only a 5.0
client reads: serve sends 0x84 to a CONNECT of level 5 it does not serve, 0x01 to the
others). The fields are then read in the order of 3.1.3: Client Identifier, the will
(5.0: its properties first), User Name, Password. A 5.0 CONNECT is described by
:func:`pubproof.judge.packets50.describe` (properties judged by the model's property
reader); a 3.x one by :func:`pubproof.judge.packets.describe` for the judges' view, and
here for what that description leaves out (the flags, the will).

The refusals, in the order a reader meets them (:data:`pubproof.probe.serve.rules`):
protocol name, protocol level, the reserved flag [MQTT-3.1.2-3], the will's flags, the
password flag (3.1.1 [MQTT-3.1.2-22]), a field that runs past the end, and the Client
Identifier ([MQTT-3.1.3-8]; 3.1: 1 to 23 characters).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pubproof.judge import packets, packets50
from pubproof.model.editions import Edition
from pubproof.probe.serve import rules as S
from pubproof.probe.serve.rules import ServeRule

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
#: (protocol name, level) -> the edition
PROTOCOLS = {("MQIsdp", 3): V31, ("MQTT", 4): V311, ("MQTT", 5): V50}
RESERVED, CLEAN, WILL, WILL_QOS, WILL_RETAIN = 0x01, 0x02, 0x04, 0x18, 0x20
PASSWORD, USER_NAME = 0x40, 0x80
#: MQTT 3.1: "The Client Identifier (Client ID) is between 1 and 23 characters long"
MAX_CLIENT_ID_31 = 23


@dataclass(frozen=True, slots=True, kw_only=True)
class Will:
    """The Will Message a CONNECT carries."""

    topic: str
    payload: bytes
    qos: int
    retain: bool
    properties: dict[str, Any] = field(default_factory=dict)  # 5.0, P's form

    @property
    def delay(self) -> int:
        """5.0: the Will Delay Interval, seconds (0 when absent)."""
        value = self.properties.get("will_delay_interval", 0)
        return value if isinstance(value, int) else 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectRequest:
    """A CONNECT the broker can act on."""

    edition: Edition
    client_id: str
    clean: bool  # CleanSession (3.x) or Clean Start (5.0)
    keep_alive: int
    properties: dict[str, Any]  # 5.0, P's form ({} in 3.x)
    will: Will | None
    described: dict[str, Any]  # the judges' description of the CONNECT

    @property
    def session_expiry_interval(self) -> int:
        """5.0: the Session Expiry Interval asked for (absent: 0)."""
        value = self.properties.get("session_expiry_interval", 0)
        return value if isinstance(value, int) else 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Refusal:
    """Why the broker refuses a CONNECT, and how it answers: a CONNACK with ``code`` in
    ``answer_edition``'s format (None: close without CONNACK)."""

    rule: ServeRule
    message: str
    edition: Edition | None  # the edition the CONNECT named, if it named a served one
    code: int | None
    answer_edition: Edition = V311
    described: dict[str, Any] = field(default_factory=dict)


class _Short(Exception):
    pass


class _Reader:
    def __init__(self, body: bytes) -> None:
        self.body, self.pos = body, 0

    def byte(self) -> int:
        if self.pos >= len(self.body):
            raise _Short("the CONNECT ends early")
        self.pos += 1
        return self.body[self.pos - 1]

    def u16(self) -> int:
        return self.byte() << 8 | self.byte()

    def binary(self) -> bytes:
        size = self.u16()
        if self.pos + size > len(self.body):
            raise _Short("a field of the CONNECT runs past its end")
        self.pos += size
        return self.body[self.pos - size : self.pos]

    def string(self) -> str:
        try:
            return self.binary().decode("utf-8")
        except UnicodeDecodeError:
            raise _Short("a string of the CONNECT is not UTF-8") from None


def read_connect(first: int, body: bytes, served: tuple[Edition, ...]) -> ConnectRequest | Refusal:
    """The CONNECT of fixed-header byte ``first`` and ``body`` (after the Remaining
    Length), for a broker serving ``served``."""
    reader = _Reader(body)
    try:
        name = reader.string()
        level = reader.byte()
    except _Short as short:
        return Refusal(rule=S.CONNECT_MALFORMED, message=str(short), edition=None, code=None)
    edition = PROTOCOLS.get((name, level))
    if name not in ("MQTT", "MQIsdp"):
        # [MQTT-3.1.2-1] the server MAY disconnect the client: it does, without CONNACK
        return Refusal(rule=S.PROTOCOL_NAME, message=f"protocol name {name!r}", edition=None,
                       code=None)  # fmt: skip
    if edition is None or edition not in served:
        answer = V50 if level == 5 else V311
        code = S.PROTOCOL_LEVEL.reason_code if answer is V50 else S.PROTOCOL_LEVEL.connack
        what = f"protocol {name!r} level {level}"
        return Refusal(rule=S.PROTOCOL_LEVEL, message=f"{what} is not served", edition=None,
                       code=code, answer_edition=answer)  # fmt: skip
    if first & 0x0F:
        message = f"CONNECT flags {first & 0x0F:04b} in the fixed header (reserved: 0000)"
        return _refuse(S.FLAGS, message, edition, close=True)
    if edition is V50:
        return _connect50(first, body, reader.pos)
    return _connect3(first, body, reader, edition)


def _refuse(
    rule: ServeRule, message: str, edition: Edition, *, close: bool = False,
    described: dict[str, Any] | None = None,
) -> Refusal:  # fmt: skip
    """A refusal answered by a CONNACK with the rule's code, or by closing (``close``:
    what the text says of a malformed CONNECT in 3.x, and 5.0's Malformed Packet, which a
    server MAY answer with CONNACK 0x81 before closing)."""
    if edition is V50:
        return Refusal(rule=rule, message=message, edition=edition, code=rule.reason_code,
                       answer_edition=V50, described=described or {})  # fmt: skip
    code = None if close or rule.connack is None else rule.connack
    return Refusal(rule=rule, message=message, edition=edition, code=code,
                   answer_edition=edition, described=described or {})  # fmt: skip


def _flags_problem(flags: int, edition: Edition) -> tuple[ServeRule, str] | None:
    if flags & RESERVED:
        return S.RESERVED_FLAG, "the reserved bit of the CONNECT flags is 1"
    will_qos = (flags & WILL_QOS) >> 3
    if not flags & WILL and (will_qos or flags & WILL_RETAIN):
        return S.WILL_FLAGS, "Will QoS or Will Retain set without the Will Flag"
    if will_qos == 3:
        return S.WILL_FLAGS, "Will QoS 3"
    if edition is not V50 and flags & PASSWORD and not flags & USER_NAME:
        return S.PASSWORD_FLAG, "the Password Flag without the User Name Flag"
    return None


def _connect3(
    first: int, body: bytes, reader: _Reader, edition: Edition
) -> ConnectRequest | Refusal:
    described = packets.describe(first, body)
    try:
        flags = reader.byte()
        problem = _flags_problem(flags, edition)
        if problem is not None:
            return _refuse(*problem, edition, close=True, described=described)
        keep_alive = reader.u16()
        client_id = reader.string()
        will = None
        if flags & WILL:
            topic = reader.string()
            payload = reader.binary()
            will = Will(topic=topic, payload=payload, qos=(flags & WILL_QOS) >> 3,
                        retain=bool(flags & WILL_RETAIN))  # fmt: skip
        if flags & USER_NAME:
            reader.string()
        if flags & PASSWORD:
            reader.binary()
        if reader.pos != len(body):
            raise _Short(f"{len(body) - reader.pos} byte(s) after the last field of the CONNECT")
    except _Short as short:
        return _refuse(S.CONNECT_MALFORMED, str(short), edition, close=True, described=described)
    clean = bool(flags & CLEAN)
    if edition is V31 and not 1 <= len(client_id) <= MAX_CLIENT_ID_31:
        message = f"a Client Identifier of {len(client_id)} characters"
        return _refuse(S.CLIENT_ID_31, message, edition, described=described)
    if not client_id and not clean:
        # [MQTT-3.1.3-8] "If the Client supplies a zero-byte ClientId with CleanSession set
        # to 0, the Server MUST respond to the CONNECT Packet with a CONNACK return code
        # 0x02 (Identifier rejected) and then close the Network Connection"
        return _refuse(S.CLIENT_ID, "a zero-byte Client Identifier with CleanSession 0",
                       edition, described=described)  # fmt: skip
    return ConnectRequest(
        edition=edition, client_id=client_id, clean=clean, keep_alive=keep_alive,
        properties={}, will=will, described=described,
    )  # fmt: skip


def _connect50(first: int, body: bytes, at: int) -> ConnectRequest | Refusal:
    described = packets50.describe(first, body)
    flags = body[at] if at < len(body) else 0
    if "error" in described:
        error = described["error"]
        rule_id = error.get("rule")
        message = str(error.get("message"))
        if rule_id:
            message = f"{message} [{rule_id}]"
        return _refuse(S.CONNECT_MALFORMED, message, V50, close=True, described=described)
    problem = _flags_problem(flags, V50)
    if problem is not None:
        return _refuse(*problem, V50, close=True, described=described)
    properties = dict(described.get("properties") or {})
    if "authentication_method" in properties:
        return _refuse(S.AUTHENTICATION, "an Authentication Method (serve has none)", V50,
                       described=described)  # fmt: skip
    given = described.get("will")
    will = None
    if given is not None:
        will = Will(topic=str(given["topic"]), payload=bytes.fromhex(given["payload_hex"]),
                    qos=int(given["qos"]), retain=bool(given["retain"]),
                    properties=dict(given.get("properties") or {}))  # fmt: skip
    return ConnectRequest(
        edition=V50, client_id=str(described["client_id"]),
        clean=bool(described["clean_start"]), keep_alive=int(described["keep_alive"]),
        properties=properties, will=will, described=described,
    )  # fmt: skip
