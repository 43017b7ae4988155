"""One level, measured: shared by the CLI runner, the pytest plugin and the benchmarks.

``load_spec`` is the one place that turns load settings, a level plan and a
target into the plain ``LoadSpec`` a driver runs; ``measure_level`` drives it
and measures the target's process over the measured phase only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import psutil

from grpcbench.load.driver import MEASUREMENT_STARTED, LoadDriver
from grpcbench.load.model import LoadResult, LoadSpec
from grpcbench.monitor import ProcessMonitor, ProcessUsage
from grpcbench.plan import LevelPlan, LoadSettings
from grpcbench.preparation import BackingProcess
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
) -> tuple[LoadResult, ProcessUsage | None, dict[str, ProcessUsage]]:
    """Drive one level; measure the server and the backing services over its measured
    phase only.

    The monitors start when the driver reports MEASUREMENT_STARTED (warm-up
    excluded) and stop when the driver returns; without a pid there is no
    server to measure (``--target`` without ``--target-pid``).
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

    def progress(done: int, errors: int) -> None:
        nonlocal measuring
        if done == MEASUREMENT_STARTED:
            measuring = True
            for watched in (monitor, *others.values()):
                if watched:
                    watched.start()
        else:
            on_progress(done, errors)

    load = await driver.run(spec, progress)
    if not measuring:
        return load, None, {}
    usages = {name: watched.stop() for name, watched in others.items()}
    return (
        load,
        monitor.stop() if monitor else None,
        {name: usage for name, usage in usages.items() if usage is not None},
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
) -> LevelResult:
    """Run ``plan`` against ``target`` with ``driver``; the result carries all it needs.
    ``call`` replaces the service's workload (``--call``); ``security`` is TLS;
    ``expected`` the statuses that count as success (--expect-status)."""
    spec = load_spec(settings, plan, target.address, service, workload_params, call, security)
    started_at = now_iso()
    load, usage, backing_usage = await run_monitored(driver, spec, target.pid, on_progress, backing)
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
    )
