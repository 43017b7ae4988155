"""``RunContext``: what one run shares, built once (locust's ``Environment``).

A run holds one context, never module globals: the resolved service definition
(``load_service`` looks a service up once per process), the CPU placement, its
``Preparation`` (backing services and their CPUs, what an interrupt kills),
its events and its exports. ``RunContext.build`` is the one way to make it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from grpcbench.base.errors import OneLineError
from grpcbench.base.preparation import Preparation
from grpcbench.base.processes import BackgroundStops
from grpcbench.load.allocations import measure_allocations
from grpcbench.load.catalogue import driver_info
from grpcbench.load.driver import LoadDriver
from grpcbench.model.events import NullEvents, RunEvents
from grpcbench.model.placement import Placement
from grpcbench.model.plan import LevelPlan
from grpcbench.model.results import LevelResult, now_iso
from grpcbench.model.warmup import Warmup
from grpcbench.report.exporters import Exports
from grpcbench.rpc.call import MethodCall
from grpcbench.rpc.flow import PlannedFlow
from grpcbench.rpc.security import ChannelSecurity
from grpcbench.run.measure import LevelInterrupted, cell_recorders, generator_job, run_monitored
from grpcbench.run.options import RunOptions
from grpcbench.services.base import ServiceDefinition
from grpcbench.services.registry import load_service
from grpcbench.targets.base import Target


@dataclass(frozen=True)
class RunContext:
    options: RunOptions
    service: ServiceDefinition
    placement: Placement
    preparation: Preparation
    events: RunEvents
    exports: Exports
    # Workload params the service derives from its prepared data (set once prepared).
    workload_context: dict[str, Any] = field(default_factory=dict)
    # A server kind's stop goes on while the next starts (targets.started).
    server_stops: BackgroundStops = field(default_factory=BackgroundStops)

    @classmethod
    def build(cls, options: RunOptions, events: RunEvents | None = None) -> RunContext:
        """Everything a run shares; output paths are checked here, before anything starts."""
        exports = Exports(options.outputs)
        exports.check()
        events = events or NullEvents()
        exports.on_failure = events.warning
        return cls(
            options=options,
            service=load_service(options.scenario.service),
            placement=options.placement,
            preparation=Preparation(backing_cpus=options.placement.backing_cpus),
            events=events,
            exports=exports,
        )

    async def measure_level(
        self,
        driver: LoadDriver,
        target: Target,
        plan: LevelPlan,
        *,
        repeat: int = 0,
        call: MethodCall | None = None,
        security: ChannelSecurity | None = None,
        flow: PlannedFlow | None = None,
        warmup: Warmup | None = None,
    ) -> LevelResult:
        """One level of this run, as every caller measures it: the run's load settings,
        the level's workload params, the backing services' usage, progress as events.
        ``call`` and ``security`` are the --call and TLS resolved for ``target``, ``flow``
        the --workload with its setup()'s data for it (default: the options'); the
        server is measured over the measured phase only (``measure.run_monitored``).
        ``warmup``: the level's (``model.warmup``; default: the run's --warmup)."""
        options, settings = self.options, self.options.settings
        warmup = warmup or Warmup.asked(settings)
        spec = generator_job(
            warmup.applied_to(settings), plan, target.address, options.scenario.service,
            self.workload_params(plan), call, security, flow or options.flow,
            options.scenario.level_scenarios,
        )  # fmt: skip
        started_at = now_iso()
        monitored = await run_monitored(
            driver, spec, target.pid, self.events.level_progress, tuple(self.preparation.backing),
            cell_recorders(options.profile, target, plan, repeat, settings.client_cpus),
            self.events.warning, self.events.level_interval if settings.interval_s else None,
            self.events.level_usage if self.events.wants_usage else None,
            settings.interval_s or 1.0,
        )  # fmt: skip
        allocations = None
        interrupted = monitored.interrupted
        if settings.client_allocations and driver_info(driver.name).runs_here and not interrupted:
            try:
                allocations = await measure_allocations(spec.to_json(), settings.client_allocations)
            except OneLineError as error:
                self.events.warning(str(error))
            except asyncio.CancelledError:  # Ctrl-C in the allocation pass: keep the level
                interrupted = True
        level = LevelResult(
            scenario=options.scenario.name,
            server=target.label,
            plan=plan,
            measured=monitored.measured,
            server_usage=monitored.server,
            started_at=started_at,
            finished_at=now_iso(),
            repeat=repeat,
            backing_usage=monitored.backing,
            expected=options.expected_statuses,
            profile=monitored.server_profile.to_json() if monitored.server_profile else None,
            generator_profile=(
                monitored.generator_profile.to_json() if monitored.generator_profile else None
            ),
            client_allocations=allocations,
            warmup=warmup,
        )
        if interrupted:
            raise LevelInterrupted(level)
        return level

    def workload_params(self, plan: LevelPlan) -> Mapping[str, Any]:
        return {**self.workload_context, **self.options.workload_params(plan)}
