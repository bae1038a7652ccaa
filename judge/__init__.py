"""pubproof.judge: the model applied to traffic, one layer for every application.

Between the model and reference below and the applications above (the capture pipeline,
the live probe), this layer holds what judging traffic needs, once:

- :mod:`~pubproof.judge.findings`: a finding (verdict, rule ids, message, the end judged)
  and ``source``, the judge that produced it;
- :mod:`~pubproof.judge.packets`: the one table of packet types, the fixed header, and the
  descriptions of the control packets (CONNECT, CONNACK, SUBSCRIBE, SUBACK, PINGREQ,
  PINGRESP, DISCONNECT...);
- :mod:`~pubproof.judge.link`: the link judge, the model's flow tables read at every
  packet, with the judged end and its peer as parameters; :mod:`~pubproof.judge.ends`
  runs two of them over a captured connection, one per end;
- :mod:`~pubproof.judge.close`: the close judge ([MQTT-4.8.0-1]: what a receiver owes after
  a packet it must reject);
- :mod:`~pubproof.judge.describe`: how a judge names a packet in its messages;
- :mod:`~pubproof.judge.cited`: the rule ids the link judges cite besides the tables' own,
  and what they hand on (the offence a receiver must close for), shared with the compiled
  twins.

MQTT 5.0 adds: :mod:`~pubproof.judge.packets50` (the 5.0 control packets, AUTH included,
described and encoded) with :mod:`~pubproof.judge.properties` (Table 2-4, read and written
by the model's property reader and writer); :mod:`~pubproof.judge.limits` (what CONNECT and
CONNACK declared, the model's limits per direction); :mod:`~pubproof.judge.aliases` (a
direction's Topic Alias map); :mod:`~pubproof.judge.link50` (the link judge on the 5.0
flow tables); the close judge judges 5.0 offences and the DISCONNECT Reason Code.

The judges here are written to be read, like the model's tables, and every application
that does not need speed uses them (the probe, the docs). The capture pipeline runs
compiled twins of the link judges (:mod:`pubproof.pipeline.fast`), held equal to these
finding for finding by differential tests (``tests/test_judge_twins.py``); the mutation
tests patch the judges here. The probe and the pipeline are thin applications of this
layer; neither imports the other.
"""
