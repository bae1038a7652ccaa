"""The driver of gmqtt (an asyncio MQTT client) for ``pubproof probe-client`` (the
protocol: :mod:`pubproof.probe.clients.driver`). gmqtt speaks MQTT 3.1.1 and 5.0, not 3.1."""

from __future__ import annotations

import asyncio
import sys
from importlib.metadata import version
from typing import Any

from gmqtt import Client  # type: ignore[import-untyped]
from gmqtt.mqtt.constants import MQTTv311  # type: ignore[import-untyped]

from pubproof.probe.drivers.common import message, plan, say


async def run() -> None:
    p = plan()
    say("hello", library="gmqtt", version=version("gmqtt"))
    client = Client(p["client_id"], clean_session=p["clean_session"])
    client.set_config({"reconnect_retries": 1000, "reconnect_delay": 0.2})
    first = [True]

    def on_connect(c: Client, flags: Any, rc: Any, properties: Any) -> None:
        say("connected")
        if first[0]:
            first[0] = False
            for s in p["subscribe"]:
                c.subscribe(s["topic"], qos=s["qos"])
            for m in p["publish"]:
                c.publish(
                    m["topic"], bytes.fromhex(m["payload_hex"]), qos=m["qos"], retain=m["retain"]
                )

    def on_message(c: Client, topic: str, payload: bytes, qos: int, properties: Any) -> int:
        retain = bool(properties.get("retain")) if isinstance(properties, dict) else False
        message(topic, qos, retain, payload)
        return 0

    def on_subscribe(c: Client, mid: int, qos: Any, properties: Any) -> None:
        say("subscribed")

    def on_disconnect(c: Client, packet: Any, exc: Any = None) -> None:
        say("connection-lost")

    client.on_connect = on_connect
    client.on_message = on_message
    client.on_subscribe = on_subscribe
    client.on_disconnect = on_disconnect
    await client.connect(p["host"], p["port"], keepalive=p["keepalive"], version=MQTTv311)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # until standard input closes
    await client.disconnect()


def main() -> None:
    if plan()["edition"] != "3.1.1":
        say("hello", library="gmqtt", version=version("gmqtt"))
        say("unsupported", message="gmqtt speaks MQTT 3.1.1 and 5.0 only")
        return
    asyncio.run(run())


if __name__ == "__main__":
    main()
