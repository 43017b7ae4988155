"""One level, measured: shared by the CLI runner, the pytest plugin and the benchmarks.

``load_spec`` is the one place that turns load settings, a level plan and a
target into the plain ``LoadSpec`` a driver runs; ``measure_level`` drives it
and measures the target's process over the measured phase only.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import psutil

from grpcbench.load.driver import MEASUREMENT_STARTED, LoadDriver
from grpcbench.load.model import LoadResult, LoadSpec
from grpcbench.monitor import ProcessMonitor, ProcessUsage
from grpcbench.plan import LevelPlan, LoadSettings
from grpcbench.preparation import BackingProcess
from grpcbench.profile.model import Profile, ProfileSettings
from grpcbench.profile.pyspy import Recorder
from grpcbench.results import LevelResult, now_iso
from grpcbench.rpc.call import MethodCall
from grpcbench.rpc.security import ChannelSecurity
from grpcbench.targets.base import Target


def load_spec(
    settings: LoadSettings,
    plan: LevelPlan,
    address: str,
    service: str,
    workload_params: Mapping[str, Any],
    call: MethodCall | None = None,
    security: ChannelSecurity | None = None,
) -> LoadSpec:
    return LoadSpec.for_level(
        address,
        service,
        plan,
        settings,
        workload_params=dict(workload_params),
        call=call.to_json() if call else None,
        security=security.to_json() if security and security.tls else None,
    )


async def run_monitored(
    driver: LoadDriver,
    spec: LoadSpec,
    server_pid: int | None,
    on_progress: Callable[[int, int], None] = lambda done, errors: None,
    backing: Sequence[BackingProcess] = (),
    recorder: Recorder | None = None,
) -> tuple[LoadResult, ProcessUsage | None, dict[str, ProcessUsage], Profile | None]:
    """Drive one level; measure the server and the backing services over its measured
    phase only.

    The monitors start when the driver reports MEASUREMENT_STARTED (warm-up
    excluded) and stop when the driver returns; without a pid there is no
    server to measure (``--target`` without ``--target-pid``). A ``recorder``
    (``--profile``) samples the server over the same window.
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
    recording: asyncio.Task[None] | None = None

    def progress(done: int, errors: int) -> None:
        nonlocal measuring, recording
        if done == MEASUREMENT_STARTED:
            measuring = True
            for watched in (monitor, *others.values()):
                if watched:
                    watched.start()
            if recorder is not None:
                recording = asyncio.get_running_loop().create_task(recorder.start())
        else:
            on_progress(done, errors)

    try:
        load = await driver.run(spec, progress)
    finally:
        profile = None
        if recording is not None and recorder is not None:
            await recording
            profile = await recorder.stop()
    if not measuring:
        return load, None, {}, None
    usages = {name: watched.stop() for name, watched in others.items()}
    return (
        load,
        monitor.stop() if monitor else None,
        {name: usage for name, usage in usages.items() if usage is not None},
        profile,
    )


async def measure_level(
    driver: LoadDriver,
    target: Target,
    plan: LevelPlan,
    settings: LoadSettings,
    *,
    scenario: str,
    service: str,
    workload_params: Mapping[str, Any],
    repeat: int = 0,
    on_progress: Callable[[int, int], None] = lambda done, errors: None,
    backing: Sequence[BackingProcess] = (),
    call: MethodCall | None = None,
    security: ChannelSecurity | None = None,
    expected: tuple[str, ...] = ("OK",),
    profile: ProfileSettings | None = None,
) -> LevelResult:
    """Run ``plan`` against ``target`` with ``driver``; the result carries all it needs.
    ``call`` replaces the service's workload (``--call``); ``security`` is TLS;
    ``expected`` the statuses that count as success (--expect-status); ``profile``
    samples the server with py-spy over the measured phase (--profile)."""
    spec = load_spec(settings, plan, target.address, service, workload_params, call, security)
    started_at = now_iso()
    recorder = None
    if profile is not None and target.pid is not None:
        cell = f"{target.label}-{plan.describe()}-r{repeat}"
        name = re.sub(r"[^A-Za-z0-9_.=+-]+", "_", cell) + ".folded"
        recorder = Recorder(profile, target.pid, profile.directory / name)
    load, usage, backing_usage, profiled = await run_monitored(
        driver, spec, target.pid, on_progress, backing, recorder
    )
    return LevelResult(
        scenario=scenario,
        server=target.label,
        plan=plan,
        load=load,
        server_usage=usage,
        started_at=started_at,
        finished_at=now_iso(),
        repeat=repeat,
        backing_usage=backing_usage,
        expected=expected,
        profile=profiled.to_json() if profiled else None,
    )
