"""Where the pipeline's Arrow buffers come from: the C library's ``malloc``.

pyarrow takes its buffers from its default pool, mimalloc in the wheels on Linux. Its
segments are marked for transparent huge pages, and memory it frees goes back to the
system after a few milliseconds: the next batch of rows then faults in fresh 2 MiB pages,
each zeroed by the kernel first. ``pubproof check`` builds and drops Arrow columns all
the time (every run of rows, every merge round): on the real mosquitto capture of the
benchmarks the kernel's page clearing alone was 8% of the python engine's samples (perf).
With ``malloc``'s pool (``pyarrow.system_memory_pool``) the run takes less CPU time and
less peak memory (the figures are in the README's Performance section).

Both engines call :func:`arrow_from_malloc` before their first Arrow buffer: the python
engine's process, the Spark driver (before the JVM starts, whose Python workers inherit
its environment) and every Spark task (a cluster's workers do not). A pool the user chose
with ``ARROW_DEFAULT_MEMORY_POOL`` is kept.
"""

from __future__ import annotations

import os
import sys

#: pyarrow's own variable for its default pool, read when pyarrow is imported
POOL_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"
SYSTEM = "system"


def arrow_from_malloc() -> None:
    """Make ``malloc``'s pool pyarrow's default in this process (and, through the
    environment, in the processes it starts), unless ``ARROW_DEFAULT_MEMORY_POOL`` names
    another. pyarrow is not imported here: a process that has not imported it yet gets
    the variable, which pyarrow reads at its import."""
    if os.environ.get(POOL_VARIABLE, SYSTEM) != SYSTEM:
        return  # the user's choice
    os.environ[POOL_VARIABLE] = SYSTEM
    if "pyarrow" in sys.modules:  # imported already: the variable was read before
        import pyarrow as pa

        if pa.default_memory_pool().backend_name != SYSTEM:
            pa.set_memory_pool(pa.system_memory_pool())
