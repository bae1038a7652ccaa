"""The driver of paho-mqtt (Eclipse Paho's Python client, 2.x) for ``pubproof probe-client``.

The whole driver protocol (:mod:`pubproof.probe.clients.driver`) in one small program:
read the plan, connect, subscribe, publish, print what the application receives, and
reconnect when the connection is lost, until standard input closes.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from pubproof.probe.drivers.common import message, plan, say, until_stdin_closes


def main() -> None:
    p = plan()
    say("hello", library="paho-mqtt", version=version("paho-mqtt"))
    protocol = mqtt.MQTTv311 if p["edition"] == "3.1.1" else mqtt.MQTTv31
    client = mqtt.Client(
        CallbackAPIVersion.VERSION2,
        client_id=p["client_id"],
        clean_session=p["clean_session"],
        protocol=protocol,
    )
    client.reconnect_delay_set(min_delay=1, max_delay=1)
    first = [True]

    def on_connect(c: mqtt.Client, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        say("connected")
        if first[0]:
            first[0] = False
            for s in p["subscribe"]:
                c.subscribe(s["topic"], s["qos"])
            for m in p["publish"]:
                c.publish(m["topic"], bytes.fromhex(m["payload_hex"]), m["qos"], m["retain"])

    def on_subscribe(c: mqtt.Client, userdata: Any, mid: int, reasons: Any, props: Any) -> None:
        say("subscribed")

    def on_message(c: mqtt.Client, userdata: Any, msg: mqtt.MQTTMessage) -> None:
        message(msg.topic, msg.qos, msg.retain, bytes(msg.payload))

    def on_disconnect(c: mqtt.Client, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        say("connection-lost", reason=str(reason))

    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_message = on_message
    client.on_disconnect = on_disconnect
    client.connect(p["host"], p["port"], keepalive=p["keepalive"])
    client.loop_start()  # its thread reconnects when the connection is lost
    until_stdin_closes()
    client.disconnect()
    client.loop_stop()


if __name__ == "__main__":
    main()
