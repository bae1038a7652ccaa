"""What a ``pubproof serve`` broker is told: where it listens, the editions it speaks, the
readings it judges by, and the limits it declares, from the command line or a TOML file.

Rules / theory of operation
---------------------------
:class:`ServeSettings` validates itself on construction: every limit is checked against the
range the standard gives the CONNACK property that announces it (MQTT 5.0 section
3.2.2.3), so a broker never declares what a client must treat as a Protocol Error (Receive
Maximum 0, Maximum Packet Size 0, Maximum QoS 2 sent as a property). ``edition`` None is
``any``: each connection speaks the edition its CONNECT names (protocol level 3, 4 or 5).
A reading applies to the editions it exists in; one that exists in none of the editions
served is an error.

A limit that only 5.0 can announce still binds what the broker does in 3.x where the
3.x text lets the server choose: Maximum QoS is the highest QoS granted in every edition
(3.1.1 [MQTT-3.8.4-5] "The Server might grant a lower maximum QoS than the subscriber
requested"), and the wildcard switch refuses wildcard filters in 3.1.1 as [MQTT-3.8.3-2]
allows (3.1 has no failure return code: a 3.1 connection is always granted).

The TOML file holds the same names as the long options, with ``-`` or ``_``::

    host = "127.0.0.1"
    port = 1883
    edition = "5.0"
    reading = ["dup-qos0=accept"]
    receive-maximum = 1
    topic-alias-maximum = 0
    retain-available = false

Options given on the command line win over the file.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from pubproof.model.distribution_readings import DISTRIBUTION_READINGS
from pubproof.model.editions import READINGS, Edition, Limits, Reading, ReadingError
from pubproof.model.subscriptions import ServerConfig

#: the editions ``--edition`` names; ``any`` serves every one
EDITION_NAMES = ("3.1", "3.1.1", "5.0", "any")
#: the largest Two Byte and Four Byte Integers (MQTT 5.0 section 1.5)
TWO_BYTES, FOUR_BYTES = 0xFFFF, 0xFFFF_FFFF
#: "If the Session Expiry Interval is 0xFFFFFFFF (UINT_MAX), the Session does not expire."
NEVER = FOUR_BYTES


class SettingsError(ValueError):
    """A setting out of its range, or a reading no served edition has."""


def _range(name: str, value: int | None, low: int, high: int) -> None:
    if value is not None and (type(value) is not int or not low <= value <= high):
        raise SettingsError(f"{name} is a whole number from {low:,} to {high:,}, not {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeSettings:
    """Everything a broker is told; every field has the option of the same name."""

    host: str = "127.0.0.1"
    port: int = 1883
    #: the edition served; None: any (each connection's CONNECT decides)
    edition: Edition | None = None
    #: readings as given (NAME -> VALUE), wire and distribution ones alike
    readings: Mapping[str, str] = field(default_factory=dict)
    # -- what the broker declares in a 5.0 CONNACK (None: the property is absent) --------
    #: how many QoS 1 and 2 PUBLISH the broker takes unacknowledged (3.2.2.3.3)
    receive_maximum: int | None = None
    #: the highest Topic Alias a client may send (3.2.2.3.8); 0: none
    topic_alias_maximum: int = 0
    #: the largest packet the broker accepts, in bytes (3.2.2.3.6)
    maximum_packet_size: int | None = None
    #: the highest QoS the broker takes and grants (3.2.2.3.4)
    maximum_qos: int = 2
    retain_available: bool = True
    wildcard_subscriptions: bool = True
    subscription_identifiers: bool = True
    shared_subscriptions: bool = True
    #: the Keep Alive the broker imposes instead of the client's (3.2.2.3.14)
    server_keep_alive: int | None = None
    #: the bounds the broker puts on a client's Session Expiry Interval, in seconds (it
    #: answers its own value in CONNACK when it changes the client's, 3.2.2.3.2)
    session_expiry_minimum: int = 0
    session_expiry_maximum: int = NEVER
    #: whether the broker gives the topic names it sends Topic Aliases (up to the client's
    #: Topic Alias Maximum)
    use_aliases: bool = False
    # -- what the broker does with a fault ----------------------------------------------
    #: go on where a named reading accepts the packet (the finding is still reported)
    lenient: bool = False
    #: the misbehaviours asked for, by name (:mod:`pubproof.probe.serve.misbehave`)
    misbehave: tuple[str, ...] = ()
    # -- resources ----------------------------------------------------------------------
    #: the SQLite file that keeps sessions, queued and retained messages across restarts
    store: Path | None = None
    #: copies a session may hold that it has not been sent (beyond: the oldest goes)
    max_queued: int = 1000
    #: 3.x: QoS 1 and 2 copies under way to one client at once (5.0: its Receive Maximum,
    #: no more than this either)
    max_inflight: int = 100
    #: seconds a connection may take to send its CONNECT (3.1.1 section 3.1.4: "If the
    #: Server does not receive a CONNECT Packet within a reasonable amount of time after
    #: the Network Connection is established, the Server SHOULD close the connection")
    connect_timeout: float = 10.0
    #: bytes written to a client and not yet taken by its socket before the broker stops
    #: sending it copies (a client that does not read)
    write_buffer_limit: int = 256 * 1024
    #: whether the link and distribution judges run (off only to measure what they cost:
    #: the codec still reads every packet, and a packet it rejects is still reported)
    judges: bool = True
    #: messages the distribution judge is fed before serve stops feeding it (it keeps
    #: every message it judged); 0 turns it off
    judge_messages: int = 100_000
    # -- output --------------------------------------------------------------------------
    json: bool = False
    html: Path | None = None
    summary_json: Path | None = None
    quiet: bool = False

    def __post_init__(self) -> None:
        _range("port", self.port, 0, TWO_BYTES)
        _range("receive_maximum", self.receive_maximum, 1, TWO_BYTES)
        _range("topic_alias_maximum", self.topic_alias_maximum, 0, TWO_BYTES)
        _range("maximum_packet_size", self.maximum_packet_size, 2, FOUR_BYTES)
        _range("maximum_qos", self.maximum_qos, 0, 2)
        _range("server_keep_alive", self.server_keep_alive, 0, TWO_BYTES)
        _range("session_expiry_minimum", self.session_expiry_minimum, 0, FOUR_BYTES)
        _range("session_expiry_maximum", self.session_expiry_maximum, 0, FOUR_BYTES)
        _range("max_queued", self.max_queued, 1, 10_000_000)
        if not 0 < self.connect_timeout <= 3600:
            raise SettingsError("connect_timeout is a number of seconds from 0 to 3600")
        _range("max_inflight", self.max_inflight, 1, TWO_BYTES)
        _range("write_buffer_limit", self.write_buffer_limit, 1024, 1 << 30)
        _range("judge_messages", self.judge_messages, 0, 1 << 40)
        if self.session_expiry_minimum > self.session_expiry_maximum:
            raise SettingsError("session_expiry_minimum is above session_expiry_maximum")
        if self.edition is Edition.V31 and not self.wildcard_subscriptions:
            # MQTT 3.1 has no failure return code: a 3.1 server grants every filter
            raise SettingsError("a 3.1 broker cannot refuse wildcards (3.1 has no failure code)")
        for edition in self.editions:
            self.readings_for(edition)  # raises for a bad value
        known = {**READINGS, **DISTRIBUTION_READINGS}
        for name in self.readings:
            reading = known.get(name)
            if reading is None:
                raise SettingsError(f"unknown reading {name!r}")
            if not any(reading.applies_to(e) for e in self.editions):
                served = ", ".join(e.value for e in self.editions)
                raise SettingsError(f"reading {name!r} applies to none of the editions {served}")

    # -- derived ----------------------------------------------------------------------------

    @property
    def editions(self) -> tuple[Edition, ...]:
        """The editions served."""
        return tuple(Edition) if self.edition is None else (self.edition,)

    def readings_for(self, edition: Edition) -> dict[str, str]:
        """The readings given that exist in ``edition`` (wire and distribution alike)."""
        chosen: dict[str, str] = {}
        for table in (READINGS, DISTRIBUTION_READINGS):
            for name, value in self.readings.items():
                reading: Reading | None = table.get(name)
                if reading is None or not reading.applies_to(edition):
                    continue
                if value not in reading.values:
                    values = ", ".join(reading.values)
                    raise SettingsError(f"reading {name!r} has no value {value!r} ({values})")
                chosen[name] = value
        return chosen

    def limits(self) -> Limits:
        """What the broker receives within (MQTT 5.0), as the codec takes it."""
        return Limits(
            topic_alias_maximum=self.topic_alias_maximum,
            maximum_packet_size=self.maximum_packet_size,
        )

    def server_config(self) -> ServerConfig:
        """The distribution's server configuration (what it grants and refuses)."""
        return ServerConfig(
            maximum_qos=self.maximum_qos,
            wildcard_subscriptions=self.wildcard_subscriptions,
            shared_subscriptions=self.shared_subscriptions,
            subscription_identifiers=self.subscription_identifiers,
        )

    def connack_properties(self) -> dict[str, Any]:
        """MQTT 5.0: the CONNACK properties the broker declares (3.2.2.3); a default is
        left out, as the standard's default is what an absent property means."""
        out: dict[str, Any] = {}
        if self.receive_maximum is not None and self.receive_maximum != TWO_BYTES:
            out["receive_maximum"] = self.receive_maximum
        if self.maximum_qos < 2:
            # 3.2.2.3.4: "It is a Protocol Error to include Maximum QoS more than once, or
            # to have a value other than 0 or 1"
            out["maximum_qos"] = self.maximum_qos
        if not self.retain_available:
            out["retain_available"] = 0
        if self.maximum_packet_size is not None:
            out["maximum_packet_size"] = self.maximum_packet_size
        if self.topic_alias_maximum:
            out["topic_alias_maximum"] = self.topic_alias_maximum
        if not self.wildcard_subscriptions:
            out["wildcard_subscription_available"] = 0
        if not self.subscription_identifiers:
            out["subscription_identifier_available"] = 0
        if not self.shared_subscriptions:
            out["shared_subscription_available"] = 0
        if self.server_keep_alive is not None:
            out["server_keep_alive"] = self.server_keep_alive
        return out

    def session_expiry(self, asked: int) -> int:
        """The Session Expiry Interval the broker uses for one a client asked for."""
        return min(max(asked, self.session_expiry_minimum), self.session_expiry_maximum)


