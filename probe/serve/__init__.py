"""pubproof.probe.serve: a strict, configurable reference broker that judges every packet
its clients send, live (``pubproof serve``).

It is the probe turned around and left running: the same judges (wire, link, close,
distribution) the probe and the pipeline use, around the sans-IO reference (the codec, the
sessions of both editions, the distribution) and an asyncio event loop. It lives in the
probe's package because ``probe-client`` plays its server role with it.
"""
