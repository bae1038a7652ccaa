"""MQTT 5.0 on the wire, for the live 5.0 pipeline test: a raw 5.0 client over a socket,
the bytes of valid and faulty 5.0 packets, and the map from the properties' JSON keys to
their identifiers (a helper module, not a test module).

The faulty packets are built by hand (the codec refuses to encode them); the rule each
breaks is never written here: :func:`wire_rule` asks the project's codec, with the limits
the receiving broker declared.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pubproof.model.editions import Edition, Limits
from pubproof.model.properties50 import PROPERTIES
from pubproof.model.wire import encode_remaining_length
from pubproof.reference import Decoder, ProtocolError
from support.tshark_decode import tshark

#: MQTT 5.0 Table 2-4: the properties' identifiers, by the key ``pubproof`` gives them
PROPERTY_IDS = {row.key: row.identifier for row in PROPERTIES}


def string(text: str) -> bytes:
    data = text.encode("utf-8")
    return len(data).to_bytes(2, "big") + data


def packet(first: int, body: bytes) -> bytes:
    return bytes((first,)) + encode_remaining_length(len(body)) + body


def vbi(value: int) -> bytes:
    """A Variable Byte Integer in its shortest form."""
    return encode_remaining_length(value)


def connect5(client_id: str, properties: bytes = b"") -> bytes:
    """A 5.0 CONNECT: protocol "MQTT" level 5, Clean Start, Keep Alive 60."""
    body = string("MQTT") + bytes((5, 0x02)) + (60).to_bytes(2, "big")
    return packet(0x10, body + vbi(len(properties)) + properties + string(client_id))


def publish5(
    topic: str,
    payload: bytes,
    properties: bytes,
    *,
    qos: int = 0,
    packet_id: int = 1,
    property_length: bytes | None = None,
) -> bytes:
    """A 5.0 PUBLISH with the property section's bytes as given (``property_length``: its
    encoding, the shortest when None)."""
    body = string(topic) + (packet_id.to_bytes(2, "big") if qos else b"")
    length = vbi(len(properties)) if property_length is None else property_length
    return packet(0x30 | qos << 1, body + length + properties + payload)


def alias(value: int) -> bytes:
    """A Topic Alias property."""
    return bytes((PROPERTY_IDS["topic_alias"],)) + value.to_bytes(2, "big")


def content_type(text: str) -> bytes:
    return bytes((PROPERTY_IDS["content_type"],)) + string(text)


def wire_rule(data: bytes, limits: Limits) -> str:
    """The rule id the project's codec gives the (single, faulty) 5.0 packet ``data`` under
    its receiver's ``limits``."""
    decoder = Decoder(edition=Edition.V50, limits=limits)
    decoder.feed(data)
    try:
        packets = list(decoder)
        decoder.close()
    except ProtocolError as error:
        return error.rule
    raise AssertionError(f"the codec accepts {data.hex()} as {packets}")


@dataclass(slots=True)
class Raw5:
    """A 5.0 client on a raw socket: CONNECT sent, CONNACK read (its properties kept)."""

    sock: socket.socket
    connack: bytes
    received: bytearray = field(default_factory=bytearray)

    @classmethod
    def open(cls, port: int, client_id: str, properties: bytes = b"") -> Raw5:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(connect5(client_id, properties))
        data = b""
        while len(data) < 2 or len(data) < _size(data):
            chunk = sock.recv(4096)
            assert chunk, "the broker closed before its CONNACK"
            data += chunk
        size = _size(data)
        assert data[0] == 0x20, data.hex()
        raw = cls(sock=sock, connack=data[:size])
        raw.received += data[size:]
        return raw

    @property
    def port(self) -> int:
        port: int = self.sock.getsockname()[1]
        return port

    def connack_property(self, ident: int) -> int | None:
        """A one-, two- or four-byte integer property of the CONNACK (None: absent)."""
        sizes = {0x21: 2, 0x22: 2, 0x24: 1, 0x25: 1, 0x27: 4, 0x28: 1, 0x29: 1, 0x2A: 1,
                 0x11: 4, 0x13: 2}  # fmt: skip
        body = self.connack[2:]  # a CONNACK's Remaining Length is one byte here
        length, pos = body[2], 3
        end = pos + length
        found = None
        while pos < end:
            ident_here = body[pos]
            if ident_here in sizes:
                size = sizes[ident_here]
                value = int.from_bytes(body[pos + 1 : pos + 1 + size], "big")
                if ident_here == ident:
                    found = value
                pos += 1 + size
            else:  # a string property (Assigned Client Identifier, Reason String...)
                size = int.from_bytes(body[pos + 1 : pos + 3], "big")
                pos += 3 + size
        return found

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def drain(self, seconds: float) -> bytes:
        """Read for up to ``seconds`` (less if the broker closes); what arrived."""
        end = time.monotonic() + seconds
        self.sock.settimeout(0.1)
        while time.monotonic() < end:
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                break
            if not chunk:
                break
            self.received += chunk
        return bytes(self.received)

    def close(self) -> None:
        self.sock.close()


def _size(data: bytes) -> int:
    value, shift, pos = 0, 0, 1
    while pos < len(data):
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if not byte & 0x80:
            return pos + value
        shift += 7
    return 1 << 30


# -- tshark's own MQTT 5.0 decoding -----------------------------------------------------------

