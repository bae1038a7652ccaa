"""The brokers pubproof probes, each started on a free loopback port with its own
configuration in a scratch folder, and stopped afterwards.

``python interop/brokers.py NAME [pubproof probe options...]`` starts one broker, runs
``pubproof probe`` against it (with ``--max-qos`` where the broker has less than QoS 2)
and stops it. ``started(NAME)`` is the same for Python callers (the matrix).

- ``mosquitto``: Debian's mosquitto (``apt-get install mosquitto``)
- ``amqtt``: amqtt's broker (PyPI, ``pip install amqtt``)
- ``aedes``: aedes (npm, ``interop/package.json``; ``npm ci`` in ``interop/``)
- ``rabbitmq``: RabbitMQ's MQTT plugin (Debian ``rabbitmq-server``; QoS 0 and 1 only)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Broker:
    """A running broker."""

    name: str
    version: str
    port: int
    max_qos: int
    editions: tuple[str, ...]

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait(port: int, process: subprocess.Popen[bytes], seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if process.poll() is not None:
            raise RuntimeError(f"the broker exited with status {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {seconds} s")


def _mosquitto(folder: Path, port: int) -> tuple[list[str], dict[str, str], str]:
    binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    config = folder / "mosquitto.conf"
    config.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
    out = subprocess.run([binary, "-h"], capture_output=True, text=True, check=False).stdout
    return [binary, "-c", str(config)], {}, out.split()[2] if out.split() else "unknown"


def _amqtt(folder: Path, port: int) -> tuple[list[str], dict[str, str], str]:
    config = folder / "amqtt.yaml"
    config.write_text(
        "listeners:\n  default:\n    type: tcp\n"
        f"    bind: 127.0.0.1:{port}\n"
        "plugins:\n  amqtt.plugins.authentication.AnonymousAuthPlugin:\n"
        "    allow_anonymous: true\n"
    )
    argv = [sys.executable, "-m", "amqtt.scripts.broker_script", "-c", str(config)]
    return argv, {}, version("amqtt")


def _aedes(folder: Path, port: int) -> tuple[list[str], dict[str, str], str]:
    import json

    package = json.loads((HERE / "node_modules" / "aedes" / "package.json").read_text())
    return ["node", str(HERE / "brokers" / "aedes.mjs"), str(port)], {}, package["version"]


def _rabbitmq(folder: Path, port: int) -> tuple[list[str], dict[str, str], str]:
    (folder / "rabbitmq.conf").write_text(
        f"listeners.tcp.default = 127.0.0.1:{free_port()}\n"
        f"mqtt.listeners.tcp.default = 127.0.0.1:{port}\n"
        "mqtt.allow_anonymous = true\nloopback_users = none\n"
    )
    (folder / "enabled_plugins").write_text("[rabbitmq_mqtt].\n")
    environment = {
        "HOME": str(folder),
        "RABBITMQ_NODENAME": f"pubproof{port}@localhost",
        "RABBITMQ_CONFIG_FILE": str(folder / "rabbitmq.conf"),
        "RABBITMQ_ENABLED_PLUGINS_FILE": str(folder / "enabled_plugins"),
        "RABBITMQ_MNESIA_BASE": str(folder / "mnesia"),
        "RABBITMQ_LOG_BASE": str(folder / "log"),
        "RABBITMQ_DIST_PORT": str(free_port()),
        "RABBITMQ_PID_FILE": str(folder / "pid"),
    }
    status = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", "rabbitmq-server"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    found = status.stdout.split("-")[0] if status.returncode == 0 else "unknown"
    return ["/usr/lib/rabbitmq/bin/rabbitmq-server"], environment, found


#: name -> (how to start it, its maximum QoS, the editions it speaks, seconds to start)
BROKERS = {
    "mosquitto": (_mosquitto, 2, ("3.1.1", "3.1", "5.0"), 10.0),
    "amqtt": (_amqtt, 2, ("3.1.1",), 20.0),
    "aedes": (_aedes, 2, ("3.1.1", "3.1"), 20.0),
    "rabbitmq": (_rabbitmq, 1, ("3.1.1", "3.1"), 60.0),
}


def available(name: str) -> str | None:
    """Why the broker cannot be started here, or None."""
    mosquitto = shutil.which("mosquitto") or Path("/usr/sbin/mosquitto").exists()
    if name == "mosquitto" and not mosquitto:
        return "mosquitto is not installed (apt-get install mosquitto)"
    if name == "aedes" and not (HERE / "node_modules" / "aedes").exists():
        return "aedes is not installed (npm ci in interop/)"
    if name == "rabbitmq" and not Path("/usr/lib/rabbitmq/bin/rabbitmq-server").exists():
        return "rabbitmq-server is not installed (apt-get install rabbitmq-server)"
    if name == "amqtt":
        try:
            version("amqtt")
        except Exception:
            return "amqtt is not installed (pip install amqtt)"
    return None


@contextlib.contextmanager
def started(name: str) -> Iterator[Broker]:
    """Start the broker; yield it once it listens; stop it (its whole process group)."""
    start, max_qos, editions, seconds = BROKERS[name]
    with tempfile.TemporaryDirectory(prefix=f"pubproof-{name}-") as scratch:
        folder = Path(scratch)
        port = free_port()
        argv, environment, found = start(folder, port)
        with (folder / "broker.log").open("wb") as log:
            process = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **environment},
                start_new_session=True,
            )  # fmt: skip
            try:
                _wait(port, process, seconds)
                yield Broker(name, found, port, max_qos, editions)
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(15)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGKILL)
                    process.wait(5)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in BROKERS:
        sys.stderr.write(f"usage: brokers.py {'|'.join(BROKERS)} [pubproof probe options]\n")
        return 2
    name, rest = argv[0], argv[1:]
    why = available(name)
    if why:
        sys.stderr.write(f"{name}: {why}\n")
        return 2
    with started(name) as broker:
        sys.stderr.write(f"{name} {broker.version} on 127.0.0.1:{broker.port}\n")
        probe = [str(Path(sys.executable).parent / "pubproof"), "probe", broker.url]
        if broker.max_qos < 2:
            probe += ["--max-qos", str(broker.max_qos)]
        return subprocess.run([*probe, *rest], check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
