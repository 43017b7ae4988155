"""``RunContext``: what one run shares, built once (locust's ``Environment``).

A run holds one context, never module globals: the resolved service definition
(``load_service`` looks a service up once per process), the CPU placement, its
``Preparation`` (backing services and their CPUs, what an interrupt kills),
its events and its exports. ``RunContext.build`` is the one way to make it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from grpcbench.base.preparation import Preparation
from grpcbench.load.driver import LoadDriver
from grpcbench.model.events import NullEvents, RunEvents
from grpcbench.model.plan import LevelPlan, Placement
from grpcbench.model.results import LevelResult
from grpcbench.report.exporters import Exports
from grpcbench.rpc.call import MethodCall
from grpcbench.rpc.security import ChannelSecurity
from grpcbench.run.measure import measure_level
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

    @classmethod
    def build(cls, options: RunOptions, events: RunEvents | None = None) -> RunContext:
        """Everything a run shares; output paths are checked here, before anything starts."""
        exports = Exports(options.outputs)
        exports.check()
        return cls(
            options=options,
            service=load_service(options.scenario.service),
            placement=options.placement,
            preparation=Preparation(backing_cpus=options.placement.backing_cpus),
            events=events or NullEvents(),
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
    ) -> LevelResult:
        """One level of this run, as every caller measures it: the run's load settings,
        the level's workload params, the backing services' usage, progress as events.
        ``call`` and ``security`` are the --call and TLS resolved for ``target``."""
        options = self.options
        return await measure_level(
            driver,
            target,
            plan,
            options.load,
            scenario=options.scenario.name,
            service=options.scenario.service,
            workload_params=self.workload_params(plan),
            repeat=repeat,
            on_progress=self.events.level_progress,
            backing=tuple(self.preparation.backing),
            call=call,
            security=security,
            expected=options.expected_statuses,
            profile=options.profile,
            on_warning=self.events.warning,
            on_interval=self.events.level_interval,
        )

    def workload_params(self, plan: LevelPlan) -> Mapping[str, Any]:
        return {**self.workload_context, **self.options.workload_params(plan)}