#: the Reason Code field tshark gives each packet type that carries one
REASON_FIELDS = {
    2: "mqtt.connack.reason_code", 4: "mqtt.puback.reason_code", 5: "mqtt.pubrec.reason_code",
    6: "mqtt.pubrel.reason_code", 7: "mqtt.pubcomp.reason_code",
    14: "mqtt.disconnect.reason_code", 15: "mqtt.auth.reason_code",
}  # fmt: skip
TYPE_NAMES = {
    1: "CONNECT", 2: "CONNACK", 3: "PUBLISH", 4: "PUBACK", 5: "PUBREC", 6: "PUBREL",
    7: "PUBCOMP", 8: "SUBSCRIBE", 9: "SUBACK", 10: "UNSUBSCRIBE", 11: "UNSUBACK",
    12: "PINGREQ", 13: "PINGRESP", 14: "DISCONNECT", 15: "AUTH",
}  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Pdu5:
    """One MQTT packet as tshark decodes it (``-T json --no-duplicate-keys``), in the frame
    that carries its last byte."""

    frame: int
    src_port: int
    layer: dict[str, Any]

    @property
    def msgtype(self) -> int:
        return int(self.layer["mqtt.hdrflags_tree"]["mqtt.msgtype"])


def _listed(value: Any) -> list[Any]:
    """A field tshark gives once as a value and several times as a list."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def tshark_pdus5(path: Path | str, options: list[str]) -> list[Pdu5]:
    """Every MQTT packet tshark decodes in the capture, in order."""
    argv = [tshark(), "-r", str(path), "-n", "-T", "json", "--no-duplicate-keys",
            "-J", "frame tcp mqtt", *options]  # fmt: skip
    result = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    pdus: list[Pdu5] = []
    for frame in json.loads(result.stdout):
        layers = frame["_source"]["layers"]
        for layer in _listed(layers.get("mqtt")):
            pdus.append(
                Pdu5(
                    frame=int(_listed(layers["frame"]["frame.number"])[0]),
                    src_port=int(_listed(layers["tcp"]["tcp.srcport"])[0]),
                    layer=layer,
                )
            )
    return pdus


def tshark_row(pdu: Pdu5) -> dict[str, Any]:
    """tshark's decoding in the ``packets`` table's terms (only what both tell): the type,
    a PUBLISH's flags, topic (its alias resolved), packet identifier and payload length, an
    acknowledgement's packet identifier, the Reason Code, the Topic Alias, the property
    identifiers (sorted, each as often as it occurs) and the User Properties in order."""
    layer, kind = pdu.layer, pdu.msgtype
    row: dict[str, Any] = {"type": TYPE_NAMES[kind]}
    section = layer.get("mqtt.properties") or {}
    if kind == 3:
        flags = layer["mqtt.hdrflags_tree"]
        qos = int(flags["mqtt.qos"])
        topic_len = int(layer["mqtt.topic_len"])
        property_len = int(section.get("mqtt.property_len", 0))
        header = 2 + topic_len + (2 if qos else 0) + len(vbi(property_len)) + property_len
        row |= {
            "qos": qos, "dup": flags["mqtt.dupflag"] in ("1", "True"),
            "retain": flags["mqtt.retain"] in ("1", "True"), "topic": layer.get("mqtt.topic", ""),
            "packet_id": int(layer["mqtt.msgid"]) if qos else None,
            "payload_len": int(layer["mqtt.len"]) - header,
        }  # fmt: skip
    elif 4 <= kind <= 7:
        row["packet_id"] = int(layer["mqtt.msgid"])
    if kind in REASON_FIELDS:
        # the short forms (no Reason Code on the wire) mean 0x00
        row["reason_code"] = int(layer.get(REASON_FIELDS[kind], 0))
    if kind in (1, 2, 3, 4, 5, 6, 7, 8, 10, 14, 15):
        alias = section.get("mqtt.property.topic_alias")
        row["topic_alias"] = None if alias is None else int(alias)
        row["property_ids"] = sorted(int(i, 16) for i in _listed(section.get("mqtt.property_id")))
        row["user_properties"] = [
            [k, v]
            for k, v in zip(
                _listed(section.get("mqtt.prop_key")),
                _listed(section.get("mqtt.prop_value")),
                strict=True,
            )
        ]
    return row


def pipeline_row(row: dict[str, Any]) -> dict[str, Any]:
    """A ``packets`` row in :func:`tshark_row`'s terms."""
    kind = row["type"]
    out: dict[str, Any] = {"type": kind}
    if kind == "PUBLISH":
        out |= {k: row[k] for k in ("qos", "dup", "retain", "topic", "payload_len")}
    if kind in ("PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP"):
        out["packet_id"] = None if row["packet_id"] is None else int(row["packet_id"])
    if kind in ("CONNACK", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP", "DISCONNECT", "AUTH"):
        out["reason_code"] = row["reason_code"]
    if kind in ("CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP",
                "SUBSCRIBE", "UNSUBSCRIBE", "DISCONNECT", "AUTH"):  # fmt: skip
        # a packet the codec rejects has no properties decoded (null)
        properties = json.loads(row["properties"] or "{}")
        out["topic_alias"] = row["topic_alias"]
        ids = []
        for key, value in properties.items():
            ids += [PROPERTY_IDS[key]] * (len(value) if isinstance(value, list) else 1)
        out["property_ids"] = sorted(ids)
        out["user_properties"] = properties.get("user_properties", [])
    return out
