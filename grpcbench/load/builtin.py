"""The built-in driver: runs the load engine (closed or open loop) in generator subprocesses.

With ``processes > 1`` the level's concurrency, request budget and rate are
split across processes and their results merged (histograms merge exactly).
Several scenarios at once (the job's ``parts``) each get ``processes`` of their own.
Each generator reports over a pipe of its own (``load.generator``), and is kept
for the run's next level (``load.generator_process``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from functools import reduce
from typing import Any

from grpcbench.load.driver import MEASUREMENT_STARTED, DriverSettings, ProgressCallback
from grpcbench.load.generator_process import GeneratorProcess
from grpcbench.model.intervals import IntervalFigures
from grpcbench.model.load_result import GeneratorJob, LoadResult, ScenarioFigures, Share
from grpcbench.observe.cpu_share import NeighbourMeter


def split(total: int, parts: int) -> list[int]:
    """Split ``total`` into ``parts`` near-equal non-negative integers."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def split_spec(spec: GeneratorJob, processes: int) -> list[GeneratorJob]:
    """The level's share split among ``processes`` generators, near-equally."""
    share = spec.share
    processes = max(1, min(processes, share.concurrency))
    concurrencies = split(share.concurrency, processes)
    requests = split(share.requests, processes)
    warmups = split(share.warmup_requests, processes)
    per_request = spec.connection_mode == "per-request"
    per_user = spec.connection_mode == "per-user"
    connections = split(max(share.connections, processes), processes)
    return [
        replace(
            spec,
            share=Share(
                concurrency=concurrencies[i],
                requests=requests[i],
                warmup_requests=warmups[i],
                connections=(
                    0 if per_request else concurrencies[i] if per_user else max(1, connections[i])
                ),
                rate=share.rate / processes,
                index=i,
                of=processes,
            ),
        )
        for i in range(processes)
    ]


def cap_cpu_budget(result: LoadResult, cpus: tuple[int, ...]) -> LoadResult:
    """Processes pinned to fewer CPUs than there are processes share those CPUs."""
    if cpus and result.cpu_cores > len(cpus):
        return replace(result, cpu_cores=float(len(cpus)))
    return result


def scenario_figures(
    jobs: tuple[GeneratorJob, ...], split: list[list[GeneratorJob]], results: list[LoadResult]
) -> tuple[ScenarioFigures, ...]:
    """Each scenario's figures: its processes' results merged (``results`` are in the
    order of ``split``'s parts), named, described and judged as its job says."""
    figures, start = [], 0
    for job, job_parts in zip(jobs, split, strict=True):
        call = job.call or {}
        merged = reduce(LoadResult.merge, results[start : start + len(job_parts)])
        start += len(job_parts)
        expected = tuple(call.get("expected") or ())
        figures.append(ScenarioFigures(str(call.get("label", "")), job.plan.describe(), expected,
                                       merged))  # fmt: skip
    return tuple(figures)


