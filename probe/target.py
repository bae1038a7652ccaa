"""The one broker a probe run may contact, and the only place the probe opens a socket."""

from __future__ import annotations

import socket
import urllib.parse
from dataclasses import dataclass

DEFAULT_PORT = 1883


@dataclass(frozen=True, slots=True)
class Target:
    """``mqtt://HOST:PORT``: plain TCP, no TLS, no websockets."""

    host: str
    port: int

    @classmethod
    def parse(cls, url: str) -> Target:
        """The target a URL names; ``ValueError`` for anything but ``mqtt://HOST[:PORT]``."""
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "mqtt":
            raise ValueError(f"the target is mqtt://HOST:PORT, not {url!r}")
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ValueError(f"the target is mqtt://HOST:PORT with nothing more, not {url!r}")
        if parts.path not in ("", "/") or not parts.hostname:
            raise ValueError(f"the target is mqtt://HOST:PORT, not {url!r}")
        try:
            port = parts.port
        except ValueError:
            raise ValueError(f"bad port in {url!r}") from None
        return cls(host=parts.hostname, port=DEFAULT_PORT if port is None else port)

    @property
    def url(self) -> str:
        """``mqtt://HOST:PORT``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"mqtt://{host}:{self.port}"

    def connect(self, timeout: float) -> socket.socket:
        """A new TCP connection to the target (``OSError`` if there is none in ``timeout``)."""
        sock = socket.create_connection((self.host, self.port), timeout=max(timeout, 0.01))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock
