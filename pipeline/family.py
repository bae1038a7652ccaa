"""The PUBLISH family decoded one whole packet at a time by the project's codec, for the
capture pipeline: :class:`PublishFamilyDecoder` and the decoders shared per edition,
readings and limits (:func:`decoder_for`). Compiled with the per-packet path
(:mod:`pubproof.pipeline.compiled`): every PUBLISH, PUBACK, PUBREC, PUBREL and PUBCOMP of
a capture goes through :meth:`PublishFamilyDecoder.decode`."""

from __future__ import annotations

from collections.abc import Mapping

from pubproof.model.editions import Edition, Limits
from pubproof.pipeline.wire_error import WireError
from pubproof.reference.codec import NEED_DATA, Decoder
from pubproof.reference.errors import ProtocolError
from pubproof.reference.packets import Packet


class PublishFamilyDecoder:
    """Decodes whole PUBLISH, PUBACK, PUBREC, PUBREL and PUBCOMP packets of one edition
    and readings with the codec, one at a time.

    The codec's :class:`~pubproof.reference.codec.Decoder` is kept between packets: a
    whole packet leaves it with nothing buffered, so the next one starts it afresh, as a
    new decoder would, without resolving the readings again (which costs more than the
    decoding). After an error (the codec's decoder keeps raising it) a new one is made.

    In 3.1 and 3.1.1 a packet is taken with ``next_packet`` (the codec's judging path),
    not by iteration: iteration and ``next_packet`` give the same packets and errors (the
    codec's contract, ``tests/test_agreement.py``), and for one packet at a time the
    iterator's set-up costs more than its fast path saves (a small PUBLISH: 1.8 against
    1.4 us, a PUBACK 1.4 against 0.8 us). In 5.0 the iterator's fast path also hands out
    one object per distinct property section, which :func:`shown_properties` relies on."""

    __slots__ = ("_decoder", "edition", "limits", "readings", "v5")

    def __init__(
        self, edition: Edition, readings: Mapping[str, str] | None, limits: Limits | None = None
    ) -> None:
        """``limits``: the receiving end's (MQTT 5.0 only; None: the standard's defaults)."""
        self.edition, self.readings, self.limits = edition, readings, limits
        self.v5 = edition is Edition.V50
        self._decoder = Decoder(edition=edition, readings=readings, limits=limits)

    def decode(self, data: bytes) -> Packet | WireError:
        """The packet ``data`` holds (exactly one, whole), or the codec's error (its offset
        counted from the packet's first byte)."""
        decoder = self._decoder
        start = decoder.offset
        decoder.feed(data)
        try:
            if not self.v5:
                packet = decoder.next_packet()
                if packet is not NEED_DATA:
                    if decoder.buffered:  # cannot happen (the packet is whole)
                        self._fresh()
                    return packet  # type: ignore[return-value]
            else:
                for packet in decoder:
                    if decoder.buffered:  # cannot happen (the packet is whole); start afresh
                        self._fresh()
                    return packet  # the codec's fast path, then its general one
            decoder.close()  # raises IncompleteStream: the codec wants more than RL said
            raise AssertionError("unreachable")
        except ProtocolError as error:
            self._fresh()
            at = error.offset - start if error.offset is not None else 0
            return WireError(rule=error.rule, offset=at, message=error.message, kind=error.kind)

    def _fresh(self) -> None:
        self._decoder = Decoder(edition=self.edition, readings=self.readings, limits=self.limits)


def decode_publish_family(
    data: bytes,
    edition: Edition,
    readings: Mapping[str, str] | None,
    limits: Limits | None = None,
) -> Packet | WireError:
    """:meth:`PublishFamilyDecoder.decode` with a decoder kept per edition, readings and
    limits (:func:`decoder_for`)."""
    return decoder_for(edition, readings, limits).decode(data)


_DecoderKey = tuple[Edition, tuple[tuple[str, str], ...] | None, Limits | None]
_DECODERS: dict[_DecoderKey, PublishFamilyDecoder] = {}
#: the decoders kept (5.0 limits vary per connection: the cache must not grow with them)
_DECODERS_KEPT = 64


def decoder_for(
    edition: Edition, readings: Mapping[str, str] | None, limits: Limits | None
) -> PublishFamilyDecoder:
    """A :class:`PublishFamilyDecoder` for the edition, readings and limits, shared by
    every connection that asks for the same (a whole packet leaves a decoder as it found
    it; the codec's memory of the property sections it has judged is shared by every
    decoder of a reading)."""
    key = (edition, None if readings is None else tuple(sorted(readings.items())), limits)
    decoder = _DECODERS.get(key)
    if decoder is None:
        if len(_DECODERS) >= _DECODERS_KEPT:
            _DECODERS.clear()
        decoder = _DECODERS[key] = PublishFamilyDecoder(edition, readings, limits)
    return decoder