class BuiltinDriver:
    name = "builtin"
    live_intervals = True  # run() takes on_interval: --interval's live view

    def __init__(self, processes: int = 1, keep_processes: bool = False) -> None:
        self.processes = processes
        # Keep each generator for the next level: the run that made the driver closes it
        # (``driver.close_driver``); a driver used on its own stops them level by level.
        self.keep_processes = keep_processes
        # The level's generator processes while it runs (``--profile generator`` samples them).
        self.generator_pids: list[int] = []
        # Each generator slot's process, kept from one level to the next (the run's end
        # closes them): starting one costs 0.3 s of CPU (``load.generator_process``).
        self.kept: dict[int, GeneratorProcess] = {}
        # Each slot's process being started ahead of its first level (``warm``).
        self.starting: dict[int, asyncio.Task[GeneratorProcess]] = {}
        # Closed, their exits not yet awaited (``wait_closed``).

    def warm(self) -> None:
        """Start the generator processes now, as the run begins: their imports (0.3 s of
        CPU each) then pass while the run starts its servers and checks its targets,
        not at the start of its first level. Only for a driver that keeps them."""
        if not self.keep_processes:
            return
        for index in range(self.processes):
            if index not in self.kept and index not in self.starting:
                self.starting[index] = asyncio.ensure_future(GeneratorProcess.start())

    async def run(
        self,
        spec: GeneratorJob,
        progress: ProgressCallback,
        on_interval: Callable[[IntervalFigures], None] | None = None,
    ) -> LoadResult:
        # Several scenarios at once: each one's job split in turn, all side by side.
        jobs = spec.parts or (spec,)
        split = [split_spec(job, self.processes) for job in jobs]
        parts = [part for job_parts in split for part in job_parts]
        done = [0] * len(parts)
        errors = [0] * len(parts)
        measuring = [False] * len(parts)
        measured = [False] * len(parts)
        # An interval is shown once every process has closed it, merged.
        pending: dict[int, list[IntervalFigures]] = {}

        neighbours = NeighbourMeter(spec.settings.client_cpus)

        def on_event(index: int, event: dict[str, Any]) -> None:
            if event["event"] == "measuring":
                measuring[index] = True
                if all(measuring):
                    neighbours.start()
                    progress(MEASUREMENT_STARTED, 0)
            elif event["event"] == "measured":
                measured[index] = True
                if all(measured):  # the window ends with the phase, not with the results
                    neighbours.stop()
            elif event["event"] == "progress":
                done[index] = event["done"]
                errors[index] = event.get("errors", 0)
                progress(sum(done), sum(errors))
            elif event["event"] == "interval" and on_interval is not None:
                figures = IntervalFigures.from_json(event["figures"])
                closed = pending.setdefault(figures.index, [])
                closed.append(figures)
                if len(closed) == len(parts):
                    del pending[figures.index]
                    on_interval(reduce(IntervalFigures.merge, closed))

        def events_of(index: int) -> Callable[[dict[str, Any]], None]:
            return lambda event: on_event(index, event)

        tasks = [
            asyncio.ensure_future(self._run_one(i, part, events_of(i)))
            for i, part in enumerate(parts)
        ]
        try:
            results = await asyncio.gather(*tasks)
        except BaseException:  # one failed, or the level is cancelled: stop the others too
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        merged = cap_cpu_budget(reduce(LoadResult.merge, results), spec.settings.client_cpus)
        if spec.parts:
            merged = replace(merged, scenarios=scenario_figures(spec.parts, split, results))
        others, steal = neighbours.taken(merged.cpu_cores, merged.client_cpu_s)
        return replace(merged, client_others_s=others, client_steal_share=steal)

    async def _run_one(
        self, index: int, spec: GeneratorJob, on_event: Callable[[dict[str, Any]], None]
    ) -> LoadResult:
        """Generator slot ``index``'s share, on its process from the last level if that
        one is still good for it, else on a new one (kept for the next level)."""
        process = self.kept.pop(index, None)
        starting = self.starting.pop(index, None)
        if process is None and starting is not None:
            process = await starting
        if process is not None and not process.reusable:
            process.close()
            process = None
        if process is None:
            process = await GeneratorProcess.start()
        self.generator_pids.append(process.pid)
        try:
            result = await process.run(spec, on_event)
        finally:
            self.generator_pids.remove(process.pid)
        if self.keep_processes:
            self.kept[index] = process
        else:
            await process.stop()
        return result

    def close(self) -> None:
        """The run is over: the kept generators exit (the runner's end reaps them,
        ``processes.reap_all``)."""
        closing = list(self.kept.values())
        self.kept.clear()
        for starting in self.starting.values():  # warmed, never used (the run failed)
            if starting.done() and not starting.cancelled() and starting.exception() is None:
                closing.append(starting.result())
            else:
                starting.cancel()
        self.starting.clear()
        for process in closing:
            process.close()


def create(settings: DriverSettings) -> BuiltinDriver:
    return BuiltinDriver(
        processes=settings.client_processes, keep_processes=settings.keep_generators
    )
