"""The driver of libmosquitto through Debian's ``mosquitto_sub`` and ``mosquitto_pub`` for
``pubproof probe-client`` (the protocol: :mod:`pubproof.probe.clients.driver`).

A plan that subscribes runs ``mosquitto_sub`` (one filter per ``-t``, every message printed
as QoS, RETAIN, topic and the payload in hex, turned into the protocol's lines here); a
plan that publishes runs ``mosquitto_pub -l``, which publishes each line of its standard
input as one message on one connection (so all of a plan's messages share its first
topic, QoS and RETAIN). Both reconnect as libmosquitto's loop does.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import threading

from pubproof.probe.drivers.common import message, plan, say

_VERSION = re.compile(r"running on libmosquitto (\S+?)\.?$", re.M)


def _version() -> str:
    out = subprocess.run(["mosquitto_sub", "--help"], capture_output=True, text=True, check=False)
    found = _VERSION.search(out.stdout + out.stderr)
    return found.group(1) if found else "unknown"


def main() -> None:
    p = plan()
    if shutil.which("mosquitto_sub") is None:
        say("error", message="mosquitto_sub is not installed (Debian: mosquitto-clients)")
        sys.exit(2)
    say("hello", library="libmosquitto (mosquitto_sub/mosquitto_pub)", version=_version())
    common = [
        "-h",
        p["host"],
        "-p",
        str(p["port"]),
        "-i",
        p["client_id"],
        "-k",
        str(p["keepalive"]),
    ]
    common += ["-V", "mqttv311" if p["edition"] == "3.1.1" else "mqttv31"]
    if not p["clean_session"]:
        common.append("-c")
    if p["subscribe"]:
        argv = ["mosquitto_sub", *common, "-F", "%q %r %x %t"]
        for s in p["subscribe"]:
            argv += ["-t", s["topic"], "-q", str(s["qos"])]
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, errors="replace")
        threading.Thread(target=_messages, args=(process,), daemon=True).start()
    else:
        first = p["publish"][0]
        argv = ["mosquitto_pub", *common, "-l", "-t", first["topic"], "-q", str(first["qos"])]
        if first["retain"]:
            argv.append("-r")
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, text=True)
        assert process.stdin is not None
        for m in p["publish"]:
            process.stdin.write(bytes.fromhex(m["payload_hex"]).decode() + "\n")
        process.stdin.flush()
    for _ in sys.stdin:  # until standard input closes
        pass
    if process.stdin is not None:
        process.stdin.close()
    try:
        process.wait(1.0)
    except subprocess.TimeoutExpired:
        process.terminate()
        process.wait(2.0)
    _ended(argv[0], process.returncode)


def _ended(program: str, code: int | None) -> None:
    """mosquitto_sub and mosquitto_pub end with a status of their own when libmosquitto
    reports a protocol error (the library closed the connection: the application ends);
    only a death by a signal other than the driver's own stop is a crash."""
    if code is not None and code < 0 and code != -15:
        say("error", message=f"{program} died by signal {-code}")
        sys.exit(1)
    if code:
        say("connection-lost", message=f"{program} ended with status {code}")


def _messages(process: subprocess.Popen[str]) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        qos, retain, payload, topic = line.rstrip("\n").split(" ", 3)
        message(topic, int(qos), retain == "1", bytes.fromhex(payload))
    _ended("mosquitto_sub", process.wait())


if __name__ == "__main__":
    main()
