"""The shipped drivers of ``pubproof probe-client``: the one registry that the command
(``--driver NAME``), the conformance matrix (``interop/matrix.py``) and the tests read.

Each entry (:class:`ShippedDriver`) says which client library its driver makes act, the
editions that library speaks (of those ``probe-client`` judges), how to find the library's
version here, whether the driver can run here (:meth:`ShippedDriver.available`: ``None``,
or why not and what installs it) and its command line (how ``probe-client`` starts it,
once per check; the protocol is :mod:`pubproof.probe.clients.driver`'s).

The drivers are small programs: Python modules under ``probe/drivers/`` (run as ``python -m
pubproof.probe.drivers.NAME``, :func:`python_driver`) and node scripts under
``interop/drivers/`` beside the npm packages they drive (:func:`node_driver`). A new driver
is one more entry in :data:`DRIVERS`.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

#: the editions ``probe-client`` judges
EDITIONS = ("3.1.1", "3.1", "5.0")
#: what installs the Python libraries of the shipped drivers (the ``probe`` extra)
PROBE_EXTRA = "pip install -e '.[probe]'"
#: what installs the npm packages of ``interop/``
NPM = "npm ci in interop/ (scripts/setup)"


@dataclass(frozen=True, slots=True, kw_only=True)
class ShippedDriver:
    """A shipped driver and the client library it drives."""

    #: what ``--driver`` takes, and the implementation's name in the matrix
    name: str
    #: the library, in words (as the driver's ``hello`` names it)
    library: str
    #: the editions the library speaks (those the matrix probes it in)
    editions: tuple[str, ...]
    #: what installs the library, said when it is missing
    install: str
    #: the driver's command line
    command: Callable[[], list[str]]
    #: the library's version here; None when it is not installed
    version: Callable[[], str | None]
    #: programs the driver runs, which must be on ``PATH``
    programs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.name or not self.editions:
            raise ValueError("a shipped driver needs a name and the editions it speaks")
        unknown = set(self.editions) - set(EDITIONS)
        if unknown:
            raise ValueError(f"{self.name}: editions probe-client does not judge: {unknown}")

    def available(self) -> str | None:
        """Why the driver cannot run here (naming what installs it), or None."""
        for program in self.programs:
            if shutil.which(program) is None:
                return f"{program} is not on PATH ({self.install})"
        if self.version() is None:
            return f"{self.library} is not installed ({self.install})"
        return None

    def command_line(self) -> list[str]:
        """How ``probe-client`` starts the driver."""
        return self.command()


def interop_folder() -> Path | None:
    """The project's ``interop/`` folder (the node drivers, brokers and codec adapters, with
    their ``package.json``): ``$PUBPROOF_INTEROP``, else the first ``interop/`` holding a
    ``package.json`` in the working directory or above it."""
    given = os.environ.get("PUBPROOF_INTEROP")
    if given:
        return Path(given)
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "interop" / "package.json").exists():
            return folder / "interop"
    return None


def python_driver(module: str) -> Callable[[], list[str]]:
    """The command line of the driver module ``pubproof.probe.drivers.MODULE``."""
    return lambda: [sys.executable, "-m", f"pubproof.probe.drivers.{module}"]


def node_driver(script: str) -> Callable[[], list[str]]:
    """The command line of the node driver ``interop/drivers/SCRIPT``."""

    def command() -> list[str]:
        folder = interop_folder()
        path = folder / "drivers" / script if folder else Path("interop/drivers") / script
        return ["node", str(path)]

    return command


def distribution_version(distribution: str) -> Callable[[], str | None]:
    """The installed version of a Python distribution (None: not installed)."""

    def version() -> str | None:
        try:
            return metadata.version(distribution)
        except metadata.PackageNotFoundError:
            return None

    return version


def npm_version(package: str, interop: Path | None = None) -> Callable[[], str | None]:
    """The version of an npm package installed in ``interop/node_modules`` (``interop``:
    that folder, else :func:`interop_folder`; None: not installed, or no ``interop/``)."""

    def version() -> str | None:
        folder = interop or interop_folder()
        manifest = folder / "node_modules" / package / "package.json" if folder else None
        if manifest is None or not manifest.is_file():
            return None
        found: str = json.loads(manifest.read_text(encoding="utf-8"))["version"]
        return found

    return version


def _paho_c_command() -> list[str]:
    """Eclipse Paho C's driver, a C program: itself when built and newer than its sources,
    else its Python module, which builds it and becomes it (or says why it cannot)."""
    from pubproof.probe.drivers import paho_c

    folder = interop_folder()
    if folder is not None and paho_c.built(folder):
        return [str(paho_c.program(folder))]
    return python_driver("paho_c")()


def _paho_c_version() -> str | None:
    from pubproof.probe.drivers import paho_c

    return paho_c.package_version()


def _libmosquitto_version() -> str | None:
    from pubproof.probe.drivers.mosquitto_clients import library_version

    return library_version()


DRIVERS = (
    ShippedDriver(
        name="paho-mqtt",
        library="paho-mqtt",
        editions=EDITIONS,
        install=PROBE_EXTRA,
        command=python_driver("paho_mqtt"),
        version=distribution_version("paho-mqtt"),
    ),
    ShippedDriver(
        name="mosquitto-clients",
        library="libmosquitto (mosquitto_sub/mosquitto_pub)",
        editions=EDITIONS,
        install="apt-get install mosquitto-clients; scripts/system-deps",
        command=python_driver("mosquitto_clients"),
        version=_libmosquitto_version,
        programs=("mosquitto_sub", "mosquitto_pub"),
    ),
    ShippedDriver(
        name="mqttjs",
        library="MQTT.js (npm mqtt)",
        editions=EDITIONS,
        install=NPM,
        command=node_driver("mqttjs.js"),
        version=npm_version("mqtt"),
        programs=("node",),
    ),
    ShippedDriver(
        name="gmqtt",
        library="gmqtt",
        editions=("3.1.1", "5.0"),
        install=PROBE_EXTRA,
        command=python_driver("gmqtt_client"),
        version=distribution_version("gmqtt"),
    ),
    ShippedDriver(
        name="paho-c",
        library="Eclipse Paho C (MQTTAsync)",
        editions=EDITIONS,
        install="apt-get install libpaho-mqtt-dev gcc; scripts/system-deps",
        command=_paho_c_command,
        version=_paho_c_version,
        programs=("gcc",),
    ),
)
#: the shipped drivers by name
SHIPPED: dict[str, ShippedDriver] = {driver.name: driver for driver in DRIVERS}
