"""The driver of paho-mqtt (Eclipse Paho's Python client, 2.x) for ``pubproof probe-client``.

The whole driver protocol (:mod:`pubproof.probe.clients.driver`) in one small program:
read the plan, connect, subscribe, publish, print what the application receives, and
reconnect when the connection is lost, until standard input closes. MQTT 5.0: the client's
limits and Session Expiry Interval in CONNECT, each message's properties both ways, and
Clean Start as the plan says on every connection.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from pubproof.probe.drivers.common import message, plan, say, until_stdin_closes
from pubproof.probe.drivers.common50 import LIMIT_NAMES, from_library, to_library

PROTOCOLS = {"3.1": mqtt.MQTTv31, "3.1.1": mqtt.MQTTv311, "5.0": mqtt.MQTTv5}


def _connect_properties(p: dict[str, Any]) -> Properties | None:
    if p["edition"] != "5.0":
        return None
    properties = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
    if p.get("session_expiry_interval") is not None:
        properties.SessionExpiryInterval = p["session_expiry_interval"]
    for key, value in p.get("limits", {}).items():
        setattr(properties, LIMIT_NAMES[key], value)
    return properties


def _publish_properties(m: dict[str, Any]) -> Properties | None:
    if not m.get("properties"):
        return None
    properties = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
    for name, value in to_library(m["properties"]).items():
        setattr(properties, name, value)
    return properties


def main() -> None:
    p = plan()
    say("hello", library="paho-mqtt", version=version("paho-mqtt"))
    v5 = p["edition"] == "5.0"
    if v5:
        client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=p["client_id"], protocol=mqtt.MQTTv5
        )
    else:
        client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=p["client_id"],
            clean_session=p["clean_session"],
            protocol=PROTOCOLS[p["edition"]],
        )
    client.reconnect_delay_set(min_delay=1, max_delay=1)
    first = [True]

    def on_connect(c: mqtt.Client, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        say("connected")
        if first[0]:
            first[0] = False
            for s in p["subscribe"]:
                c.subscribe(s["topic"], s["qos"])
            for index, m in enumerate(p["publish"]):
                payload = bytes.fromhex(m["payload_hex"])
                try:
                    info = c.publish(
                        m["topic"], payload, m["qos"], m["retain"], _publish_properties(m)
                    )
                except (ValueError, TypeError) as refused:
                    say("publish-refused", index=index, message=str(refused))
                    continue
                if info.rc not in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_NO_CONN):
                    say("publish-refused", index=index, message=mqtt.error_string(info.rc))

    def on_subscribe(c: mqtt.Client, userdata: Any, mid: int, reasons: Any, props: Any) -> None:
        say("subscribed")

    def on_message(c: mqtt.Client, userdata: Any, msg: mqtt.MQTTMessage) -> None:
        if not v5:
            message(msg.topic, msg.qos, msg.retain, bytes(msg.payload))
            return
        got = msg.properties
        properties = from_library(lambda name: getattr(got, name, None)) if got else {}
        say(
            "message", topic=msg.topic, qos=msg.qos, retain=bool(msg.retain),
            payload_hex=bytes(msg.payload).hex(), properties=properties,
        )  # fmt: skip

    def on_disconnect(c: mqtt.Client, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        say("connection-lost", reason=str(reason))

    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_message = on_message
    client.on_disconnect = on_disconnect
    if v5:
        client.connect(
            p["host"], p["port"], keepalive=p["keepalive"], clean_start=p["clean_session"],
            properties=_connect_properties(p),
        )  # fmt: skip
    else:
        client.connect(p["host"], p["port"], keepalive=p["keepalive"])
    client.loop_start()  # its thread reconnects when the connection is lost
    until_stdin_closes()
    client.disconnect()
    client.loop_stop()


if __name__ == "__main__":
    main()
