"""User code that holds a Dask worker's event loop: said by the worker, read by the coordinator.

On a worker, as in a generator process (``load.loop_watchdog``), a flow or workload
that blocks (``time.sleep``, a lock, a busy loop) stops every call of its share and
every check of the coordinator's lease: the task can neither end nor be stopped.
The worker's watchdog then names the user's frame in a Dask ``Variable`` of the
level's own and ends the worker process, the only way to give the worker back (its
nanny starts a new one). The coordinator, which sees only a worker that left, reads
the variable and says that instead.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable
from typing import Any, TypeVar

from grpcbench.load.loop_watchdog import watched
from grpcbench.model.plan import LoadSettings

T = TypeVar("T")

SAY_TIMEOUT_S = 5.0  # the scheduler round trip that carries the line, before the exit


def _name(run_id: str) -> str:
    return f"{run_id}-held"


async def watched_on_worker(
    work: Awaitable[T], run_id: str, address: str, settings: LoadSettings
) -> T:
    """Await ``work`` (a worker's share of a level) with its loop watched, to the
    limits ``settings`` gives (``--stall-limit``, ``--generator-memory-limit``)."""
    from distributed import Variable, get_client

    said = Variable(_name(run_id), client=get_client())

    def say(message: str) -> None:  # in the watchdog's thread: the loop is held
        with contextlib.suppress(Exception):
            said.set(f"cluster worker {address}: {message}", timeout=SAY_TIMEOUT_S)

    return await watched(work, say, settings.stall_limit_s, settings.generator_memory_bytes)


def held_message(client: Any, run_id: str) -> str:
    """What a worker's watchdog said of this level ("" when none did); forgotten then."""
    from distributed import Variable

    said = Variable(_name(run_id), client=client)
    try:
        message = str(said.get(timeout=0.5))
    except Exception:  # noqa: BLE001 - not set (TimeoutError), or the scheduler is gone
        return ""
    with contextlib.suppress(Exception):
        said.delete()
    return message