#: the option names a settings file may use (``--name`` without the dashes)
OPTION_NAMES = frozenset(f.name.replace("_", "-") for f in fields(ServeSettings))


def settings_from(values: Mapping[str, Any]) -> ServeSettings:
    """Settings from option names (``receive-maximum`` or ``receive_maximum``) and values
    as a TOML file or the command line gives them."""
    given: dict[str, Any] = {}
    for key, value in values.items():
        name = key.replace("-", "_")
        if name == "reading":
            name = "readings"
            value = _readings(value)
        if name not in _FIELDS:
            raise SettingsError(f"unknown setting {key!r}")
        given[name] = _typed(name, value)
    return ServeSettings(**given)


_FIELDS = {f.name for f in fields(ServeSettings)}
_PATHS = {"store", "html", "summary_json"}


def _typed(name: str, value: Any) -> Any:
    if name == "edition":
        if value not in EDITION_NAMES:
            raise SettingsError(f"edition is one of {', '.join(EDITION_NAMES)}, not {value!r}")
        return None if value == "any" else Edition.parse(str(value))
    if name in _PATHS and value is not None:
        return Path(value)
    if name == "misbehave":
        return tuple(str(v) for v in (value if isinstance(value, list | tuple) else [value]))
    return value


def _readings(value: Any) -> dict[str, str]:
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    items = value if isinstance(value, list | tuple) else [value]
    chosen: dict[str, str] = {}
    for item in items:
        name, sep, text = str(item).partition("=")
        if not sep or not name or not text:
            raise SettingsError(f"a reading is NAME=VALUE, not {item!r}")
        chosen[name.strip()] = text.strip()
    return chosen


def load_file(path: Path) -> dict[str, Any]:
    """The settings a TOML file holds (names checked, values not yet)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise SettingsError(f"{path}: {error}") from None
    unknown = sorted(k for k in data if k.replace("_", "-") not in OPTION_NAMES | {"reading"})
    if unknown:
        raise SettingsError(f"{path}: unknown settings {', '.join(unknown)}")
    return data


def merged(file_values: Mapping[str, Any], given: Mapping[str, Any]) -> ServeSettings:
    """The file's settings with those given on the command line over them."""
    try:
        return settings_from({**file_values, **given})
    except (ReadingError, TypeError) as error:
        raise SettingsError(str(error)) from None


def reading_names() -> Sequence[str]:
    """Every reading a broker may be given."""
    return (*READINGS, *DISTRIBUTION_READINGS)
