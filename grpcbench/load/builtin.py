"""The built-in driver: runs the load engine (closed or open loop) in generator subprocesses.

With ``processes > 1`` the level's concurrency, request budget and rate are
split across processes and their results merged (histograms merge exactly).
Each generator reports over a pipe of its own (``load.generator``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import replace
from functools import reduce
from typing import Any

from grpcbench.base.errors import DriverError
from grpcbench.base.processes import start_python_module
from grpcbench.load.driver import MEASUREMENT_STARTED, DriverSettings, ProgressCallback
from grpcbench.model.intervals import IntervalFigures
from grpcbench.model.load_result import GeneratorJob, LoadResult, Share
from grpcbench.observe.cpu_share import NeighbourMeter


class GeneratorError(DriverError):
    """A generator process failed; the level has no result."""


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


class BuiltinDriver:
    name = "builtin"
    live_intervals = True  # run() takes on_interval: --interval's live view

    def __init__(self, processes: int = 1) -> None:
        self.processes = processes
        # The level's generator processes while it runs (``--profile generator`` samples them).
        self.generator_pids: list[int] = []

    async def run(
        self,
        spec: GeneratorJob,
        progress: ProgressCallback,
        on_interval: Callable[[IntervalFigures], None] | None = None,
    ) -> LoadResult:
        parts = split_spec(spec, self.processes)
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

        results = await asyncio.gather(
            *(self._run_one(part, events_of(i)) for i, part in enumerate(parts))
        )
        merged = cap_cpu_budget(reduce(LoadResult.merge, results), spec.settings.client_cpus)
        others, steal = neighbours.taken(merged.cpu_cores, merged.client_cpu_s)
        return replace(merged, client_others_s=others, client_steal_share=steal)

    async def _run_one(
        self, spec: GeneratorJob, on_event: Callable[[dict[str, Any]], None]
    ) -> LoadResult:
        """One generator process. Its events come over a pipe of their own (pyperf's
        ``--pipe``), so whatever a workload prints or logs cannot corrupt them."""
        read_fd, write_fd = os.pipe()
        try:
            child = await start_python_module(
                "grpcbench.load.generator", ["--pipe", str(write_fd)],
                pass_fds=(write_fd,), quiet_stdout=True,
            )  # fmt: skip
        finally:
            os.close(write_fd)
        events, pipe = await _pipe_reader(read_fd)
        self.generator_pids.append(child.process.pid)
        try:
            assert child.process.stdin
            try:
                child.process.stdin.write((json.dumps(spec.to_json()) + "\n").encode())
                await child.process.stdin.drain()
                child.process.stdin.close()
            except (BrokenPipeError, ConnectionResetError):
                pass  # it exited before reading its spec: its exit code and stderr say why
            async for raw in events:
                event = json.loads(raw)
                if event["event"] == "result":
                    return LoadResult.from_json(event["result"])
                if event["event"] == "error":
                    raise GeneratorError(event["message"])
                on_event(event)
            await child.process.wait()
            tail = child.stderr_tail()
            raise GeneratorError(
                f"load generator exited with code {child.process.returncode} without a result"
                + (f":\n{tail}" if tail else "")
            )
        finally:
            self.generator_pids.remove(child.process.pid)
            with contextlib.suppress(ProcessLookupError):
                await child.stop()
            pipe.close()


async def _pipe_reader(fd: int) -> tuple[asyncio.StreamReader, asyncio.BaseTransport]:
    """An asyncio reader of a pipe's read end, and its transport (to close)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**24)  # a result line carries encoded histograms
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0)
    )
    return reader, transport


def create(settings: DriverSettings) -> BuiltinDriver:
    return BuiltinDriver(processes=settings.client_processes)
