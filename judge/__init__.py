"""pubproof.judge: the model applied to traffic, one layer for every application.

Between the model and reference below and the applications above (the capture pipeline,
the live probe), this layer holds what judging traffic needs, once:

- :mod:`~pubproof.judge.findings`: a finding (verdict, rule ids, message, the end judged)
  and ``source``, the judge that produced it;
- :mod:`~pubproof.judge.packets`: the one table of packet types, the fixed header, and the
  descriptions of the control packets (CONNECT, CONNACK, SUBSCRIBE, SUBACK, PINGREQ,
  PINGRESP, DISCONNECT...);
- :mod:`~pubproof.judge.link`: the link judge, compiled from the model's flow tables, with
  the judged end and its peer as parameters; :mod:`~pubproof.judge.ends` runs two of them
  over a captured connection, one per end;
- :mod:`~pubproof.judge.close`: the close judge ([MQTT-4.8.0-1]: what a receiver owes after
  a packet it must reject);
- :mod:`~pubproof.judge.describe`: how a judge names a packet in its messages.

The probe and the pipeline are thin applications of it; neither imports the other.
"""
