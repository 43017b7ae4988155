"""The worker's side of the cluster driver: one Dask task runs one worker's share of
a level (``run_on_worker``), pinned, behind the common start, taking calls from the
level's pool, and stopping within ``POLL_S`` when its coordinator lets it go: the
task is cancelled, or the coordinator's lease is not renewed (both sides of the
lease live here: ``WorkerLease`` reads it, ``renew_lease`` renews it; and so do both
sides of the pool of calls: ``pooled`` fills it, ``_shared_calls`` takes from it)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from grpcbench.base.child_setup import pin_to
from grpcbench.base.errors import DriverError, UsageError
from grpcbench.load.cluster_watchdog import watched_on_worker
from grpcbench.load.shared_calls import SharedCalls, pool_plan
from grpcbench.model.intervals import IntervalFigures
from grpcbench.model.level_parts import WorkerFigures
from grpcbench.model.load_result import GeneratorJob, LoadResult

POLL_S = 0.1
CLAIM_TIMEOUT_S = 10.0  # a claim of more calls from the pool, scheduler round trip included
# The coordinator's lease on its workers' load: it renews it every LEASE_BEAT_S; a worker
# that sees no renewal for LEASE_S (the coordinator frozen or gone, the scheduler lost)
# stops its load, whatever state Dask still gives its task.
LEASE_BEAT_S = 0.5
LEASE_S = 4.0


def _pin_worker(spec: GeneratorJob) -> None:
    """A LocalCluster's workers share this machine: each takes one of the client CPUs."""
    if spec.settings.client_cpus:
        pin_to([spec.settings.client_cpus[spec.share.index % len(spec.settings.client_cpus)]])


def abandoned_check() -> Callable[[], bool]:
    """Inside a Dask task: whether the task was let go. Cancelling a future does not stop
    a task that already runs, but the worker marks it cancelled when the coordinator
    cancels it, stops, or is killed (its client is gone): the task polls this."""
    from distributed import get_worker
    from distributed.worker import thread_state  # type: ignore[attr-defined]

    worker = get_worker()
    key = getattr(thread_state, "key", None)

    def abandoned() -> bool:
        task = worker.state.tasks.get(key) if key is not None else None
        return task is None or task.state not in ("executing", "long-running")

    return abandoned


class WorkerLease:
    """The coordinator's heartbeat, as a worker sees it: a Dask Variable the coordinator
    renews every ``LEASE_BEAT_S``, read by a daemon thread of the task. Dask keeps a
    task ``executing`` while its coordinator is frozen (SIGSTOP), or for tens of seconds
    after the scheduler died; the lease ends the load within ``LEASE_S`` either way."""

    def __init__(self, name: str, client: Any) -> None:
        from distributed import Variable

        self.variable = Variable(name, client)
        self.seen: Any = None
        self.renewed = time.monotonic()
        self.done = threading.Event()
        threading.Thread(target=self._watch, name="grpcbench-lease", daemon=True).start()

    def _watch(self) -> None:
        while not self.done.wait(LEASE_BEAT_S):
            try:
                value = self.variable.get(timeout=LEASE_BEAT_S)
            except Exception:  # noqa: BLE001, S112 - not renewed: the scheduler or coordinator is gone
                continue
            if value != self.seen:
                self.seen = value
                self.renewed = time.monotonic()

    def lost(self) -> bool:
        return time.monotonic() - self.renewed > LEASE_S

    def close(self) -> None:
        self.done.set()


async def renew_lease(lease: Any) -> None:
    """The coordinator's side of the lease: renewed until the level ends (cancelled)."""
    beat = 0
    while True:
        await asyncio.sleep(LEASE_BEAT_S)
        beat += 1
        with contextlib.suppress(Exception):  # a lost scheduler ends the level elsewhere
            await asyncio.to_thread(lease.set, beat)


async def _until_abandoned(work: Any, abandoned: Callable[[], str]) -> Any:
    """Run ``work``; cancel it as soon as the task is let go, so no load outlives the run.
    ``abandoned``: why the task must stop ("" while it may go on)."""
    task = asyncio.ensure_future(work)
    while not task.done():
        await asyncio.wait([task], timeout=POLL_S)
        why = "" if task.done() else abandoned()
        if why:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            raise DriverError(f"stopped: {why}")
    return task.result()


