"""pubproof.model: the MQTT PUBLISH specification as executable, readable Python.

- :mod:`~pubproof.model.editions`: editions and the named readings where the texts diverge
- :mod:`~pubproof.model.rules`: the rule type and the one registry of rules
- :mod:`~pubproof.model.wire_rules`: the wire-format rules, each quoting its clause
- :mod:`~pubproof.model.wire`: the wire format, decoded and encoded rule by rule
- :mod:`~pubproof.model.trace`: ``P``, the packet evidence format shared by every output
- :mod:`~pubproof.model.properties50`: MQTT 5.0's property table (Table 2-4), as data
- :mod:`~pubproof.model.vectors`: the vector corpus, generated from the model
- :mod:`~pubproof.model.distribution`: the server's distribution across sessions (topic
  filters, subscriptions, the retained store, forwarding, queues, ordering), with its rules
  (:mod:`~pubproof.model.distribution_rules`) and readings
"""

from pubproof.model import distribution_rules as distribution_rules
from pubproof.model import distribution_rules50 as distribution_rules50
from pubproof.model import flow_rules as flow_rules
from pubproof.model import flow_rules50 as flow_rules50
from pubproof.model import wire_rules as wire_rules
from pubproof.model.editions import READINGS, Edition, Reading, resolve_readings
from pubproof.model.rules import INCOMPLETE, RULES, Rule
from pubproof.model.wire import Failure, Verdict, decode, encode

__all__ = [
    "INCOMPLETE",
    "READINGS",
    "RULES",
    "Edition",
    "Failure",
    "Reading",
    "Rule",
    "Verdict",
    "decode",
    "encode",
    "resolve_readings",
    "wire_rules",
]
