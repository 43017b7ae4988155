"""A service's preparation (data, embedded S3 and MongoDB, a Maven fetch), stoppable at once.

Preparation is synchronous code (boto3, pymongo, subprocess), so it runs in a
thread of its own while the event loop waits; Ctrl-C cancels the wait, kills
the processes preparation started (they are tracked here) and sets a flag its
loops check, so a run stops within about a second instead of minutes.

The thread stays alive until the run ends: Linux sends the parent-death signal
when the *thread* that started a child exits, and the backing services it
started must live as long as the run.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

# How long a cancelled preparation may take to notice before the run goes on without it.
CANCEL_GRACE_S = 3.0


@dataclass(frozen=True)
class BackingProcess:
    """A backing service a run started (embedded S3, MongoDB), measured like the server."""

    name: str  # as in the tables: "S3", "MongoDB"
    pid: int
    gil: bool  # one Python process: it can keep one core busy at most


# The backing services started by the current run's preparation, and the CPUs
# they may use (away from the server's, where the machine allows it).
backing: list[BackingProcess] = []
backing_cpus: tuple[int, ...] = ()

_lock = threading.Lock()
_starting: set[subprocess.Popen[bytes]] = set()
_cancelled = threading.Event()


class PreparationCancelled(Exception):
    """Raised inside preparation once the run was interrupted."""


def checkpoint() -> None:
    """Called by preparation's loops: stop here if the run was interrupted."""
    if _cancelled.is_set():
        raise PreparationCancelled("interrupted")


@contextlib.contextmanager
def tracked(process: subprocess.Popen[bytes]) -> Iterator[subprocess.Popen[bytes]]:
    """While preparation waits on ``process``, an interrupt kills it."""
    with _lock:
        _starting.add(process)
    try:
        checkpoint()
        yield process
    finally:
        with _lock:
            _starting.discard(process)


def _kill_tracked() -> None:
    with _lock:
        processes = list(_starting)
    for process in processes:
        with contextlib.suppress(OSError):
            process.kill()


class PreparationThread(Generic[T]):
    def __init__(self, work: Callable[[], T]) -> None:
        self._work = work
        self._result: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._release = threading.Event()
        self._thread = threading.Thread(target=self._main, name="preparation", daemon=True)

    def _main(self) -> None:
        # Running from here on, so a cancel cannot void the result we are computing.
        if not self._result.set_running_or_notify_cancel():
            self._release.wait()
            return
        try:
            self._result.set_result(self._work())
        except BaseException as error:  # noqa: BLE001 - handed to the waiting event loop
            self._result.set_exception(error)
        self._release.wait()

    async def run(self) -> T:
        """The work's result; cancelled, it stops the work's processes and loops first."""
        _cancelled.clear()
        self._thread.start()
        try:
            return await asyncio.wrap_future(self._result)
        except asyncio.CancelledError:
            _cancelled.set()
            _kill_tracked()
            concurrent.futures.wait([self._result], timeout=CANCEL_GRACE_S)
            raise

    def release(self) -> None:
        """The run is over (its backing services stopped): let the thread end."""
        self._release.set()
