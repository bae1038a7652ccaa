"""The driver of gmqtt (an asyncio MQTT client) for ``pubproof probe-client`` (the
protocol: :mod:`pubproof.probe.clients.driver`). gmqtt speaks MQTT 3.1.1 and 5.0, not 3.1.
MQTT 5.0: the client's limits and Session Expiry Interval in CONNECT, each message's
properties both ways (gmqtt's names: ``payload_format_id``, ``user_property``, ...)."""

from __future__ import annotations

import asyncio
import sys
from importlib.metadata import version
from typing import Any

from gmqtt import Client  # type: ignore[import-untyped]
from gmqtt.mqtt.constants import MQTTv50, MQTTv311  # type: ignore[import-untyped]

from pubproof.probe.drivers.common import message, plan, say
from pubproof.probe.drivers.common50 import to_library

#: a P property key -> gmqtt's name
NAMES = {
    "payload_format_indicator": "payload_format_id",
    "message_expiry_interval": "message_expiry_interval",
    "topic_alias": "topic_alias",
    "response_topic": "response_topic",
    "correlation_data_hex": "correlation_data",
    "user_properties": "user_property",
    "content_type": "content_type",
    "subscription_identifiers": "subscription_identifier",
}


def from_gmqtt(properties: dict[str, Any]) -> dict[str, Any]:
    """gmqtt's properties of a received message (each a list of values) in the P form."""
    out: dict[str, Any] = {}
    for key, name in NAMES.items():
        values = properties.get(name)
        if values is None or key == "topic_alias":
            continue
        values = list(values) if isinstance(values, list | tuple) else [values]
        if key == "user_properties":
            out[key] = [[str(n), str(v)] for n, v in values]
        elif key == "subscription_identifiers":
            out[key] = values
        elif key == "correlation_data_hex":
            out[key] = bytes(values[0]).hex()
        else:
            out[key] = values[0]
    return out


async def run() -> None:
    p = plan()
    say("hello", library="gmqtt", version=version("gmqtt"))
    v5 = p["edition"] == "5.0"
    extra: dict[str, Any] = {}
    if v5:
        if p.get("session_expiry_interval") is not None:
            extra["session_expiry_interval"] = p["session_expiry_interval"]
        extra.update(p.get("limits", {}))
    client = Client(p["client_id"], clean_session=p["clean_session"], **extra)
    client.set_config({"reconnect_retries": 1000, "reconnect_delay": 0.2})
    first = [True]

    def on_connect(c: Client, flags: Any, rc: Any, properties: Any) -> None:
        say("connected")
        if first[0]:
            first[0] = False
            for s in p["subscribe"]:
                c.subscribe(s["topic"], qos=s["qos"])
            for index, m in enumerate(p["publish"]):
                properties = to_library(m.get("properties") or {}, NAMES) if v5 else {}
                try:
                    c.publish(
                        m["topic"], bytes.fromhex(m["payload_hex"]), qos=m["qos"],
                        retain=m["retain"], **properties,
                    )  # fmt: skip
                except Exception as refused:  # the library's own refusal, named
                    say(
                        "publish-refused",
                        index=index,
                        message=f"{type(refused).__name__}: {refused}",
                    )

    def on_message(c: Client, topic: str, payload: bytes, qos: int, properties: Any) -> int:
        got = properties if isinstance(properties, dict) else {}
        retain = bool(got.get("retain"))
        if not v5:
            message(topic, qos, retain, payload)
            return 0
        say(
            "message", topic=topic, qos=qos, retain=retain, payload_hex=bytes(payload).hex(),
            properties=from_gmqtt(got),
        )  # fmt: skip
        return 0

    def on_subscribe(c: Client, mid: int, qos: Any, properties: Any) -> None:
        say("subscribed")

    def on_disconnect(c: Client, packet: Any, exc: Any = None) -> None:
        say("connection-lost")

    client.on_connect = on_connect
    client.on_message = on_message
    client.on_subscribe = on_subscribe
    client.on_disconnect = on_disconnect
    protocol = MQTTv50 if v5 else MQTTv311
    await client.connect(p["host"], p["port"], keepalive=p["keepalive"], version=protocol)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # until standard input closes
    await client.disconnect()


def main() -> None:
    if plan()["edition"] not in ("3.1.1", "5.0"):
        say("hello", library="gmqtt", version=version("gmqtt"))
        say("unsupported", message="gmqtt speaks MQTT 3.1.1 and 5.0 only")
        return
    asyncio.run(run())


if __name__ == "__main__":
    main()
