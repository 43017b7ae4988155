"""Where the checks that touch the target run: here, or on a cluster worker.

Reaching an ``--target`` (TCP, then gRPC), ``--skipTLS``'s certificate fetch,
reflection and the pre-flight call must run where the load will come from.
With generators on this machine that is here; with ``--cluster tcp://...`` it
is a worker, because the machine running grpcbench may not reach the target at
all (a laptop that reaches the scheduler through a port-forward). A probe runs
one plain, picklable function there and returns its result or raises its error
(a ``OneLineError`` keeps its class and line).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol


class Probe(Protocol):
    where: str  # "here" or the worker's address, for messages

    async def __call__(self, function: Callable[..., Any], *args: Any) -> Any: ...


class LocalProbe:
    where = "here"

    async def __call__(self, function: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.to_thread(function, *args)


HERE = LocalProbe()
