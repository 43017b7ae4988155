"""The cyclic garbage collector, tuned while a level's load runs.

A call's objects (its stream, its frames' buffers, its callbacks) are freed by
reference counting when it ends; the collector finds nothing in them. But with its
default threshold (a young collection every 700 allocations) it still walks them while
they are alive, and with many calls in flight (1,000 connections, one call each) most
young objects are alive at every collection: they are walked, promoted and walked
again. At c=1000 over 1,000 connections that was 8% of the generator's CPU (py-spy
--native). During a level the threshold is raised, and what existed before the level
(modules, the plan, the connections' codecs) is frozen out of every collection; both
are put back after, so a process that runs other things (a Dask worker) keeps its own.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

# Allocations between young collections during a level (Python's default: 700).
LEVEL_THRESHOLD = 100_000


@contextlib.contextmanager
def tuned_for_load() -> Iterator[None]:
    """The collector as a level wants it, restored after."""
    before = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(LEVEL_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
