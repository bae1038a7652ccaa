"""The capture pipeline's layout tricks, and why they exist: said once, here.

The readable judges (:mod:`pubproof.judge`) read the model's tables at every packet and
call a helper wherever one says what is meant; the probe and every other application that
does not need speed use them. The capture pipeline judges millions of packets, so its
per-packet path (the modules of ``COMPILED`` in :mod:`pubproof.pipeline.compiled`,
compiled by mypyc) uses twins of those judges (:mod:`.link`, :mod:`.link50`, :mod:`.ends`,
:mod:`.aliases`), held equal to them finding for finding by ``tests/test_judge_twins.py``,
and a few tricks of object layout that the rest of the pipeline shares. Each one was
measured (instructions counted under valgrind, or CPU time, on the 200,000-frame captures
of ``benchmarks/bench_pipeline.py --editions``; the README's Status gives the history),
and each site says which trick it uses, pointing here:

- **Tables compiled to typed entries.** A twin reads each table once, at import, into
  tuples of frozen entries indexed by a state's position in its enum: a packet costs a
  few tuple and dict look-ups, where an enum's ``__hash__`` (a Python call) would be paid
  at every look-up keyed by a member. The entries are the model's, entry by entry
  (``tests/test_judge_twins.py``).
- **Helpers inlined.** Where a helper ran once per packet, the twin has its body in
  place, with a comment naming the helper (``# _code, inlined``): a call costs about as
  much as the work. The differential tests kill the mutants of the inlined copies
  (``FAST_MUTANTS`` in ``tests/test_judge_twins.py``).
- **Final aliases.** mypyc compiles a module-level name marked ``Final`` to a C static
  read directly; any other module-level name, an imported one included, is a look-up in
  the module's dict at every use. So a name the per-packet path reads is bound again as
  this module's own ``Final`` (``_P_FIELDS: Final = P_FIELDS``). A ``Final`` table is
  also read past any patch of the module: the mutants of the twins run in the pure pass
  (``PUBPROOF_PURE=1``, ``tests/support/builds.py``'s ``pure_only``), which reads the source.
- **Plain slotted classes** for what is made once per packet or flow, not dataclasses or
  named tuples: mypyc makes a plain class's instances natively, where a dataclass's
  generated ``__init__`` and a named tuple's ``__new__`` run as interpreted Python (about
  1,200 instructions each, counted).
- **Named tuples made by** :data:`new_tuple`: where a named tuple is kept (a frame, an
  owed answer that must compare as a tuple), ``tuple.__new__(Cls, values)`` builds it in
  C from a tuple of its fields, past its interpreted ``__new__``; the defaults of the
  fields not given are the caller's to add.
- **A dict's keys read directly** (:func:`as_dict`): a compiled ``dict.get`` is a C call,
  ``Mapping.get`` a method call through the abstract class (about five times the
  instructions); the entry points copy any other mapping once.
- **Memos keyed by identity** (``pipeline.describe``): a value that many packets share
  (an edition, a decoded property section) is looked up by ``id()``, one pointer, where
  hashing it by value would cost a Python call or a walk of its fields. Such a memo keeps
  the object itself beside the entry, or keys only objects that live for the whole
  process (the editions), so an id is never reused for another object while its entry
  stands; and it is bounded (cleared when full).

The reference codec's own tricks (building a frozen dataclass by swapping the class of a
slotted twin) are explained in :mod:`pubproof.reference.layout`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

#: ``tuple.__new__``: a named tuple built in C from a tuple of its fields (see above)
new_tuple: Final = tuple.__new__


def as_dict(fields: Mapping[str, Any]) -> dict[str, Any]:
    """``fields`` itself when it is a dict (what the capture pipeline and the probe hand
    the judges), else a copy: the compiled judges read a dict's keys directly."""
    return fields if type(fields) is dict else dict(fields)
