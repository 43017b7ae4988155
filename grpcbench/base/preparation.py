"""A service's preparation (data, embedded backing services, a Maven fetch), stoppable at once.

Preparation is synchronous code (boto3, pymongo, subprocess), so it runs in a
thread of its own while the event loop waits; Ctrl-C cancels the wait, kills
the processes preparation started (its ``Preparation`` tracks them) and sets a
flag its loops check, so a run stops within about a second instead of minutes.
No module-level state: each run has its own ``Preparation``, which the code a
service's ``prepare`` calls finds through a context variable (``current()``).

The thread stays alive until the run ends: Linux sends the parent-death signal
when the *thread* that started a child exits, and the backing services it
started must live as long as the run.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
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
    """A backing service a run started (embedded S3, MongoDB, PostgreSQL), measured like
    the server (with its child processes)."""

    name: str  # as in the tables: "S3", "MongoDB", "PostgreSQL"
    pid: int
    gil: bool  # one Python process: it can keep one core busy at most


class PreparationCancelled(Exception):
    """Raised inside preparation once the run was interrupted."""


class Preparation:
    """One run's preparation: the backing services it started (measured like the
    server) and the CPUs they may use, the processes an interrupt must kill, and
    whether the run was interrupted. A run owns one (``RunContext``); the code a
    service's ``prepare`` calls finds it with ``current()``."""

    def __init__(self, backing_cpus: tuple[int, ...] = ()) -> None:
        self.backing_cpus = backing_cpus
        self.backing: list[BackingProcess] = []
        self._lock = threading.Lock()
        self._starting: set[subprocess.Popen[bytes]] = set()
        self._cancelled = threading.Event()

    def checkpoint(self) -> None:
        """Called by preparation's loops: stop here if the run was interrupted."""
        if self._cancelled.is_set():
            raise PreparationCancelled("interrupted")

    @contextlib.contextmanager
    def tracked(self, process: subprocess.Popen[bytes]) -> Iterator[subprocess.Popen[bytes]]:
        """While preparation waits on ``process``, an interrupt kills it."""
        with self._lock:
            self._starting.add(process)
        try:
            self.checkpoint()
            yield process
        finally:
            with self._lock:
                self._starting.discard(process)

    def register(self, name: str, pid: int, gil: bool) -> Callable[[], None]:
        """A backing service every level measures, until the returned callable runs."""
        entry = BackingProcess(name, pid, gil)
        self.backing.append(entry)
        return lambda: self.backing.remove(entry) if entry in self.backing else None

    def cancel(self) -> None:
        self._cancelled.set()
        with self._lock:
            processes = list(self._starting)
        for process in processes:
            with contextlib.suppress(OSError):
                process.kill()


_current: contextvars.ContextVar[Preparation] = contextvars.ContextVar("preparation")


def current() -> Preparation:
    """The preparation the calling code runs in (a standalone one outside a run)."""
    found = _current.get(None)
    if found is None:
        found = Preparation()
        _current.set(found)
    return found


def checkpoint() -> None:
    """``current().checkpoint()``: for the loops of a service's preparation."""
    current().checkpoint()


class PreparationThread(Generic[T]):
    def __init__(self, preparation: Preparation, work: Callable[[], T]) -> None:
        self._preparation = preparation
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
            context = contextvars.copy_context()
            context.run(_current.set, self._preparation)
            self._result.set_result(context.run(self._work))
        except BaseException as error:  # noqa: BLE001 - handed to the waiting event loop
            self._result.set_exception(error)
        self._release.wait()

    async def run(self) -> T:
        """The work's result; cancelled, it stops the work's processes and loops first."""
        self._thread.start()
        try:
            return await asyncio.wrap_future(self._result)
        except asyncio.CancelledError:
            self._preparation.cancel()
            concurrent.futures.wait([self._result], timeout=CANCEL_GRACE_S)
            raise

    def release(self) -> None:
        """The run is over (its backing services stopped): let the thread end."""
        self._release.set()
