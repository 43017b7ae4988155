"""Calls shared by several generators: work stealing for a ``-n`` budget.

Split evenly, a count leaves a tail: the fastest generator finishes its share
and idles while the slowest still has calls, so the level ends late and its
req/s is the slow one's. Instead each generator starts with one chunk
and takes more in chunks from a pool as it runs (a cluster's pool is a Dask
queue), so they finish within about a chunk or two of each other and the
total is still exactly N: every chunk is taken once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

CHUNKS_PER_GENERATOR = 8  # a chunk is an eighth of an even share: the tail's size


@dataclass(frozen=True)
class SharedCalls:
    """Where a generator takes more calls: ``claim`` returns the next chunk's size,
    0 once the pool is empty (and forever after)."""

    claim: Callable[[], Awaitable[int]]
    chunk: int  # a chunk's size: take the next when this many or fewer are left


def pool_plan(requests: list[int]) -> tuple[list[int], list[int]]:
    """Each generator's even share -> what each starts with (one chunk), and the
    pool's chunks (the rest)."""
    total = sum(requests)
    size = max(1, -(-total // (CHUNKS_PER_GENERATOR * len(requests))))
    own = [min(share, size) for share in requests]
    pooled = total - sum(own)
    if pooled <= 0:
        return requests, []
    chunks = [size] * (pooled // size) + ([pooled % size] if pooled % size else [])
    return own, chunks
