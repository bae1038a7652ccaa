"""The brokers pubproof probes: one registry (:data:`BROKERS`) that the conformance matrix
(``interop/matrix.py``), ``scripts/probe-broker``, ``scripts/probe-mosquitto`` and the live
tests (``tests/test_probe_live*.py``, ``tests/test_pipeline_live.py``, ...) all read, and one
way to run a broker (:func:`started`).

Each entry (:class:`Broker`) says the editions the broker speaks, its maximum QoS, how long
it may take to start, how to find its version here, whether it can be started here
(:meth:`Broker.available`: None, or why not and what installs it) and how to start it
(:meth:`Broker.start`: its command line and environment, given a scratch folder for its
configuration and a free loopback port). :func:`started` starts one there, yields it once it
listens, and stops its whole process group afterwards.

- ``mosquitto``: Debian's mosquitto (``apt-get install mosquitto``; ``scripts/system-deps``);
  it takes configuration lines of its own (:data:`MOSQUITTO_LIMITS50`: the limits the 5.0
  catalog needs it to declare in CONNACK, its ``config50``, which the matrix starts it with)
- ``amqtt``: amqtt's broker (PyPI, ``pip install -e '.[probe]'``)
- ``aedes``: aedes (npm, ``interop/package.json``; ``npm ci`` in ``interop/``)
- ``rabbitmq``: RabbitMQ's MQTT plugin (Debian ``rabbitmq-server``; QoS 0 and 1 only)

``python interop/brokers.py NAME [--limits50] [pubproof probe options...]`` starts one
broker, runs ``pubproof probe`` against it (with ``--max-qos`` where the broker has less
than QoS 2) and stops it; ``--limits50`` (mosquitto) adds :data:`MOSQUITTO_LIMITS50`.
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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pubproof.probe.clients.shipped import PROBE_EXTRA, distribution_version, npm_version

HERE = Path(__file__).resolve().parent
#: Debian installs the broker outside a user's PATH
MOSQUITTO_SBIN = Path("/usr/sbin/mosquitto")
RABBITMQ_SERVER = Path("/usr/lib/rabbitmq/bin/rabbitmq-server")
#: mosquitto's configuration for the 5.0 catalog: the limits it declares in CONNACK, Receive
#: Maximum 10, Topic Alias Maximum 10 and Maximum Packet Size 4096 (without the last it
#: declares none, and ``wire.packet-too-large`` sends a packet the model accepts)
MOSQUITTO_LIMITS50 = ("max_inflight_messages 10", "max_topic_alias 10", "max_packet_size 4096")


@dataclass(frozen=True, slots=True, kw_only=True)
class Launch:
    """How to run a broker: its command line and what it adds to the environment."""

    argv: tuple[str, ...]
    environment: Mapping[str, str] = field(default_factory=dict)


#: (scratch folder, port, configuration lines) -> how to run the broker
Start = Callable[[Path, int, Sequence[str]], Launch]


@dataclass(frozen=True, slots=True, kw_only=True)
class Broker:
    """A broker pubproof can start on loopback."""

    name: str
    #: the editions it speaks (the matrix probes it in each)
    editions: tuple[str, ...]
    #: its maximum QoS (``pubproof probe --max-qos`` below 2)
    max_qos: int
    #: seconds it may take to listen
    seconds: float
    #: what installs it, said when it is missing
    install: str
    #: its version here; None when it is not installed
    version: Callable[[], str | None]
    launch: Start
    #: its configuration lines for the 5.0 catalog (the limits it must declare in CONNACK
    #: for the checks of those limits to probe anything), which the matrix starts it with
    config50: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.editions or self.max_qos not in (0, 1, 2) or self.seconds <= 0:
            raise ValueError(f"{self.name}: editions, a QoS of 0 to 2 and a start time")

    def available(self) -> str | None:
        """Why the broker cannot be started here (naming what installs it), or None."""
        if self.version() is None:
            return f"{self.name} is not installed ({self.install})"
        return None

    def start(self, folder: Path, port: int, config: Sequence[str] = ()) -> Launch:
        """Write its configuration in ``folder`` (to listen on ``127.0.0.1:port``, with
        ``config``'s lines where the broker takes them); how to run it."""
        return self.launch(folder, port, config)


@dataclass(frozen=True, slots=True, kw_only=True)
class Running:
    """A broker that listens."""

    broker: Broker
    version: str
    port: int
    #: its output (standard output and error), while it runs
    log: Path
    #: its process (the leader of its process group)
    pid: int = 0

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _no_config(name: str, config: Sequence[str]) -> None:
    if config:
        raise ValueError(f"{name} takes no configuration lines here: {list(config)}")


# -- mosquitto ---------------------------------------------------------------------------------


def _mosquitto_binary() -> str | None:
    return shutil.which("mosquitto") or (str(MOSQUITTO_SBIN) if MOSQUITTO_SBIN.exists() else None)


def _mosquitto_version() -> str | None:
    binary = _mosquitto_binary()
    if binary is None:
        return None
    out = subprocess.run([binary, "-h"], capture_output=True, text=True, check=False).stdout
    return out.split()[2] if len(out.split()) > 2 else "unknown"


def _mosquitto(folder: Path, port: int, config: Sequence[str]) -> Launch:
    binary = _mosquitto_binary()
    assert binary is not None, "mosquitto is not installed"
    path = folder / "mosquitto.conf"
    # mosquitto 2 listens only on loopback, refusing anonymous clients, unless told
    lines = [f"listener {port} 127.0.0.1", "allow_anonymous true", "persistence false", *config]
    path.write_text("".join(line + "\n" for line in lines))
    return Launch(argv=(binary, "-c", str(path)))


# -- amqtt -------------------------------------------------------------------------------------


def _amqtt(folder: Path, port: int, config: Sequence[str]) -> Launch:
    _no_config("amqtt", config)
    path = folder / "amqtt.yaml"
    path.write_text(
        "listeners:\n  default:\n    type: tcp\n"
        f"    bind: 127.0.0.1:{port}\n"
        "plugins:\n  amqtt.plugins.authentication.AnonymousAuthPlugin:\n"
        "    allow_anonymous: true\n"
    )
    return Launch(argv=(sys.executable, "-m", "amqtt.scripts.broker_script", "-c", str(path)))


# -- aedes -------------------------------------------------------------------------------------


def _aedes_version() -> str | None:
    return npm_version("aedes", HERE)() if shutil.which("node") else None


def _aedes(folder: Path, port: int, config: Sequence[str]) -> Launch:
    _no_config("aedes", config)
    return Launch(argv=("node", str(HERE / "brokers" / "aedes.mjs"), str(port)))


# -- RabbitMQ ----------------------------------------------------------------------------------


def _rabbitmq_version() -> str | None:
    if not RABBITMQ_SERVER.exists():
        return None
    status = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", "rabbitmq-server"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return status.stdout.split("-")[0] if status.returncode == 0 else "unknown"


def _rabbitmq(folder: Path, port: int, config: Sequence[str]) -> Launch:
    _no_config("rabbitmq", config)
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
    return Launch(argv=(str(RABBITMQ_SERVER),), environment=environment)


# -- the registry ------------------------------------------------------------------------------

REGISTRY = (
    Broker(
        name="mosquitto", editions=("3.1.1", "3.1", "5.0"), max_qos=2, seconds=10.0,
        install="apt-get install mosquitto; scripts/system-deps",
        version=_mosquitto_version, launch=_mosquitto, config50=MOSQUITTO_LIMITS50,
    ),
    Broker(
        name="amqtt", editions=("3.1.1",), max_qos=2, seconds=20.0,
        install=PROBE_EXTRA, version=distribution_version("amqtt"), launch=_amqtt,
    ),
    Broker(
        name="aedes", editions=("3.1.1", "3.1"), max_qos=2, seconds=20.0,
        install="node, and npm ci in interop/ as scripts/setup does",
        version=_aedes_version, launch=_aedes,
    ),
    Broker(
        name="rabbitmq", editions=("3.1.1", "3.1"), max_qos=1, seconds=60.0,
        install="apt-get install rabbitmq-server",
        version=_rabbitmq_version, launch=_rabbitmq,
    ),
)  # fmt: skip
#: the brokers by name
BROKERS: dict[str, Broker] = {broker.name: broker for broker in REGISTRY}


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


@contextlib.contextmanager
def started(broker: Broker | str, config: Sequence[str] = ()) -> Iterator[Running]:
    """Start the broker (by name or entry; ``config``: its own configuration lines) in a
    scratch folder on a free loopback port; yield it once it listens; stop it (its whole
    process group: terminate, then kill)."""
    entry = BROKERS[broker] if isinstance(broker, str) else broker
    why = entry.available()
    if why is not None:
        raise RuntimeError(why)
    found = entry.version() or "unknown"
    with tempfile.TemporaryDirectory(prefix=f"pubproof-{entry.name}-") as scratch:
        folder = Path(scratch)
        port = free_port()
        launch = entry.start(folder, port, config)
        log = folder / "broker.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                launch.argv, stdout=out, stderr=subprocess.STDOUT,
                env={**os.environ, **launch.environment}, start_new_session=True,
            )  # fmt: skip
            try:
                _wait(port, process, entry.seconds)
                yield Running(broker=entry, version=found, port=port, log=log, pid=process.pid)
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
        sys.stderr.write(
            f"usage: brokers.py {'|'.join(BROKERS)} [--limits50] [pubproof probe options]\n"
        )
        return 2
    broker, rest = BROKERS[argv[0]], argv[1:]
    config = MOSQUITTO_LIMITS50 if "--limits50" in rest else ()
    rest = [a for a in rest if a != "--limits50"]
    if config and broker.name != "mosquitto":
        sys.stderr.write("--limits50 is mosquitto's configuration\n")
        return 2
    why = broker.available()
    if why:
        sys.stderr.write(f"{broker.name}: {why}\n")
        return 2
    with started(broker, config) as running:
        sys.stderr.write(f"{broker.name} {running.version} on 127.0.0.1:{running.port}\n")
        probe = [str(Path(sys.executable).parent / "pubproof"), "probe", running.url]
        if broker.max_qos < 2:
            probe += ["--max-qos", str(broker.max_qos)]
        return subprocess.run([*probe, *rest], check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
