"""``RunContext``: what one run shares, built once (locust's ``Environment``).

The runner used to keep this in module globals (the backing services in
``preparation``) and look the service up again wherever it needed it. Now a run
holds one context: the resolved service definition, the CPU placement, its
``Preparation`` (backing services and their CPUs, what an interrupt kills),
its events and its exports. ``RunContext.build`` is the one way to make it.
"""

from __future__ import annotations

from dataclasses import dataclass

from grpcbench.events import NullEvents, RunEvents
from grpcbench.options import RunOptions
from grpcbench.plan import Placement
from grpcbench.preparation import Preparation
from grpcbench.report.exporters import Exports
from grpcbench.services.base import ServiceDefinition
from grpcbench.services.registry import load_service


@dataclass(frozen=True)
class RunContext:
    options: RunOptions
    service: ServiceDefinition
    placement: Placement
    preparation: Preparation
    events: RunEvents
    exports: Exports

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
