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
import time
import uuid
import warnings
from collections.abc import Callable
from dataclasses import replace
from functools import reduce
from typing import Any

from grpcbench import __version__
from grpcbench.base.errors import DriverError, OneLineError, UsageError
from grpcbench.load.builtin import cap_cpu_budget, scenario_figures
from grpcbench.load.cluster_hosts import (
    WorkerSite,
    all_workers,
    check_versions,
    dials_this_machine,
    loopback_identity,
    refused_at_once,
    spread_over_hosts,
    worker_version,
)
from grpcbench.load.cluster_split import worker_jobs
from grpcbench.load.cluster_watchdog import held_message
from grpcbench.load.cluster_worker import LEASE_S, POLL_S, renew_lease, run_on_worker
from grpcbench.load.dask_logs import quiet_dask
from grpcbench.load.driver import MEASUREMENT_STARTED, DriverSettings, ProgressCallback
from grpcbench.load.interval_merger import IntervalMerger
from grpcbench.model.intervals import IntervalFigures
from grpcbench.model.load_result import GeneratorJob, LoadResult
from grpcbench.observe.cpu_share import NeighbourMeter

EXTRA_HINT = "pip install 'grpcbench[cluster]'"
CONNECT_TIMEOUT_S = 10.0
WORKERS_TIMEOUT_S = 30.0
# A worker's set-up and warm-up may take this long beyond the level's own limit.
GRACE_S = 30.0


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise UsageError(f"--cluster needs Dask distributed: {EXTRA_HINT}") from None
    return distributed


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
                refused = refused_at_once(address)
                if refused:
                    raise ConnectionRefusedError(refused)
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
        quiet_dask()
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
            have = len(all_workers(self.client))
            raise UsageError(
                f"the Dask cluster has {have} worker(s); --cluster-workers asks"
                f" {wanted or 1} (none joined within {WORKERS_TIMEOUT_S:.0f}s)"
            ) from None
        try:
            versions = self.client.run(worker_version, on_error="return")
        except Exception as error:  # noqa: BLE001 - the function could not be sent at all
            if self._client_down() or isinstance(error, OSError | TimeoutError):
                raise UsageError(self._lost_while("checking its workers", error)) from None
            raise UsageError(
                f"the Dask workers cannot run grpcbench ({type(error).__name__}: {error});"
                f" install grpcbench {__version__} on every worker"
            ) from None
        failed = {a: v for a, v in versions.items() if isinstance(v, BaseException)}
        if failed:  # a worker without grpcbench: name it
            address, failure = next(iter(sorted(failed.items())))
            more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
            if isinstance(failure, OSError | TimeoutError):  # gone, not without grpcbench
                raise UsageError(
                    f"cluster worker {address}{more} did not answer"
                    f" ({type(failure).__name__}: {failure})"
                )
            raise UsageError(
                f"cluster worker {address}{more} cannot run grpcbench"
                f" ({type(failure).__name__}: {failure}); install grpcbench {__version__}"
                " on every worker"
            )
        check_versions(versions)
        self.identities: dict[str, str] = self.client.run(loopback_identity)
        addresses = spread_over_hosts(list(versions))
        chosen = addresses[:wanted] if wanted else addresses
        workers = all_workers(self.client)
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
        spec: GeneratorJob,
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
        run_id = f"grpcbench-{uuid.uuid4().hex}"
        parts, grouped, queue, pool = await asyncio.to_thread(
            worker_jobs, spec, len(self.addresses), self.client, run_id
        )
        addresses = self.addresses[: len(parts)]
        limit_s = spec.settings.max_level_s + spec.settings.timeout_s + GRACE_S
        lease = Variable(f"{run_id}-lease", self.client)
        await asyncio.to_thread(lease.set, 0)
        renewing = asyncio.ensure_future(renew_lease(lease))
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
        except DriverError as error:  # a worker held by user code left: its watchdog says why
            said = await asyncio.to_thread(held_message, self.client, run_id)
            raise DriverError(said or str(error)) from None
        finally:
            renewing.cancel()
            for future in futures:
                # A client closed meanwhile (the scheduler lost) refuses: the lease stops
                # the workers' load then. The level's own error must not become this.
                with contextlib.suppress(Exception):
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
        if spec.parts:
            merged = replace(merged, scenarios=scenario_figures(spec.parts, grouped, results))
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
            return done(), set(all_workers(self.client))
        except Exception as error:  # noqa: BLE001 - distributed raises many kinds here
            reason = " ".join(str(error).split())
            raise DriverError(
                f"{self._scheduler_lost()} ({type(error).__name__}: {reason})"
            ) from None

    def _client_down(self) -> bool:
        return getattr(self.client, "status", "running") != "running"

    def _lost_while(self, doing: str, error: BaseException) -> str:
        """The scheduler went away before any level: not the workers' install."""
        return (
            f"lost the Dask scheduler at {getattr(self, 'scheduler_address', '?')} while"
            f" {doing} ({type(error).__name__})"
        )

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


def create(settings: DriverSettings) -> ClusterDriver:
    if not settings.cluster:
        raise UsageError("the dask driver needs --cluster (local:N or tcp://SCHEDULER:PORT)")
    return ClusterDriver(settings.cluster, settings.cluster_workers)
