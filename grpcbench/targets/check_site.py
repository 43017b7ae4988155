"""Where the checks that touch the target run: here, or on a cluster worker.

Reaching an ``--target`` (TCP, then gRPC), ``--skipTLS``'s certificate fetch,
reflection and the pre-flight call must run where the load will come from.
With generators on this machine that is here; with ``--cluster tcp://...`` it
is a worker, because the machine running grpcbench may not reach the target at
all (a laptop that reaches the scheduler through a port-forward). A check site
runs one plain, picklable function there and returns its result or raises its error
(a ``OneLineError`` keeps its class and line).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio


class CheckSite(Protocol):
    where: str  # "here" or the worker's address, for messages

    async def __call__(self, function: Callable[..., Any], *args: Any) -> Any: ...


class HereSite:
    """Runs the check in a daemon thread of its own: a check that hangs on a target
    that accepts and never answers (its own timeouts are seconds long) must not hold
    Ctrl-C up. ``asyncio.to_thread`` used the loop's default executor, which
    ``asyncio.run`` joins before it returns: Ctrl-C took 5-7 s to act."""

    where = "here"

    async def __call__(self, function: Callable[..., Any], *args: Any) -> Any:
        import asyncio  # here, not at import: `grpcbench --help` has no loop to pay for

        loop = asyncio.get_running_loop()
        done: asyncio.Future[Any] = loop.create_future()

        def settle(result: Any, error: BaseException | None) -> None:
            if done.cancelled():
                return
            if error is not None:
                done.set_exception(error)
            else:
                done.set_result(result)

        def run() -> None:
            try:
                outcome: tuple[Any, BaseException | None] = (function(*args), None)
            except BaseException as error:  # noqa: BLE001 - handed to the awaiting task
                outcome = (None, error)
            with contextlib.suppress(RuntimeError):  # the run ended meanwhile: loop closed
                loop.call_soon_threadsafe(settle, *outcome)

        threading.Thread(target=run, name="grpcbench-probe", daemon=True).start()
        return await done


HERE = HereSite()
