"""pubproof.probe.clients: judge an MQTT *client* library against the model.

``probe_client("paho-mqtt")`` plays the server on loopback (through the reference Session,
made to misbehave where a check needs it), makes the client act through a *driver*
(:mod:`~pubproof.probe.clients.driver`: the protocol, and the shipped drivers) and judges
every packet the client sends, every silence and every close with the model, and what its
application was handed (:mod:`~pubproof.probe.clients.judge`). The report has the shape of
``pubproof probe``'s, with the library and its version as the target; a verdict is a
function of the evidence alone (:func:`rejudge_client`).
"""

from __future__ import annotations

from pubproof.probe.clients.catalog import BY_ID, BY_ID50, CHECKS, CHECKS50, catalog, select
from pubproof.probe.clients.runner import probe_client, rejudge_client

__all__ = [
    "BY_ID",
    "BY_ID50",
    "CHECKS",
    "CHECKS50",
    "catalog",
    "probe_client",
    "rejudge_client",
    "select",
]