def run_on_worker(
    spec_json: dict[str, Any],
    run_id: str,
    wait_s: float,
    pool: tuple[str, int] | None = None,
    intervals: str | None = None,
) -> dict[str, Any]:
    """A Dask task: one worker's share of a level, measured after the common start.

    It stops within ``POLL_S`` when the coordinator cancels it, stops or dies,
    and never waits at the barrier in a call that cannot be interrupted.
    ``pool`` (a Dask queue's name, its chunk size): where it takes more calls
    of a ``-n`` budget once its own share runs low. ``intervals`` (a Dask queue's
    name): where each interval goes as it closes, for the coordinator's live view."""
    from distributed import Event, Queue, get_client, get_worker

    from grpcbench.load.engine import run_level
    from grpcbench.servers.asyncio_loop import run

    spec = GeneratorJob.from_json(spec_json)
    _pin_worker(spec)
    ready = Event(f"{run_id}-ready-{spec.share.index}")
    start = Event(f"{run_id}-start")
    let_go = abandoned_check()
    lease = WorkerLease(f"{run_id}-lease", get_client())

    def abandoned() -> str:
        if let_go():
            return "the coordinator cancelled this level (or stopped, or its client is gone)"
        if lease.lost():
            return (
                f"the coordinator went silent: its lease was not renewed for {LEASE_S:g} s"
                " (frozen, or the scheduler lost)"
            )
        return ""

    async def barrier() -> None:
        await asyncio.to_thread(ready.set)
        deadline = time.monotonic() + wait_s
        while not await asyncio.to_thread(start.wait, POLL_S * 2):
            if time.monotonic() > deadline:
                raise UsageError(f"no start signal within {wait_s:.0f}s")

    queue, shared = _shared_calls(pool)
    live = Queue(intervals, client=get_client()) if intervals else None

    def send_interval(figures: IntervalFigures) -> None:
        """Off the generator's loop: a scheduler round trip must not delay its calls."""
        message = [spec.share.index, figures.to_json()]
        asyncio.get_running_loop().run_in_executor(None, _put_quietly, live, message)

    level = _until_abandoned(
        run_level(spec, lambda: None, lambda done, errors: None, before_measuring=barrier,
                  shared=shared, on_interval=send_interval if live is not None else None),
        abandoned,
    )  # fmt: skip
    try:
        result: LoadResult = run(
            watched_on_worker(level, run_id, get_worker().address, spec.settings),
            use_uvloop=spec.settings.client_loop == "uvloop",
        )
    finally:
        lease.close()
        if queue is not None:
            queue.close()
    address = get_worker().address
    finished = time.time()
    if not spec.settings.client_cpus:
        # On another host nobody measures this worker's neighbours: time it spent
        # runnable but waiting for a CPU is time it was starved, whoever took the CPU.
        result = replace(result, client_others_s=result.client_wait_s)
    figures = WorkerFigures(
        address=address,
        calls=result.count,
        wall_s=result.wall_s,
        cpu_s=result.client_cpu_s,
        saturation=result.client_saturation,
        started_unix=finished - result.wall_s,
        finished_unix=finished,
        statuses=dict(result.statuses),
        p50_us=result.latency.percentile_us(50),
        p99_us=result.latency.percentile_us(99),
    )
    return replace(result, driver="dask", workers=(figures,)).to_json()


def _put_quietly(queue: Any, message: Any) -> None:
    """A live interval that cannot be sent is left out of the live view (the level's
    own figures still hold it); the load goes on."""
    with contextlib.suppress(Exception):
        queue.put(message, timeout=CLAIM_TIMEOUT_S)


def _shared_calls(pool: tuple[str, int] | None) -> tuple[Any, SharedCalls | None]:
    """Inside a Dask task: the level's pool of calls, as the engine takes them."""
    if pool is None:
        return None, None
    from distributed import Queue

    name, chunk = pool
    queue = Queue(name)

    async def claim() -> int:
        # Never empty while a worker may ask: the coordinator put a 0 ("no more")
        # per worker after the chunks. The timeout only bounds a lost scheduler.
        return int(await asyncio.to_thread(queue.get, timeout=CLAIM_TIMEOUT_S))

    return queue, SharedCalls(claim, chunk)


def pooled(
    parts: list[GeneratorJob], client: Any, run_id: str
) -> tuple[list[GeneratorJob], Any, tuple[str, int] | None]:
    """A closed-loop ``-n`` level over several workers: each starts with one chunk, the
    rest goes into a Dask queue in chunks any worker takes (work stealing),
    so a slow worker leaves no tail. Other levels: as they are."""
    if len(parts) < 2 or parts[0].share.rate or not all(p.share.requests for p in parts):
        return parts, None, None
    from distributed import Queue

    own, chunks = pool_plan([part.share.requests for part in parts])
    if not chunks:
        return parts, None, None
    name = f"{run_id}-calls"
    queue = Queue(name, client)
    for chunk in [*chunks, *[0] * len(parts)]:  # a 0 per worker: "no more"
        queue.put(chunk)
    parts = [
        replace(part, share=replace(part.share, requests=mine))
        for part, mine in zip(parts, own, strict=True)
    ]
    return parts, queue, (name, chunks[0])
