"""The shipped drivers of ``pubproof probe-client`` (the protocol:
:mod:`pubproof.probe.clients.driver`): each a small program, run as
``python -m pubproof.probe.drivers.NAME``, that drives one client library."""
