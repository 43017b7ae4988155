"""The cluster driver: the built-in engine in Dask distributed workers (``--cluster``).

Load beyond one machine runs on an existing distributed engine, not a home-made
one: ``local:N`` starts a ``LocalCluster`` of N worker processes here;
``tcp://SCHEDULER:8786`` uses the workers of a running cluster (``dask
scheduler`` + ``dask worker`` on other machines, or dask-kubernetes).

A level's concurrency, request budget and rate are split over the workers as
``--client-processes`` splits them over processes (``builtin.split_spec``);
a closed loop's ``-n`` budget only one chunk each: the rest sits in a Dask
queue in chunks that any worker takes as it runs (``load.shared_calls``), so a slow
worker leaves no tail where only it runs.
Each worker runs the built-in engine (asyncio inside a Dask task), warms up,
then waits at a barrier (a Dask ``Event``): the coordinator starts every
worker's measured phase at once, when all are ready. The results merge
exactly (counts add, HDR histograms merge); each worker's address, calls, CPU
and saturation stay beside the merged figures. A worker that fails, leaves,
or is late is a level error naming it; the level never hangs (it is bounded
by the level's own time limits). Cancelling a Dask future does not stop a task
that already runs, so each worker's task watches its own state and ends its
load within ``POLL_S`` once the coordinator lets it go: Ctrl-C, a failed
level, or a coordinator that died (its client gone).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
import uuid
import warnings
from collections.abc import Callable
from dataclasses import replace
from functools import reduce
from typing import Any

from grpcbench import __version__
from grpcbench.base.child_setup import pin_to
from grpcbench.base.errors import DriverError, OneLineError, UsageError
from grpcbench.load.builtin import cap_cpu_budget, split_spec
from grpcbench.load.driver import MEASUREMENT_STARTED, DriverSettings, ProgressCallback
from grpcbench.load.interval_merger import IntervalMerger
from grpcbench.load.shared_calls import SharedCalls, pool_plan
from grpcbench.model.intervals import IntervalFigures
from grpcbench.model.load_result import LoadResult, LoadSpec, WorkerFigures
from grpcbench.observe.cpu_share import NeighbourMeter

EXTRA_HINT = "pip install 'grpcbench[cluster]'"
CONNECT_TIMEOUT_S = 10.0
WORKERS_TIMEOUT_S = 30.0
POLL_S = 0.1
# A worker's set-up and warm-up may take this long beyond the level's own limit.
GRACE_S = 30.0
CLAIM_TIMEOUT_S = 10.0  # a claim of more calls from the pool, scheduler round trip included
# The coordinator's lease on its workers' load: it renews it every LEASE_BEAT_S; a worker
# that sees no renewal for LEASE_S (the coordinator frozen or gone, the scheduler lost)
# stops its load, whatever state Dask still gives its task.
LEASE_BEAT_S = 0.5
LEASE_S = 4.0


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise UsageError(f"--cluster needs Dask distributed: {EXTRA_HINT}") from None
    return distributed


def worker_version() -> dict[str, str]:
    """Runs on every worker (and here): what a worker's figures depend on - grpcbench,
    Python, grpcio, protobuf, distributed, and every service plugin installed."""
    import platform
    from importlib import metadata

    import grpcbench

    versions = {"grpcbench": grpcbench.__version__, "Python": platform.python_version()}
    for name in ("grpcio", "protobuf", "distributed"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    for entry in metadata.entry_points(group="grpcbench.services"):
        dist = entry.dist
        if dist is not None:
            versions[f"plugin {dist.name}"] = dist.version
    return versions


def check_versions(
    versions: dict[str, dict[str, str] | str], expected: dict[str, str] | None = None
) -> None:
    """Every worker runs what this machine runs, or one line naming each difference."""
    mine = expected if expected is not None else worker_version()
    problems = []
    for address, theirs in sorted(versions.items()):
        if isinstance(theirs, str):  # a worker of an older grpcbench reports only its own
            theirs = {"grpcbench": theirs}
        for name, version in sorted(mine.items()):
            if theirs.get(name) != version:
                problems.append(f"{address} has {name} {theirs.get(name, 'missing')}")
    if problems:
        ours = ", ".join(f"{name} {version}" for name, version in sorted(mine.items()))
        raise UsageError(
            f"cluster workers run other versions than this machine ({ours}): " + "; ".join(problems)
        )


def loopback_identity() -> str:
    """Runs on every worker (and here): which loopback this process dials, its kernel's
    boot id and its network namespace. Two processes that share both reach the same
    127.0.0.1; a worker on another machine, or in another container, does not."""
    import os

    try:
        with open("/proc/sys/kernel/random/boot_id") as boot:
            kernel = boot.read().strip()
        namespace = str(os.stat("/proc/self/ns/net").st_ino)
    except OSError:  # not Linux: the host's name is the best one can say
        import socket

        return f"host:{socket.gethostname()}"
    return f"{kernel}/{namespace}"


def dials_this_machine(host: str) -> bool:
    """Whether ``host`` (as a target's) means this machine's own loopback: a loopback
    or wildcard address, or a name that resolves to one (``localhost``, a hosts entry)."""
    import ipaddress
    import socket

    name = host.strip("[]")
    try:
        found = {info[4][0] for info in socket.getaddrinfo(name, None)}
    except (OSError, UnicodeError):
        return False  # the check that the target answers will say why
    for address in found:
        ip = ipaddress.ip_address(str(address).split("%", 1)[0])
        if ip.is_loopback or ip.is_unspecified:
            return True
    return False


def _host(address: str) -> str:
    """``tcp://10.0.0.1:4001`` -> ``10.0.0.1``."""
    return address.split("://", 1)[-1].rsplit(":", 1)[0]


def spread_over_hosts(addresses: list[str]) -> list[str]:
    """Workers ordered host by host in turn (tcp://A:1, tcp://B:1, tcp://A:2, ...), so
    --cluster-workers N takes them from every host rather than packing the first."""
    by_host: dict[str, list[str]] = {}
    for address in sorted(addresses):
        by_host.setdefault(_host(address), []).append(address)
    spread = []
    for turn in range(max((len(group) for group in by_host.values()), default=0)):
        spread += [group[turn] for group in by_host.values() if turn < len(group)]
    return spread


def _pin_worker(spec: LoadSpec) -> None:
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


async def _renew(lease: Any) -> None:
    """The coordinator's side of the lease: renewed until the level ends (cancelled)."""
    beat = 0
    while True:
        await asyncio.sleep(LEASE_BEAT_S)
        beat += 1
        with contextlib.suppress(Exception):  # a lost scheduler ends the level elsewhere
            await asyncio.to_thread(lease.set, beat)


async def _until_abandoned(work: Any, abandoned: Callable[[], bool]) -> Any:
    """Run ``work``; cancel it as soon as the task is let go, so no load outlives the run."""
    task = asyncio.ensure_future(work)
    while not task.done():
        await asyncio.wait([task], timeout=POLL_S)
        if not task.done() and abandoned():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            raise DriverError("stopped: the coordinator let this level go")
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

    spec = LoadSpec.from_json(spec_json)
    _pin_worker(spec)
    ready = Event(f"{run_id}-ready-{spec.share.index}")
    start = Event(f"{run_id}-start")
    let_go = abandoned_check()
    lease = WorkerLease(f"{run_id}-lease", get_client())

    def abandoned() -> bool:
        return let_go() or lease.lost()

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

    try:
        result: LoadResult = run(
            _until_abandoned(
                run_level(spec, lambda: None, lambda done, errors: None,
                          before_measuring=barrier, shared=shared,
                          on_interval=send_interval if live is not None else None),
                abandoned,
            ),
            use_uvloop=spec.settings.client_loop == "uvloop",
        )  # fmt: skip
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


def _pooled(
    parts: list[LoadSpec], client: Any, run_id: str
) -> tuple[list[LoadSpec], Any, tuple[str, int] | None]:
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


class _DaskTaskNoise(logging.Filter):
    """Drops asyncio's "exception was never retrieved" for Dask's own tasks: a worker
    killed mid-level leaves the scheduler (in this process for local:N) a request it
    can no longer answer, whose TimeoutError asyncio then prints with its traceback;
    the level error names the worker in one line. Any other task's is kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        if "exception was never retrieved" not in str(record.msg) or not record.exc_info:
            return True
        trace = record.exc_info[2]
        while trace is not None:
            if f"{os.sep}distributed{os.sep}" in trace.tb_frame.f_code.co_filename:
                return False
            trace = trace.tb_next
        return True


def _quiet_dask_tasks() -> None:
    asyncio_logger = logging.getLogger("asyncio")
    if not any(isinstance(f, _DaskTaskNoise) for f in asyncio_logger.filters):
        asyncio_logger.addFilter(_DaskTaskNoise())


class ClusterDriver:
    name = "dask"
    live_intervals = True  # run() takes on_interval: the workers' intervals, merged

    def __init__(self, cluster: str, workers: int | None = None) -> None:
        """Connects now, so an unreachable scheduler or a wrong worker is an error before load."""
        distributed = _import_distributed()
        self.local = None
        try:
            if cluster.startswith("local:"):
                from grpcbench.load.local_cluster import start_local_cluster

                self.local = start_local_cluster(int(cluster.partition(":")[2]))
                address = self.local.scheduler_address
            else:
                address = cluster
            with warnings.catch_warnings():  # versions are checked below, in one line
                warnings.simplefilter("ignore")
                self.client = distributed.Client(
                    address, timeout=f"{CONNECT_TIMEOUT_S}s", set_as_default=False
                )
        except (OSError, TimeoutError) as error:
            self.close()
            raise UsageError(f"cannot reach the Dask scheduler at {cluster}: {error}") from None
        self.wanted = workers
        self.scheduler_address = address
        # A lost scheduler is said in one line (a level error); Dask's client would
        # log its reconnection attempts and their tracebacks on stderr besides.
        for name in ("distributed.client", "distributed.core", "distributed.comm"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        _quiet_dask_tasks()
        self.notes: list[str] = []  # said once, before the first level (Runner)
        # The level's live view while it runs: the workers' queue of intervals, their
        # merger, and where whole intervals go (None: no --interval, or no level).
        self._live: tuple[Any, IntervalMerger, Callable[[IntervalFigures], None]] | None = None
        self._live_every_s = 0.0
        self._live_next = 0.0  # when the live queue is next read
        # Checks that touch the target run on a worker of a cluster elsewhere: this
        # machine may not reach the target at all (targets.check_site).
        self.check_site: WorkerSite | None = None if self.local is not None else WorkerSite(self)
        try:
            self.addresses = self._choose_workers(workers)
        except BaseException:
            self.close()
            raise

    def _choose_workers(self, wanted: int | None) -> list[str]:
        try:
            self.client.wait_for_workers(wanted or 1, timeout=WORKERS_TIMEOUT_S)
        except (TimeoutError, OSError):
            have = len(_all_workers(self.client))
            raise UsageError(
                f"the Dask cluster has {have} worker(s); --cluster-workers asks"
                f" {wanted or 1} (none joined within {WORKERS_TIMEOUT_S:.0f}s)"
            ) from None
        try:
            versions = self.client.run(worker_version, on_error="return")
        except Exception as error:  # noqa: BLE001 - the function could not be sent at all
            raise UsageError(
                f"the Dask workers cannot run grpcbench ({type(error).__name__}: {error});"
                f" install grpcbench {__version__} on every worker"
            ) from None
        failed = {a: v for a, v in versions.items() if isinstance(v, BaseException)}
        if failed:  # a worker without grpcbench: name it
            address, failure = next(iter(sorted(failed.items())))
            more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
            raise UsageError(
                f"cluster worker {address}{more} cannot run grpcbench"
                f" ({type(failure).__name__}: {failure}); install grpcbench {__version__}"
                " on every worker"
            )
        check_versions(versions)
        self.identities: dict[str, str] = self.client.run(loopback_identity)
        addresses = spread_over_hosts(list(versions))
        chosen = addresses[:wanted] if wanted else addresses
        workers = _all_workers(self.client)
        threaded = [a for a in chosen if int(workers.get(a, {}).get("nthreads", 1)) > 1]
        self.notes = (
            [
                f"cluster worker(s) {', '.join(threaded[:3])} have several threads in one"
                " process: grpcbench runs one generator per worker process (one Python"
                " process is one core of client), so the other threads stay idle; start"
                " workers with --nthreads 1 --nworkers N for N generators per machine"
            ]
            if threaded
            else []
        )
        return chosen

    def check_reach(self, host: str) -> None:
        """A loopback target is this machine's own: workers elsewhere (another machine,
        another container) would dial their own loopback. Decided by resolving the
        host here and asking each worker which loopback it has (``loopback_identity``),
        not by reading addresses. Refused before anything starts, naming the fix."""
        if not dials_this_machine(host):
            return
        mine = loopback_identity()
        identities = getattr(self, "identities", None) or {}
        remote = [a for a in self.addresses if identities.get(a, "") != mine]
        if remote:
            raise UsageError(
                f"the target's host {host} is this machine's loopback, which cluster workers"
                f" on other hosts ({', '.join(remote[:3])}) cannot reach: give --bind THIS_IP"
                " (and --port N for a firewall) for the servers grpcbench starts, or a"
                " --target address the workers can dial"
            )

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if getattr(self, "client", None) is not None:
                self.client.close()
        if self.local is not None:
            with contextlib.suppress(Exception):
                self.local.close()
            self.local = None

    async def run(
        self,
        spec: LoadSpec,
        progress: ProgressCallback,
        on_interval: Callable[[IntervalFigures], None] | None = None,
    ) -> LoadResult:
        """One level over the workers; ``on_interval`` (``--interval``): each interval,
        merged over them, once every worker has sent it (``interval_merger``)."""
        from distributed import Event, Queue, Variable

        if self.local is None:  # this machine's CPU numbers mean nothing on other machines
            spec = replace(spec, settings=replace(spec.settings, client_cpus=()))
        # The workers of now: a nanny may have restarted one under a new address.
        try:
            self.addresses = await asyncio.to_thread(self._choose_workers, self.wanted)
        except DriverError:
            raise
        except OneLineError as error:  # too few workers now: this level's error, not the run's
            raise DriverError(str(error)) from None
        neighbours = NeighbourMeter(spec.settings.client_cpus)
        parts = split_spec(spec, len(self.addresses))
        addresses = self.addresses[: len(parts)]
        run_id = f"grpcbench-{uuid.uuid4().hex}"
        limit_s = spec.settings.max_level_s + spec.settings.timeout_s + GRACE_S
        parts, queue, pool = await asyncio.to_thread(_pooled, parts, self.client, run_id)
        lease = Variable(f"{run_id}-lease", self.client)
        await asyncio.to_thread(lease.set, 0)
        renewing = asyncio.ensure_future(_renew(lease))
        live_name = f"{run_id}-intervals" if on_interval and spec.settings.interval_s else None
        self._live = None
        if live_name is not None and on_interval is not None:
            live = await asyncio.to_thread(Queue, live_name, self.client)
            self._live = (live, IntervalMerger(len(parts)), on_interval)
            # A quarter interval: an interval is shown at most that late, for a
            # quarter of the scheduler round trips a read every POLL_S costs at 1 s.
            self._live_every_s = max(POLL_S, spec.settings.interval_s / 4)
            self._live_next = time.monotonic()
        futures = [
            self.client.submit(
                run_on_worker, part.to_json(), run_id, limit_s, pool, live_name,
                workers=[address], allow_other_workers=False, pure=False, retries=0,
                key=f"{run_id}-{i}",
            )
            for i, (part, address) in enumerate(zip(parts, addresses, strict=True))
        ]  # fmt: skip
        ready = [Event(f"{run_id}-ready-{i}", self.client) for i in range(len(parts))]
        start = Event(f"{run_id}-start", self.client)
        try:
            await self._wait(futures, addresses, limit_s, lambda: all(e.is_set() for e in ready))
            await asyncio.to_thread(start.set)
            neighbours.start()
            progress(MEASUREMENT_STARTED, 0)
            await self._wait(futures, addresses, limit_s, lambda: all(f.done() for f in futures))
            try:
                results = [LoadResult.from_json(f.result(timeout=limit_s)) for f in futures]
            except Exception as error:  # noqa: BLE001 - a cancelled or failed Dask future
                reason = " ".join(str(error).split())  # Dask's messages span lines
                if "scheduler-connection-lost" in reason or self._client_down():
                    raise DriverError(self._scheduler_lost()) from None
                raise DriverError(
                    f"a cluster worker's result was lost ({type(error).__name__}: {reason})"
                ) from None
        finally:
            renewing.cancel()
            for future in futures:
                future.cancel()
            await asyncio.to_thread(self._forget_events, [*ready, start])
            await asyncio.to_thread(self._forget_lease, lease)
            if queue is not None:
                queue.close()
            if self._live is not None:
                with contextlib.suppress(Exception):
                    self._live[0].close()
                self._live = None
        # A LocalCluster's workers share the client CPUs: their budget is those CPUs.
        merged = cap_cpu_budget(reduce(LoadResult.merge, results), spec.settings.client_cpus)
        if self.local is not None:  # this machine's CPUs: its neighbours are measured here
            others, steal = neighbours.taken(merged.cpu_cores, merged.client_cpu_s)
            merged = replace(merged, client_others_s=others, client_steal_share=steal)
        progress(merged.count, merged.count - merged.ok)
        return merged

    @staticmethod
    def _forget_lease(lease: Any) -> None:
        if getattr(lease.client, "status", "running") == "running":
            with contextlib.suppress(Exception):
                lease.delete()

    @staticmethod
    def _forget_events(events: list[Any]) -> None:
        """A level's barrier events are cleared, which deletes them on the scheduler
        (a long-lived cluster would otherwise keep every level's)."""
        if not events or getattr(events[0].client, "status", "running") != "running":
            return  # the scheduler is gone: nothing to clear, and no waiting on it
        for event in events:
            with contextlib.suppress(Exception):
                event.clear()

    def _poll(self, done: Callable[[], bool]) -> tuple[bool, set[str]]:
        """Blocking calls to the scheduler, run in a thread: ``done()`` and the live workers.

        A scheduler that went away is a level error, not a crash."""
        try:
            return done(), set(_all_workers(self.client))
        except Exception as error:  # noqa: BLE001 - distributed raises many kinds here
            reason = " ".join(str(error).split())
            raise DriverError(
                f"{self._scheduler_lost()} ({type(error).__name__}: {reason})"
            ) from None

    def _client_down(self) -> bool:
        return getattr(self.client, "status", "running") != "running"

    def _scheduler_lost(self) -> str:
        return (
            f"lost the Dask scheduler at {getattr(self, 'scheduler_address', '?')} during the"
            f" level; its workers stop their load within {LEASE_S:.0f}s (the lease)"
        )

    async def _wait(self, futures: list[Any], addresses: list[str], limit_s: float,
                    done: Callable[[], bool]) -> None:  # fmt: skip
        """Until ``done()``; a failed or vanished worker, or the time limit, is a level error.

        Each task's completion - a result, an error, a cancellation - wakes the wait at
        once (Dask's ``Future.add_done_callback``); between completions, worker
        membership and the time limit are checked every ``POLL_S``."""
        loop = asyncio.get_running_loop()
        woken = asyncio.Event()

        def wake(_: Any) -> None:  # in a thread of Dask's; the loop may be gone by then
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(woken.set)

        for future in futures:
            future.add_done_callback(wake)
        deadline = time.monotonic() + limit_s
        while True:
            woken.clear()
            finished, alive = await asyncio.to_thread(self._poll, done)
            await self._show_intervals(last=finished)
            if finished:
                return
            if self._client_down():
                # The scheduler went away: the workers' tasks look lost or their workers
                # gone, but neither is what happened.
                raise DriverError(self._scheduler_lost())
            for future, address in zip(futures, addresses, strict=True):
                if future.status == "error":
                    error = future.exception()
                    raise DriverError(f"cluster worker {address} failed: {error}")
                if future.status in ("cancelled", "lost"):
                    raise DriverError(
                        f"the Dask scheduler dropped the level's task on {address}"
                        " (the scheduler restarted or lost the worker)"
                    )
            gone = [address for address in addresses if address not in alive]
            if gone:
                raise DriverError(f"cluster worker {', '.join(gone)} left during the level")
            if time.monotonic() > deadline:
                late = [a for f, a in zip(futures, addresses, strict=True) if not f.done()]
                raise DriverError(
                    f"cluster workers did not finish within {limit_s:.0f}s: {', '.join(late)}"
                )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(woken.wait(), POLL_S)

    async def _show_intervals(self, last: bool) -> None:
        """The workers' intervals that arrived, merged; each whole one to the live view.
        The queue is read every quarter interval (a scheduler round trip each), and at
        the end."""
        if self._live is None or (not last and time.monotonic() < self._live_next):
            return
        self._live_next = time.monotonic() + self._live_every_s
        queue, merger, on_interval = self._live
        try:
            messages = await asyncio.to_thread(queue.get, batch=True)
        except Exception:  # noqa: BLE001 - the live view is best effort; _poll judges the level
            return
        for share, figures in messages:
            merger.add(int(share), IntervalFigures.from_json(figures))
        for whole in merger.ready():
            on_interval(whole)


PROBE_TIMEOUT_S = 120.0  # reflection, a certificate fetch and one call, with margin


class WorkerSite:
    """Runs a target check (targets.check_site) on the cluster's first worker."""

    def __init__(self, driver: ClusterDriver) -> None:
        self.driver = driver

    @property
    def where(self) -> str:
        return f"cluster worker {self.driver.addresses[0]}"

    async def __call__(self, function: Callable[..., Any], *args: Any) -> Any:
        address = self.driver.addresses[0]
        future = self.driver.client.submit(
            function, *args, workers=[address], allow_other_workers=False, pure=False,
            retries=0,
        )  # fmt: skip
        try:
            return await asyncio.to_thread(future.result, PROBE_TIMEOUT_S)
        except OneLineError:
            raise  # the check's own line (PreflightError and its exit code included)
        except Exception as error:  # noqa: BLE001 - Dask's, or a bug in the check
            reason = " ".join(str(error).split())
            raise UsageError(
                f"checking the target from cluster worker {address} failed"
                f" ({type(error).__name__}: {reason})"
            ) from None
        finally:
            future.cancel()


def _all_workers(client: Any) -> dict[str, Any]:
    """Every worker the scheduler knows: distributed 2025.4 to mid-2026 listed at most 5
    unless asked for all (dask/distributed#9045); older versions have no such argument."""
    try:
        info = client.scheduler_info(n_workers=-1)
    except TypeError:
        info = client.scheduler_info()
    workers: dict[str, Any] = info["workers"]
    return workers


def create(settings: DriverSettings) -> ClusterDriver:
    if not settings.cluster:
        raise UsageError("the dask driver needs --cluster (local:N or tcp://SCHEDULER:PORT)")
    return ClusterDriver(settings.cluster, settings.cluster_workers)
