"""The reference codec's layout tricks, and why they exist: said once, here.

**The layout swap.** The decoders (:mod:`.codec`'s 3.x fast path, :mod:`.fast50`) and the
trusted constructors (:func:`.packets.trusted_publish`, :data:`.packets.trusted_ack`,
:func:`.properties.trusted_publish_properties`, :func:`.properties.trusted_ack_properties`)
build the frozen dataclasses they return without calling them: they fill an instance of a
plain slotted twin of the class (:class:`.packets.PublishLayout` for
:class:`.packets.Publish`, :class:`.packets.AckLayout` for the acknowledgements,
:class:`.properties.PublishPropertiesLayout` and :class:`.properties.AckPropertiesLayout`
for the property sections), then assign ``__class__``. The dataclass's own constructor
runs its frozen ``__setattr__`` for every field and its ``__post_init__``, which checks
every field against the rules again; the decoder has already checked each field, more
strictly, as it read it. Measured on the Python source (one object, the best of five runs
of 200,000, on a shared machine):

=============================  ===============  ========
built                          the constructor  the swap
=============================  ===============  ========
``Publish``                    3.6 us           0.2 us
an acknowledgement (PUBACK)    1.5 us           0.3 us
``PublishProperties``          3.4 us           0.7 us
``AckProperties``              1.3 us           0.3 us
=============================  ===============  ========

A constructor costs more than the whole decode of a small PUBLISH. Python allows the
assignment only between classes of the same layout: the same ``__slots__``, in the same
order, on the same base. :func:`check_layout` says so at import for each pair, and each
module proves there that its trusted constructors build objects equal to, and printed
like, what the public constructors build: nothing downstream can tell them apart. Each
site of a swap says ``# the layout swap (reference.layout)``.

**Memos keyed by identity.** :func:`.codec.config_for` keeps the default configuration of
each edition by ``id(edition)``: an Enum member's ``__hash__`` is a Python call, and the
members live as long as the process, so their ids are never reused.

**Final aliases.** A name the compiled decoders read per packet is bound as the module's
own ``Final`` (``_PUBLISH_LAYOUT: Final = PublishLayout``): mypyc reads a ``Final`` as a C
static, any other module-level name from the module's dict
(:mod:`pubproof.pipeline.fast.layout` says the same for the pipeline).
"""

from __future__ import annotations


def check_layout(layout: type, cls: type) -> None:
    """Raise unless ``layout`` has ``cls``'s slots in the same order: the layout swap from
    one to the other needs it."""
    if getattr(layout, "__slots__", None) != getattr(cls, "__slots__", None):
        raise RuntimeError(f"the layout class {layout.__name__} no longer matches {cls.__name__}")
