"""A real broker in a subprocess on a free loopback port, for the live tests of the probe
and of the pipeline (a helper module, not a test module: pytest finds it on the
``pythonpath`` that pyproject.toml gives the tests).

Debian's mosquitto is the broker both live test files run; ``run_broker`` runs any broker
given its command line (the probe's tests also run amqtt with it).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

SBIN = Path("/usr/sbin/mosquitto")  # Debian installs the broker outside a user's PATH
MOSQUITTO = shutil.which("mosquitto") or (str(SBIN) if SBIN.exists() else None)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def mosquitto_config(folder: Path, port: int) -> Path:
    """Write a mosquitto configuration that listens on ``127.0.0.1:port``; its path."""
    config = folder / "mosquitto.conf"
    # mosquitto 2 listens only on loopback, refusing anonymous clients, unless told
    config.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
    return config


def wait_listening(port: int, process: subprocess.Popen[bytes], seconds: float = 20.0) -> None:
    """Return once something accepts connections on ``127.0.0.1:port``; raise if the
    broker exits first or nothing listens within ``seconds``."""
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


def run_broker(argv: list[str], port: int, log: Path) -> Iterator[int]:
    """Run the broker ``argv`` (its output to ``log``), yield ``port`` once it listens,
    and stop it afterwards (terminate; kill after 10 s)."""
    with log.open("wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_listening(port, process)
            yield port
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
