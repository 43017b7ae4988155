"""One level, measured: shared by the CLI runner, the pytest plugin and the benchmarks.

``generator_job`` is the one place that turns load settings, a level plan and a
target into the plain ``GeneratorJob`` a driver runs; ``run_monitored`` drives it
and measures the target's process over the measured phase only. A run's
``RunContext.measure_level`` puts them together.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import psutil

from grpcbench.base.preparation import BackingProcess
from grpcbench.load.driver import MEASUREMENT_STARTED, LoadDriver
from grpcbench.model.intervals import IntervalFigures, LiveUsage
from grpcbench.model.level_scenarios import LevelScenario
from grpcbench.model.load_result import GeneratorJob, LoadResult, Share
from grpcbench.model.plan import LevelPlan, LoadSettings
from grpcbench.model.results import LevelResult
from grpcbench.observe.monitor import CpuMeter, ProcessMonitor, ProcessUsage
from grpcbench.profile.model import Profile, ProfileSettings
from grpcbench.profile.pyspy import Recorder
from grpcbench.rpc.call import MethodCall
from grpcbench.rpc.flow import PlannedFlow
from grpcbench.rpc.security import ChannelSecurity
from grpcbench.run.server_watch import unless_server_dies
from grpcbench.targets.base import Target


def generator_job(
    settings: LoadSettings,
    plan: LevelPlan,
    address: str,
    service: str,
    workload_params: Mapping[str, Any],
    call: MethodCall | None = None,
    security: ChannelSecurity | None = None,
    flow: PlannedFlow | None = None,
    scenarios: tuple[LevelScenario, ...] = (),
) -> GeneratorJob:
    """The level's job; with ``scenarios``, one part each: the call's ``mix[i]`` (its
    methods, in the scenarios' order) on scenario i's own executor."""
    job = GeneratorJob.for_level(
        address,
        service,
        plan,
        settings,
        workload_params=dict(workload_params),
        call=call.to_json() if call else None,
        security=security.to_json() if security and security.tls else None,
        flow=flow.to_json() if flow else None,
    )
    if not (scenarios and plan.scenarios and call is not None):
        return job
    parts = []
    for scenario, method in zip(scenarios, call.mix, strict=True):
        own = scenario.plan(plan, settings.max_in_flight)
        parts.append(replace(
            job, plan=own, share=Share.whole(own, settings),
            call=replace(method, label=scenario.name).to_json(),
            # Its own deadline ([[scenarios]] timeout), else the level's.
            settings=replace(settings, timeout_s=method.timeout_s or settings.timeout_s),
        ))  # fmt: skip
    return replace(job, parts=tuple(parts))


@dataclass(frozen=True)
class CellRecorders:
    """``--profile``'s recorders for one level: the server's, and (``--profile
    generator``) one for the generator's processes, made once the driver knows them."""

    server: Recorder | None = None
    generator: Callable[[Sequence[int]], Recorder] | None = None


@dataclass(frozen=True)
class Monitored:
    measured: LoadResult
    server: ProcessUsage | None = None
    backing: dict[str, ProcessUsage] = field(default_factory=dict)
    server_profile: Profile | None = None
    generator_profile: Profile | None = None
    interrupted: bool = False  # Ctrl-C after the measured phase (during the cooldown)


class LevelInterrupted(Exception):
    """Ctrl-C or SIGTERM came after a level's measured phase (its cooldown, its
    allocation pass): the level was measured, so it is kept, then the run stops."""

    def __init__(self, level: LevelResult) -> None:
        super().__init__("interrupted after the level was measured")
        self.level = level


OnInterval = Callable[[IntervalFigures], None]


class IntervalLateness:
    """How long after it closed each ``--interval`` reached this process (the live view,
    ``--prometheus``, ``--otlp``): its end on the phase's clock, from when the
    coordinator learned the measured phase started (which, told over a pipe or the
    network, makes the figure a little low, never high), to its arrival merged."""

    def __init__(self) -> None:
        self.started: float | None = None
        self.worst: float | None = None

    def phase_started(self) -> None:
        self.started = time.monotonic()

    def watching(self, deliver: OnInterval) -> OnInterval:
        def arrived(figures: IntervalFigures) -> None:
            if self.started is not None:
                late = max(0.0, time.monotonic() - (self.started + figures.end_s))
                self.worst = late if self.worst is None else max(self.worst, late)
            deliver(figures)

        return arrived


async def run_monitored(
    driver: LoadDriver,
    spec: GeneratorJob,
    server_pid: int | None,
    on_progress: Callable[[int, int], None] = lambda done, errors: None,
    backing: Sequence[BackingProcess] = (),
    recorders: CellRecorders = CellRecorders(),
    on_warning: Callable[[str], None] = lambda message: None,
    on_interval: Callable[[IntervalFigures], None] | None = None,
    on_usage: Callable[[LiveUsage], None] | None = None,
    usage_every_s: float = 1.0,
) -> Monitored:
    """Drive one level; measure the server and the backing services over its measured
    phase only.

    The monitors start when the driver reports MEASUREMENT_STARTED (warm-up
    excluded) and stop when the driver returns; without a pid there is no
    server to measure (``--target`` without ``--target-pid``). The recorders
    (``--profile``) sample the server, and the built-in generator's processes
    (``generator_pids``), over the same window. ``on_usage`` (live telemetry) reads
    the server's and the generators' usage so far every ``usage_every_s``, whatever
    the driver.
    """
    interval = spec.settings.sample_interval_s
    monitor = ProcessMonitor(server_pid, sample_interval_s=interval) if server_pid else None
    others: dict[str, ProcessMonitor] = {}
    for service in backing:
        with contextlib.suppress(psutil.Error):  # gone already: the level will say so
            others[service.name] = ProcessMonitor(
                service.pid, gil=service.gil, sample_interval_s=interval
            )
    measuring = False
    active = [r for r in (recorders.server,) if r is not None]
    generator_recorder: Recorder | None = None
    starting: list[asyncio.Task[None]] = []
    ticking: list[asyncio.Task[None]] = []
    lateness = IntervalLateness()

    def progress(done: int, errors: int) -> None:
        nonlocal measuring, generator_recorder
        if done == MEASUREMENT_STARTED:
            measuring = True
            lateness.phase_started()
            for watched in (monitor, *others.values()):
                if watched:
                    watched.start()
            pids = tuple(getattr(driver, "generator_pids", ()))
            if recorders.generator is not None and pids:
                generator_recorder = recorders.generator(pids)
                active.append(generator_recorder)
            loop = asyncio.get_running_loop()
            starting.extend(loop.create_task(recorder.start()) for recorder in active)
            if on_usage is not None:
                ticking.append(loop.create_task(
                    report_usage(on_usage, usage_every_s, monitor, driver, others)))  # fmt: skip
        else:
            on_progress(done, errors)

    try:
        if on_interval is not None and getattr(driver, "live_intervals", False):
            live = lateness.watching(on_interval)
            running = driver.run(spec, progress, on_interval=live)  # type: ignore[call-arg]
        else:
            running = driver.run(spec, progress)
        load = await unless_server_dies(running, server_pid)
    finally:
        for ticker in ticking:
            ticker.cancel()
        profiles: dict[Recorder, Profile | None] = {}
        if starting:
            await asyncio.gather(*starting)
            for recorder in active:
                profiles[recorder] = await recorder.stop()
                if recorder.failure:
                    on_warning(f"--profile: py-spy wrote no samples to {recorder.path.name}:"
                               f" {recorder.failure}")  # fmt: skip
    if lateness.worst is not None:
        load = replace(load, interval_late_s=round(lateness.worst, 3))
        if lateness.worst > spec.settings.interval_s:
            on_warning(f"live intervals reached grpcbench up to {lateness.worst:.1f} s after they"
                       f" closed, more than one --interval ({spec.settings.interval_s:g} s):"
                       " the coordinator fell behind the level")  # fmt: skip
    if not measuring:
        return Monitored(load)
    usages = {name: watched.stop() for name, watched in others.items()}
    return Monitored(
        load,
        await monitor.stop_after(spec.settings.cooldown_s) if monitor else None,
        {name: usage for name, usage in usages.items() if usage is not None},
        profiles.get(recorders.server) if recorders.server else None,
        profiles.get(generator_recorder) if generator_recorder else None,
        interrupted=monitor.interrupted if monitor else False,
    )


async def report_usage(
    on_usage: Callable[[LiveUsage], None],
    every_s: float,
    monitor: ProcessMonitor | None,
    driver: LoadDriver,
    backing: Mapping[str, ProcessMonitor] | None = None,
) -> None:
    """Every ``every_s`` until cancelled: the usage so far of the measured phase (the
    server's, the generators', and each backing service's CPU)."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    generators = CpuMeter()
    generators.read(tuple(getattr(driver, "generator_pids", ())))
    while True:
        await asyncio.sleep(every_s)
        server_cpu: float | None = None
        server_rss: int | None = None
        if monitor is not None and monitor.root.is_running():
            server_cpu, server_rss = monitor.so_far()
        pids = tuple(getattr(driver, "generator_pids", ()))
        services = tuple(
            (name, watched.so_far()[0])
            for name, watched in (backing or {}).items()
            if watched.root.is_running()
        )
        on_usage(LiveUsage(
            loop.time() - started, server_cpu, server_rss,
            generators.read(pids) if pids else None, services,
        ))  # fmt: skip


def cell_recorders(
    profile: ProfileSettings | None,
    target: Target,
    plan: LevelPlan,
    repeat: int,
    cpus: Sequence[int] = (),
) -> CellRecorders:
    """One level's recorders, their files named server-level-repeat (and .generator).
    py-spy runs on ``cpus``, the generator's: an instrument, it must not take the
    server's CPU (with no placement it runs where the kernel puts it)."""
    if profile is None:
        return CellRecorders()
    cell = re.sub(r"[^A-Za-z0-9_.=+-]+", "_", f"{target.label}-{plan.describe()}-r{repeat}")
    server = (
        Recorder(profile, (target.pid,), profile.directory / f"{cell}.folded", cpus)
        if target.pid is not None
        else None
    )
    generator = (
        (lambda pids: Recorder(profile, pids, profile.directory / f"{cell}.generator.folded", cpus))
        if profile.generator
        else None
    )
    return CellRecorders(server, generator)
